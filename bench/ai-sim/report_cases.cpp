#include "report_cases.hpp"

#include <stdexcept>

#include <nlohmann/json.hpp>

#include "report_limits.hpp"

namespace slurm_ai::sim {

std::size_t CaseResult::variant(const Variant &v) const {
    for (std::size_t i = 0; i < spec.variants.size(); ++i)
        if (spec.variants[i] == v)
            return i;
    throw std::out_of_range("scenario " + spec.name + " has no such variant");
}

int CaseResult::elastic_jobs(const Variant &v) const {
    int n = 0;
    for (const auto &s : prepared[variant(v)])
        n += s.jobs.elastic;
    return n;
}

int CaseResult::could_be_elastic() const {
    int n = 0;
    for (const auto &s : prepared.front())
        n += s.jobs.could_be_elastic;
    return n;
}

std::vector<Variant> full_matrix() {
    std::vector<Variant> out;
    for (bool contention : {false, true})
        for (double share : {0.0, kAssumedElasticShare, 1.0})
            out.push_back({contention, share});
    return out;
}

std::vector<Variant> headline_only() {
    return {kHeadline};
}

std::optional<InputError> plan_case(CaseResult &c, const CaseSpec &spec, const SimOptions &base,
                                    std::vector<std::function<void()>> &tasks) {
    c.spec = spec;
    const std::size_t nv = spec.variants.size(), np = spec.policies.size(),
                      nk = spec.parts.size();
    c.prepared.clear();
    c.prepared.resize(nv);
    c.rows.assign(nv, std::vector<Summary>(np));
    c.runs.assign(nv, std::vector<RunResult>(np));
    c.figures.assign(nv, std::vector<std::vector<Summary>>(np, std::vector<Summary>(nk)));
    for (std::size_t v = 0; v < nv; ++v)
        for (const auto &part : spec.parts) {
            ScenarioSpec s = part;
            s.jobs.elastic_share = spec.variants[v].elastic_share;
            auto prepared = prepare(s);
            if (!prepared)
                return prepared.error();
            c.prepared[v].push_back(std::move(prepared).value());
        }
    for (std::size_t v = 0; v < nv; ++v)
        for (std::size_t p = 0; p < np; ++p)
            for (std::size_t k = 0; k < nk; ++k)
                tasks.push_back([&c, base, v, p, k] {
                    SimOptions o = base;
                    o.contention = c.spec.variants[v].contention;
                    const Scenario &s = c.prepared[v][k];
                    RunResult r = simulate(s.cluster, s.jobs.jobs, s.steps, o, c.spec.policies[p]);
                    c.figures[v][p][k] = summarize(r, s.cluster.max_gpus_per_host);
                    if (k == 0)
                        c.runs[v][p] = std::move(r);
                });
    return std::nullopt;
}

void finish_case(CaseResult &c) {
    for (std::size_t v = 0; v < c.figures.size(); ++v)
        for (std::size_t p = 0; p < c.figures[v].size(); ++p)
            c.rows[v][p] = c.figures[v][p].size() == 1 ? c.figures[v][p].front()
                                                       : mean_of(c.figures[v][p]);
}

nlohmann::json summary_json(const Summary &s) {
    return {{"policy", s.policy},
            {"jobs", s.jobs},
            {"finished", s.finished},
            {"mean_jct_h", s.mean_jct_h},
            {"p99_jct_h", s.p99_jct_h},
            {"mean_wait_h", s.mean_wait_h},
            {"p99_wait_h", s.p99_wait_h},
            {"gpu_util", s.utilisation},
            {"useful_util", s.useful},
            {"placement_efficiency", s.efficiency},
            {"slowdown", s.slowdown},
            {"comm_share", s.comm_share},
            {"split_share", s.split_share},
            {"fragmentation", s.fragmentation},
            {"contention_slowdown", s.contention},
            {"elastic_jobs", s.elastic_jobs},
            {"grows", s.grows},
            {"shrinks", s.shrinks},
            {"lost_gpu_h", s.lost_gpu_h_total()}};
}

nlohmann::json case_json(const CaseResult &c) {
    nlohmann::json variants = nlohmann::json::array();
    for (std::size_t v = 0; v < c.spec.variants.size(); ++v) {
        nlohmann::json policies = nlohmann::json::array();
        for (const auto &row : c.rows[v])
            policies.push_back(summary_json(row));
        nlohmann::json variant{{"contention", c.spec.variants[v].contention},
                               {"elastic_share", c.spec.variants[v].elastic_share},
                               {"elastic_jobs", c.elastic_jobs(c.spec.variants[v])},
                               {"policies", std::move(policies)}};
        if (auto limits = limits_of(c.rows[v]))
            variant.update(limits_json(*limits));
        variants.push_back(std::move(variant));
    }
    const std::size_t h = c.variant(kHeadline);
    nlohmann::json out{{"name", c.spec.name},
                       {"title", c.spec.title},
                       {"contention", kHeadline.contention},
                       {"elastic_share", kHeadline.elastic_share},
                       {"elastic_jobs", c.elastic_jobs(kHeadline)},
                       {"could_be_elastic", c.could_be_elastic()},
                       {"policies", variants[h]["policies"]}};
    for (const char *key : {"best_slurm", "ideal", "gap_closed"})
        if (variants[h].contains(key))
            out[key] = variants[h][key];
    out["variants"] = std::move(variants);
    return out;
}

}  // namespace slurm_ai::sim
