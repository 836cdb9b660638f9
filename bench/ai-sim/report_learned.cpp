#include "report_learned.hpp"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace slurm_ai::sim {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kPrefix = "placement-model-";
constexpr std::string_view kWithout = "-nosrr";
constexpr double kGoal = 0.05;  // the target: 5% below the engine at every size

double change(const PlaceJudgement &j) {
    return j.engine_mean_jct_h > 0 ? j.mean_jct_h / j.engine_mean_jct_h - 1 : 0;
}

bool meets_goal(const LearnedPlacementInfo &i) {
    return !i.judged.empty() &&
           std::all_of(i.judged.begin(), i.judged.end(),
                       [](const PlaceJudgement &j) { return change(j) <= -kGoal; });
}

}  // namespace

Parsed<std::vector<LearnedPlacementFile>> load_learned_placement(const std::string &dir) {
    std::vector<LearnedPlacementFile> out;
    std::error_code ec;
    for (const auto &entry : fs::directory_iterator(dir, ec)) {
        std::string name = entry.path().filename().string();
        if (!name.starts_with(kPrefix) || !name.ends_with(".json"))
            continue;
        auto model = LearnedPlacement::load(entry.path().string());
        if (!model)
            return model.error();
        std::string scenario = name.substr(kPrefix.size(), name.size() - kPrefix.size() - 5);
        if (scenario.ends_with(kWithout))
            scenario.resize(scenario.size() - kWithout.size());
        out.push_back({scenario, name, std::move(model).value()});
    }
    if (ec)
        return InputError{"directory", dir, "a readable directory of model files", "", 0};
    std::sort(out.begin(), out.end(), [](const auto &a, const auto &b) {
        return std::pair(a.scenario, -a.model.info.regularizer) <
               std::pair(b.scenario, -b.model.info.regularizer);
    });
    return out;
}

std::string learned_placement_section(const std::vector<LearnedPlacementFile> &files) {
    if (files.empty())
        return "No learned placement scorer was found in contrib/slurm.conf.d.\n";
    std::string out =
        "| scenario | SRR weight | trained at (hosts) | judged at (hosts) | held-out windows | "
        "learned mean JCT h | engine mean JCT h | change |\n"
        "|---|---:|---:|---:|---:|---:|---:|---:|\n";
    for (const auto &f : files)
        for (const auto &j : f.model.info.judged)
            out += fmt::format("| {} | {:g} | {} | {} | {} | {:.3f} | {:.3f} | {:+.1f}% |\n",
                               f.scenario, f.model.info.regularizer, f.model.info.hosts, j.hosts,
                               j.windows, j.mean_jct_h, j.engine_mean_jct_h, 100 * change(j));
    out += "\n";
    for (const auto &f : files)
        out += fmt::format(
            "- `{}` ({}; {} decisions; {}): {} the engine at every judged size{}.\n", f.file,
            f.model.info.scenario, f.model.info.decisions, f.model.info.method,
            f.model.info.beats_engine() ? "beats" : "does not beat",
            meets_goal(f.model.info) ? ", at least 5% below it everywhere"
                                     : ", and is not 5% below it everywhere (the goal)");
    return out;
}

nlohmann::json learned_placement_json(const std::vector<LearnedPlacementFile> &files) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto &f : files) {
        nlohmann::json judged = nlohmann::json::array();
        for (const auto &j : f.model.info.judged)
            judged.push_back({{"hosts", j.hosts},
                              {"windows", j.windows},
                              {"mean_jct_h", j.mean_jct_h},
                              {"engine_mean_jct_h", j.engine_mean_jct_h},
                              {"change", change(j)}});
        out.push_back({{"scenario", f.scenario},
                       {"file", f.file},
                       {"regularizer", f.model.info.regularizer},
                       {"trained_hosts", f.model.info.hosts},
                       {"judged", judged},
                       {"beats_engine", f.model.info.beats_engine()},
                       {"five_percent_below_engine", meets_goal(f.model.info)}});
    }
    return out;
}

}  // namespace slurm_ai::sim
