// A simulation's inputs from files and options, prepared once and shared by the runs of
// every policy: the cluster, the jobs of the trace slice, and the step-time rule.
#pragma once

#include <string>
#include <vector>

#include "sim_cluster.hpp"
#include "simulator.hpp"
#include "step_times.hpp"

namespace slurm_ai::sim {

// ../shared/data beside the source tree.
const std::string &data_dir();

struct ScenarioSpec {
    std::string trace;      // default: comm-measurements/philly.csv
    std::string durations;  // trace to draw missing durations from; default: philly.csv
    std::string start;      // "YYYY-MM-DD" for a dated trace, else seconds; "": its start
    double days = 1;        // window length
    int overlay = 1;        // consecutive windows replayed on one
    int max_jobs = 0;
    double duration_scale = 1;   // every duration multiplied by this
    ClusterSpec cluster;         // default nodes: hwloc/nvidiaDGX2.xml; default fabric: the shape
                                 // of fabric/X5.topofile
    std::string measurements;    // default: comm-measurements
    bool measured_steps = true;  // false: every job from the cost model
    double comm_share = 0;       // 0: from the measurements
    JobOptions jobs;
};

// Fills the defaults above into a spec.
ScenarioSpec with_defaults(ScenarioSpec spec);

struct Scenario {
    SimCluster cluster;
    StepTimes steps;
    Jobs jobs;
    std::vector<std::string> lines;  // what was simulated, for the output
};

Parsed<Scenario> prepare(const ScenarioSpec &spec);

}  // namespace slurm_ai::sim
