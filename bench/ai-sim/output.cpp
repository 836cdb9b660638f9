#include "output.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "slurm_ai/common/file_io.hpp"

namespace slurm_ai::sim {
namespace {

// Rows of cells, aligned for the terminal or as a markdown table (first column left,
// the others right).
std::string table(const std::vector<std::vector<std::string>> &rows, bool markdown) {
    std::vector<std::size_t> width;
    for (const auto &r : rows)
        for (std::size_t i = 0; i < r.size(); ++i) {
            if (width.size() <= i)
                width.push_back(0);
            width[i] = std::max(width[i], r[i].size());
        }
    std::string out;
    for (std::size_t k = 0; k < rows.size(); ++k) {
        const auto &r = rows[k];
        for (std::size_t i = 0; i < r.size(); ++i) {
            if (markdown)
                out += "| " + r[i] + " ";
            else if (i == 0)
                out += fmt::format("{:<{}}", r[i], width[i]);
            else
                out += fmt::format("  {:>{}}", r[i], width[i]);
        }
        out += markdown ? "|\n" : "\n";
        if (markdown && k == 0) {
            for (std::size_t i = 0; i < r.size(); ++i)
                out += i == 0 ? "|---" : "|---:";
            out += "|\n";
        }
    }
    return out;
}

std::string pct(double x) {
    return fmt::format("{:.1f}", 100 * x);
}

}  // namespace

std::string results_table(const std::vector<Summary> &rows, bool markdown) {
    std::vector<std::vector<std::string>> t{
        {"policy", "jobs", "done", "mean JCT h", "p99 JCT h", "mean wait h", "p99 wait h", "comm %",
         "placement eff", "slowdown", "split %", "GPU util %", "useful %", "frag %"}};
    for (const auto &s : rows)
        t.push_back({s.policy, std::to_string(s.jobs), std::to_string(s.finished),
                     fmt::format("{:.3f}", s.mean_jct_h), fmt::format("{:.2f}", s.p99_jct_h),
                     fmt::format("{:.3f}", s.mean_wait_h), fmt::format("{:.2f}", s.p99_wait_h),
                     pct(s.comm_share), fmt::format("{:.3f}", s.efficiency),
                     fmt::format("{:.3f}", s.slowdown), pct(s.split_share), pct(s.utilisation),
                     pct(s.useful), pct(s.fragmentation)});
    return table(t, markdown);
}

std::string failures_table(const std::vector<Summary> &rows, bool markdown) {
    bool any = false;
    for (const auto &s : rows)
        any = any || s.failures > 0;
    if (!any)
        return {};
    std::vector<std::vector<std::string>> t{{"policy", "node failures", "stopping a job",
                                             "stopping >1 job", "jobs stopped", "lost GPU-h",
                                             "one GPU", "cyclic", "tree-like"}};
    for (const auto &s : rows)
        t.push_back({s.policy, std::to_string(s.failures), std::to_string(s.failures_stopping_jobs),
                     std::to_string(s.failures_stopping_several), std::to_string(s.jobs_stopped),
                     fmt::format("{:.1f}", s.lost_gpu_h_total()),
                     fmt::format("{:.1f}", s.lost_gpu_h[0]), fmt::format("{:.1f}", s.lost_gpu_h[1]),
                     fmt::format("{:.1f}", s.lost_gpu_h[2])});
    return table(t, markdown);
}

std::string sources_table(const std::vector<Summary> &rows, bool markdown) {
    std::vector<std::vector<std::string>> t{
        {"policy", "measured", "measured, nearest shape", "cost model"}};
    for (const auto &s : rows)
        t.push_back({s.policy, std::to_string(s.sources[0]), std::to_string(s.sources[1]),
                     std::to_string(s.sources[2])});
    return table(t, markdown);
}

std::string paired_table(const std::string &policy, const std::array<PairedTally, kRegimes> &t,
                         bool markdown) {
    std::vector<std::vector<std::string>> rows{
        {"regime", "decisions", "placed otherwise", "wins", "losses", "ties", "win rate",
         "95% interval", "lost GPU-h, " + policy, "engine-norisk"}};
    for (int r : {1, 2, 0}) {
        const PairedTally &x = t[static_cast<std::size_t>(r)];
        auto [lo, hi] = x.interval();
        rows.push_back({to_string(static_cast<Regime>(r)), std::to_string(x.decisions),
                        std::to_string(x.differ), std::to_string(x.wins),
                        std::to_string(x.losses), std::to_string(x.ties),
                        x.win_rate() ? pct(*x.win_rate()) + "%" : "-",
                        x.comparisons() ? pct(lo) + "-" + pct(hi) + "%" : "-",
                        fmt::format("{:.1f}", x.lost_aware_gpu_h),
                        fmt::format("{:.1f}", x.lost_blind_gpu_h)});
    }
    return table(rows, markdown);
}

std::string suite_line(const SimOptions &o, const Jobs &jobs) {
    const auto &u = o.suite;
    return fmt::format(
        "contention between jobs: {}; elastic jobs: {} of the {} that can be (--ai-elastic=n/2:2n); "
        "the suite: engine placement, {}, {}, backfill reservations by {}",
        o.contention ? "on (shared uplinks)" : "off", jobs.elastic, jobs.could_be_elastic,
        u.elastic ? fmt::format("ai-elasticd's {} rule every {:g} s (grow cooldown {:g} s{})",
                                to_string(*u.elastic), u.elastic_interval_s, u.grow_cooldown_s,
                                *u.elastic == ElasticRule::kGoodput
                                    ? fmt::format(", min gain {:g} GPU per GPU", u.min_gain)
                                    : "")
                  : "no ai-elasticd",
        u.recovery == Recovery::kSuite
            ? fmt::format("ai-recover (back in {:g} s, nothing lost)", o.recovery.suite_s)
            : fmt::format("Slurm's requeue (back in {:g} s, from the last periodic checkpoint)",
                          o.recovery.slurm_s),
        u.plan_with_engine ? "the engine" : "tree best fit");
}

std::string jobs_csv(const std::vector<SimJob> &jobs, const std::vector<RunResult> &runs) {
    std::string out = "policy,job,gpus,submit_s,start_s,end_s,hosts,first_nodes,step_s,ideal_step_s,contention\n";
    for (const auto &r : runs)
        for (std::size_t j = 0; j < r.jobs.size() && j < jobs.size(); ++j) {
            const JobResult &x = r.jobs[j];
            out += fmt::format("{},{},{},{:.0f},{:.0f},{:.0f},{},\"{}\",{:.6g},{:.6g},{:.4f}\n", r.policy, j,
                               x.gpus, x.submit_s, x.start_s, x.end_s, x.hosts, x.first_nodes,
                               x.step.step_s, x.step.ideal_step_s, x.contention);
        }
    return out;
}

std::optional<std::string> write_output(const std::string &path, std::string_view text) {
    try {
        write_output_file(path, text);
    } catch (const std::runtime_error &e) {
        return e.what();
    }
    return std::nullopt;
}

}  // namespace slurm_ai::sim
