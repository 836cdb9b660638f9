// The scenarios of `ai-sim report`, each simulated as a matrix: contention between jobs
// off and on, times the share of elastic jobs (none, the share assumed, all that can
// be), times the policies. The names are stable: `ai-sim report --json` keys its figures
// by them (philly-gpus, philly-whole-nodes, pollux, rail-h100, nvl72).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "metrics.hpp"
#include "scenario.hpp"

namespace slurm_ai::sim {

// The share of the jobs that can be elastic that the evaluation assumes are submitted
// elastic (Philly and the Pollux workloads record none): half, between the 0% and 100%
// also shown.
inline constexpr double kAssumedElasticShare = 0.5;

struct Variant {
    bool contention = false;
    double elastic_share = 0;
    bool operator==(const Variant &) const = default;
};

// The variant the headline figures come from: the suite's full behaviour, in a world
// where jobs contend for uplinks and the assumed share of them is elastic.
inline constexpr Variant kHeadline{true, kAssumedElasticShare};

struct CaseSpec {
    std::string name;   // stable
    std::string title;  // for the page
    std::vector<ScenarioSpec> parts;  // several: workloads whose figures are averaged
    std::vector<std::string> policies;
    std::vector<Variant> variants;  // the matrix; the headline among them
};

struct CaseResult {
    CaseSpec spec;
    std::vector<std::vector<Scenario>> prepared;  // [variant][part]: the elastic share
                                                   // changes the jobs
    // Per variant, per policy: the figures (the mean over the parts).
    std::vector<std::vector<Summary>> rows;
    // Per variant, per policy: the first part's run (charts).
    std::vector<std::vector<RunResult>> runs;
    // Per variant, per policy, per part: each run's figures.
    std::vector<std::vector<std::vector<Summary>>> figures;

    std::size_t variant(const Variant &v) const;  // index in spec.variants; throws if absent
    const std::vector<Summary> &at(const Variant &v) const { return rows[variant(v)]; }
    int elastic_jobs(const Variant &v) const;     // over all parts
    int could_be_elastic() const;                 // over all parts
};

// The full matrix, and only the headline variant.
std::vector<Variant> full_matrix();
std::vector<Variant> headline_only();

// Prepares the scenarios of `spec` (an error names the file and field) and adds the
// tasks that simulate them to `tasks`, writing into `c`, which must outlive them.
std::optional<InputError> plan_case(CaseResult &c, const CaseSpec &spec, const SimOptions &base,
                                    std::vector<std::function<void()>> &tasks);
// Fills rows once every task has run.
void finish_case(CaseResult &c);

// One scenario's figures for --json: its headline variant's policies and every variant.
nlohmann::json case_json(const CaseResult &c);
nlohmann::json summary_json(const Summary &s);

}  // namespace slurm_ai::sim
