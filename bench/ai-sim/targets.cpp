#include "targets.hpp"

#include <algorithm>
#include <fstream>
#include <functional>
#include <iostream>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report_cases.hpp"
#include "report_limits.hpp"
#include "task_pool.hpp"

namespace slurm_ai::sim {
namespace {

std::vector<std::string> judged_policies() {
    std::vector<std::string> out = slurm_policies();
    out.insert(out.end(), {"engine", "suite", "ideal"});
    return out;
}

double percent(const nlohmann::json &x) {
    return 100 * x.get<double>();
}

// One verdict of placement_targets' JSON, in words.
std::string verdict_line(const nlohmann::json &t) {
    const std::string target = t.at("target");
    std::string figure;
    if (target == "gap_closed")
        figure = t.at("gap_closed").is_null()
                     ? "no gap (the ideal not 0.5% below Slurm's best): the engine must be "
                       "within 0.5% of Slurm's best"
                     : fmt::format("{:.2f} of the gap closed", t.at("gap_closed").get<double>());
    else if (target == "engine_parity")
        figure = fmt::format("mean JCT {:+.1f}%, p99 {:+.1f}% against {}",
                             percent(t.at("mean_jct_change")), percent(t.at("p99_jct_change")),
                             t.at("best_slurm").get<std::string>());
    else
        figure = fmt::format("mean JCT {:+.1f}% against {} (at most {:+.0f}%)",
                             percent(t.at("mean_jct_change")),
                             t.at("best_slurm").get<std::string>(), percent(t.at("bound")));
    return fmt::format("{} (contention {}, {:.0f}% elastic): {}: {}", target,
                       t.at("contention").get<bool>() ? "on" : "off",
                       percent(t.at("elastic_share")), figure,
                       t.at("met").get<bool>() ? "met" : "MISSED");
}

}  // namespace

int judge_targets(const ScenarioSpec &spec, const SimOptions &sim, const TargetsOptions &o) {
    std::vector<ScenarioSpec> parts;
    for (const auto &trace : o.traces) {
        parts.push_back(spec);
        parts.back().trace = trace;
    }
    if (parts.empty())
        parts.push_back(spec);
    CaseResult c;
    std::vector<std::function<void()>> tasks;
    if (auto err = plan_case(c, {o.name, "the scenario given", parts, judged_policies(),
                                 full_matrix()},
                             sim, tasks)) {
        std::cerr << "ai-sim: " << err->message() << '\n';
        return 1;
    }
    run_tasks(tasks, std::max(o.threads, 1));
    finish_case(c);
    for (const auto &line : limits_section({&c}))
        std::cout << line << '\n';
    nlohmann::json verdicts = nlohmann::json::array();
    placement_targets({&c},
                      o.fabric ? std::vector<std::string>{o.name} : std::vector<std::string>{},
                      verdicts);
    std::cout << '\n';
    int met = 0;
    for (const auto &t : verdicts) {
        met += t.at("met").get<bool>() ? 1 : 0;
        std::cout << verdict_line(t) << '\n';
    }
    std::cout << fmt::format("{} of {} verdicts met\n", met, verdicts.size());
    if (!o.json.empty()) {
        std::ofstream out(o.json, std::ios::binary);
        out << nlohmann::json{{"scenario", case_json(c)}, {"placement_targets", verdicts}}.dump(2)
            << '\n';
        out.close();
        if (!out) {
            std::cerr << "ai-sim: cannot write " << o.json << '\n';
            return 1;
        }
    }
    return 0;
}

}  // namespace slurm_ai::sim
