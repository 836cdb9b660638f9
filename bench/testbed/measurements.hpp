// The measured training jobs the tools evaluate the cost model and the placements with
// (ai-fit fits the model to them, ai-sim takes step times from them): one directory per
// model holding the Pollux traces placements.csv (placement, local_bsz, step_time,
// sync_time) and, optionally, scalability.csv (num_nodes, num_replicas, local_bsz,
// step_time, sync_time); see ../shared/data/comm-measurements/README.md.
//
// The cost model predicts the communication of one step, which does not depend on the batch
// size, so rows that differ only in local_bsz are averaged into one configuration. The
// measured sync time is the part of the all-reduce that backward computation did not hide,
// and larger batches hide more; the smallest batch's sync time, the least hidden, is kept
// beside the mean.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "slurm_ai/common/input_error.hpp"
#include "slurm_ai/placement/shape_profile.hpp"

namespace slurm_ai::testbed {

struct Configuration {
    std::string model;               // the directory's name, e.g. "bert"
    std::string placement;           // GPUs per node, one digit per node, e.g. "1114"
    std::vector<int> gpus_per_node;  // the same as numbers, in node order
    std::string source;              // "placements.csv" or "scalability.csv"
    int rows = 0;                    // measurements averaged (one per local_bsz)
    double sync_s = 0;               // mean measured gradient-sync time per step
    double step_s = 0;               // mean measured step time
    double smallest_bsz = 0;         // the smallest local_bsz measured
    double smallest_bsz_sync_s = 0;  // sync time at that batch size

    int nodes() const { return static_cast<int>(gpus_per_node.size()); }
    int gpus() const;
    bool even() const;  // the same number of GPUs on every node
};

// One row of a file as measured, before any averaging.
struct Measurement {
    std::string model;
    std::string source;              // "placements.csv" or "scalability.csv"
    std::vector<int> gpus_per_node;  // as in Configuration
    double local_bsz = 0;
    double step_s = 0;
    double sync_s = 0;
};

struct Measurements {
    std::vector<std::string> models;     // sorted
    std::vector<Configuration> configs;  // by model, then file, then first appearance
    std::vector<Measurement> rows;       // every row, in the same order of files
};

// Reads every <dir>/<model>/placements.csv (directories without one, such as workloads/,
// are skipped) and the scalability.csv beside it. A scalability row gives only node and
// replica counts: its replicas are spread as evenly as the counts allow, the first nodes
// taking one more. Errors name the file, line and column.
Parsed<Measurements> load_measurements(const std::string &dir);

// Model names separated by commas ("bert, ncf"), each one of m.models; an error naming
// `field` and the first name that is not one.
Parsed<std::vector<std::string>> model_list(const Measurements &m, std::string_view text,
                                            std::string_view field);

// The select plugin's ShapeProfile from these measurements, for hosts of gpus_per_host
// GPUs: each model's configurations of one GPU count compared with its fastest (the mean
// step over the batch sizes measured; orders of one shape together), and each shape's
// ratio the largest over the models that measured it (the one it suits least: the job's
// own model is not known when it is placed). Models named in `without` are left
// out (to judge the profile on models it has not seen); configurations with more GPUs on
// a node than gpus_per_host too.
ShapeProfile measured_shapes(const Measurements &m, int gpus_per_host,
                             const std::vector<std::string> &without = {});

// Splits "num_replicas" GPUs over "num_nodes" nodes as load_measurements does.
std::vector<int> spread_evenly(int nodes, int replicas);

}  // namespace slurm_ai::testbed
