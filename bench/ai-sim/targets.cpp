#include "targets.hpp"

#include <algorithm>
#include <functional>
#include <iostream>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report_cases.hpp"
#include "report_limits.hpp"
#include "output.hpp"
#include "task_pool.hpp"

namespace slurm_ai::sim {

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
    if (o.json.empty())
        return 0;
    if (auto err = write_output(
            o.json,
            nlohmann::json{{"scenario", case_json(c)}, {"placement_targets", verdicts}}.dump(2) +
                '\n')) {
        std::cerr << "ai-sim: " << *err << '\n';
        return 1;
    }
    return 0;
}

}  // namespace slurm_ai::sim
