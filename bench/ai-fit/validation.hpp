// ai-fit's validation of the cost model against measured sync times: build the testbed's
// cluster, cost every measured configuration as a data-parallel all-reduce, fit the few
// constants on a deterministic share of the configurations and score the rest, next to a
// naive baseline.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "slurm_ai/common/input_error.hpp"
#include "slurm_ai/placement/cost_model.hpp"
#include "statistics.hpp"
#include "testbed/measurements.hpp"

namespace slurm_ai::fit {

using testbed::Configuration;
using testbed::Measurements;

struct FitOptions {
    std::string node_file;        // node topology of every host (hwloc or NCCL XML)
    int hosts = 16;               // hosts under the one switch
    double link_gbit = 50;        // each host's link, Gb/s
    double train_share = 0.5;     // share of each model's configurations fitted on
    std::uint64_t seed = 1;       // changes which configurations are fitted on
    std::string algo;             // all-reduce algorithm: "" (auto), ring, hierarchical, tree
    bool smallest_batch = false;  // fit and score the smallest local_bsz's sync time
                                  // instead of the mean over local_bsz
};

// Gradient bytes per step that a model starts from (4 bytes per published parameter); 0
// for a model not listed, which then starts from 100 MB with no pull towards it.
double published_gradient_bytes(const std::string &model);

struct Prediction {
    Configuration config;
    bool train = false;
    double measured_s = 0;  // the sync time fitted and scored (see smallest_batch)
    double cost_s = 0;      // the cost model with the fitted constants
    double naive_s = 0;     // the baseline: per-model constant x nodes
    std::string algorithm;  // what the cost model chose
};

struct ModelFigures {
    std::string model;  // "all" for every model together
    std::size_t train = 0, test = 0;
    double prior_bytes = 0;       // published_gradient_bytes, 0 when none
    double fitted_bytes = 0;      // the fitted gradient size
    double naive_s_per_node = 0;  // the baseline's fitted constant
    ErrorFigures cost, naive;     // on the held-out configurations
    // Median |measured - m| / m (percent) over placements that another placement repeats
    // with its nodes in a different order, m the mean of those placements ("1322" and
    // "1232"). On one switch the cost model gives such placements the same time, so this
    // spread, of all configurations, is a floor under its error.
    double reorder_spread = 0;
    std::size_t reordered = 0;  // configurations that spread is taken over
};

struct ClassFigures {
    std::string name;  // e.g. "2 nodes, uneven"
    ErrorFigures cost, naive;
};

struct FitReport {
    FitOptions options;
    std::string data_dir;
    CostConstants constants;           // fitted (alpha_intra_s stays at its default)
    std::size_t excluded = 0;          // single-GPU configurations: nothing to predict
    double train_rms_log_error = 0;    // of the cost model on the fitted configurations
    int evaluations = 0;               // objective evaluations the optimiser made
    std::vector<ModelFigures> models;  // per model, then "all"
    std::vector<ClassFigures> classes;
    std::vector<Prediction> predictions;
};

// Fits and scores. Fails on a node file that does not load or cannot hold a measured
// placement, or on a fabric that cannot be built.
Parsed<FitReport> run_fit(const Measurements &data, const FitOptions &options);

}  // namespace slurm_ai::fit
