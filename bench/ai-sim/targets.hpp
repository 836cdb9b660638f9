// `ai-sim targets`: issue 32's placement targets judged on one scenario the caller chooses
// (a window, a size or a fabric that `ai-sim report` does not run), with the report's own
// code: the same matrix of variants (contention off and on, nothing, half and every
// elastic-capable job elastic), Slurm's four policies, the engine, the suite and the
// ideal, and the same verdicts (report_limits.hpp).
#pragma once

#include <string>
#include <vector>

#include "simulator.hpp"
#include "scenario.hpp"

namespace slurm_ai::sim {

struct TargetsOptions {
    std::string name = "scenario";  // what the verdicts call it
    // Several traces judged as one scenario, each with the scenario's other options and
    // their figures averaged, as the report's Pollux workloads (empty: the spec's trace).
    std::vector<std::string> traces;
    bool fabric = false;  // also the fabrics' targets: the engine 10%, the suite 20% below
    std::string json;     // also write the figures and verdicts here (empty: not)
    int threads = 2;      // simulations at once
};

// Prints, per variant, best_slurm, the engine, the suite, the ideal and the gaps closed,
// then every verdict and how many were met. 0 once judged (met or not); 1 with a message
// on stderr when the scenario cannot be prepared or the JSON cannot be written.
int judge_targets(const ScenarioSpec &spec, const SimOptions &sim, const TargetsOptions &o);

}  // namespace slurm_ai::sim
