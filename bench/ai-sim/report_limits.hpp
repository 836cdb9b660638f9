// What placement can give, per scenario and variant of `ai-sim report`: the best of
// Slurm's own policies (best_slurm), the same jobs with every job at the speed of its ideal
// placement and no contention (the policy "ideal": the physical limit of placement), and
// how much of the gap between the two the engine and the suite close (gap_closed), with
// the placement targets judged on them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "metrics.hpp"
#include "report_cases.hpp"

namespace slurm_ai::sim {

// Slurm's policies best_slurm is the best of, by mean JCT (those a scenario runs).
const std::vector<std::string> &slurm_policies();
// What a scenario runs to be judged on every target: Slurm's policies, then the engine,
// the suite and the ideal.
const std::vector<std::string> &judged_policies();

struct Limits {
    Summary best_slurm;  // its policy named in best_slurm.policy
    Summary ideal;
    // (best_slurm - x) / (best_slurm - ideal) in mean JCT, for x = the engine and the suite;
    // none where Slurm's best is within a tie (0.5%) of the ideal: no gap to close.
    std::optional<double> gap_closed_engine, gap_closed_suite;
};

// None when the rows lack a Slurm policy, "ideal" or "engine".
std::optional<Limits> limits_of(const std::vector<Summary> &rows);
// {"best_slurm": {"policy", "mean_jct_h", "p99_jct_h"}, "ideal": {"mean_jct_h",
// "p99_jct_h"}, "gap_closed": {"engine", "suite"}} (null where none).
nlohmann::json limits_json(const Limits &l);

// The placement targets (one row each, as the page's targets table shows them):
//   - the engine alone (0% elastic, contention off and on) never worse than best_slurm by
//     more than 0.5% in mean JCT, and its p99 JCT not worse than best_slurm's (ties: 0.5%);
//   - in the scenarios named by `fabric_cases`, the engine alone at least 10% below
//     best_slurm (contention on, 0% elastic) and the suite (headline variant) 20% below;
//   - the engine's gap_closed at least 0.5 in every variant with multi-GPU jobs (where
//     there is no gap, the engine within a tie of best_slurm).
struct PlacementTarget {
    std::string what, figure;
    bool met = false;
};
std::vector<PlacementTarget> placement_targets(const std::vector<const CaseResult *> &cases,
                                               const std::vector<std::string> &fabric_cases,
                                               nlohmann::json &json);
// One verdict of placement_targets' JSON in words: the target, the variant, its figure
// and "met" or "MISSED".
std::string verdict_line(const nlohmann::json &verdict);

// The page's section: per scenario and variant, best_slurm, the engine, the suite, the
// ideal and the gaps closed.
std::vector<std::string> limits_section(const std::vector<const CaseResult *> &cases);

// Job by job, two policies on the same jobs of one variant: per size class (GPUs), the
// jobs, mean queueing delay, run time and slowdown (step over ideal step, with the
// contention met), and mean JCT under each; then how many multi-GPU jobs waited longer
// and ran longer under `b`.
std::vector<std::string> job_by_job_section(const CaseResult &c, const Variant &v,
                                            const std::string &a, const std::string &b);

}  // namespace slurm_ai::sim
