// The evaluation of docs/evaluation.md. Scenarios:
//   1. one day of the Philly trace (four consecutive days laid over one, for load) on 64
//      DGX-2 nodes under a fabric in the shape of the X5 dump; jobs ask --gpus=G;
//   2. the same with whole-node requests (-N n --gpus-per-node);
//   3. the eight Pollux workloads on the measurement testbed (16 g4dn.12xlarge nodes under
//      one switch), step times from the measurements;
//   4. scenario 1 with node failures, over several seeds: lost GPU-hours, failures that stop
//      several jobs, and the engine with its failure-risk term against the engine without
//      it, per job-graph regime;
//   5. scale: one day of trace on a 10,000-GPU cluster, time and memory per policy.
// The simulations run `threads` at a time; the scale runs last, alone, one at a time.
#include "report.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>

#include <fmt/format.h>

#include "metrics.hpp"
#include "output.hpp"
#include "scenario.hpp"
#include "svg_chart.hpp"
#include "task_pool.hpp"

namespace slurm_ai::sim {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kPolicies{"slurm-default", "tree-bestfit", "engine",
                                         "engine-norisk"};

SimOptions base_options() {
    SimOptions o;
    o.engine = deterministic_engine_options();
    return o;
}

ScenarioSpec philly_spec(bool quick, RequestStyle request) {
    ScenarioSpec s;
    s.start = "2017-10-10";
    s.overlay = quick ? 1 : 4;
    s.max_jobs = quick ? 300 : 0;
    s.cluster.hosts = quick ? 16 : 64;
    s.cluster.host_gbps = 800;
    s.jobs.request = request;
    return with_defaults(s);
}

ScenarioSpec pollux_spec(int workload) {
    ScenarioSpec s;
    s.trace = fmt::format("{}/comm-measurements/workloads/workload-{}.csv", data_dir(), workload);
    s.cluster.nodes.push_back(std::string(SLURM_AI_SOURCE_DIR) +
                              "/tests/inputs/g4dn-12xlarge-topo.xml");
    s = with_defaults(s);
    s.cluster.shape_of.clear();
    s.cluster.shape_map.clear();
    s.cluster.hosts = 16;
    s.cluster.host_gbps = 50;
    s.duration_scale = 1.0 / 30;
    return s;
}

// Section 6: a cluster of today's fabrics, in the shape of a real fabric file (repeated to
// `hosts`), with hand-written node files of the machines built on it (tests/inputs).
const std::vector<std::string> kFabricPolicies{"slurm-default", "tree-bestfit", "block-bestfit",
                                               "block-segment", "engine"};
struct FabricCase {
    std::string title, shape, node;
    int hosts = 0, overlay = 1;
};
std::vector<FabricCase> fabric_cases(bool quick) {
    const std::string h100 = "a rail-optimized H100 cluster (example.out, DGX H100)";
    const std::string nvl = "GB200 NVL72 racks (nvl72.yaml, GB200 trays)";
    if (quick)
        return {{h100, "fabric/topograph/example.out", "dgx-h100-topo.xml", 16, 1},
                {nvl, "fabric/topograph/nvl72.yaml", "gb200-tray-topo.xml", 36, 1}};
    return {{h100, "fabric/topograph/example.out", "dgx-h100-topo.xml", 64, 2},
            {h100, "fabric/topograph/example.out", "dgx-h100-topo.xml", 256, 8},
            {h100, "fabric/topograph/example.out", "dgx-h100-topo.xml", 1024, 32},
            {nvl, "fabric/topograph/nvl72.yaml", "gb200-tray-topo.xml", 144, 4},
            {nvl, "fabric/topograph/nvl72.yaml", "gb200-tray-topo.xml", 576, 16}};
}
ScenarioSpec fabric_spec(bool quick, const FabricCase &f) {
    ScenarioSpec s;
    s.start = "2017-10-10";
    s.overlay = f.overlay;
    s.max_jobs = quick ? 300 : 0;
    s.cluster.shape_of = data_dir() + "/" + f.shape;
    s.cluster.nodes.push_back(std::string(SLURM_AI_SOURCE_DIR) + "/tests/inputs/" + f.node);
    s.cluster.hosts = f.hosts;
    s.cluster.host_gbps = 400;  // one ConnectX-7 (NDR) per NIC
    s.jobs.request = RequestStyle::kFlexible;
    return with_defaults(s);
}

FailureParams failure_params() {
    FailureParams f;
    f.node_rate_per_day = 0.05;
    f.flaky_share = 0.1;
    f.flaky_factor = 10;
    f.repair_s = 4 * 3600;
    f.checkpoint_s = 3600;
    return f;
}

std::string relative_link(const std::string &markdown, const std::string &dir) {
    auto base = fs::weakly_canonical(fs::absolute(markdown)).parent_path();
    return fs::relative(fs::weakly_canonical(fs::absolute(dir)), base).generic_string();
}

std::optional<std::string> write_file(const fs::path &path, const std::string &text) {
    std::ofstream out(path, std::ios::binary);
    out << text;
    out.close();
    if (!out)
        return "cannot write " + path.string();
    return std::nullopt;
}

// "3.28 (-7.6% against tree-bestfit)" style comparisons, lower or higher better.
std::string change(double engine, double other) {
    if (other == 0)
        return engine == 0 ? "equal" : "n/a";
    return fmt::format("{:+.1f}%", 100 * (engine - other) / std::abs(other));
}

struct Verdict {
    std::string scenario, metric, other;
    double engine = 0, baseline = 0;
    bool lower_better = true;
    double tolerance = 0;  // absolute differences up to this are ties too
    // Relative differences under 0.5% count as ties.
    int sign() const {
        double d = engine - baseline;
        double scale = std::max(std::abs(baseline), 1e-12);
        if (std::abs(d) / scale < 0.005 || std::abs(d) <= tolerance)
            return 0;
        return (d < 0) == lower_better ? 1 : -1;
    }
};

// A copy: callers pass the name as a temporary, which a returned reference must not seem
// to depend on (gcc 14's -Wdangling-reference).
Summary by_policy(const std::vector<Summary> &rows, const std::string &p) {
    return *std::find_if(rows.begin(), rows.end(), [&](const Summary &s) { return s.policy == p; });
}

void add_verdicts(std::vector<Verdict> &out, const std::string &scenario,
                  const std::vector<Summary> &rows,
                  const std::vector<std::string> &others = {"tree-bestfit", "slurm-default"}) {
    const Summary &e = by_policy(rows, "engine");
    for (const auto &other : others) {
        const Summary &b = by_policy(rows, other);
        // Shares within 0.1 point of each other are ties.
        out.push_back({scenario, "mean JCT (h)", other, e.mean_jct_h, b.mean_jct_h, true, 0});
        out.push_back({scenario, "p99 JCT (h)", other, e.p99_jct_h, b.p99_jct_h, true, 0});
        out.push_back(
            {scenario, "mean queueing delay (h)", other, e.mean_wait_h, b.mean_wait_h, true, 0});
        out.push_back(
            {scenario, "placement efficiency", other, e.efficiency, b.efficiency, false, 0});
        out.push_back(
            {scenario, "GPU utilisation", other, e.utilisation, b.utilisation, false, 1e-3});
        out.push_back({scenario, "useful utilisation", other, e.useful, b.useful, false, 1e-3});
        out.push_back(
            {scenario, "fragmentation", other, e.fragmentation, b.fragmentation, true, 1e-3});
    }
}

std::vector<Summary> summaries(const std::vector<RunResult> &runs, int max_gpus) {
    std::vector<Summary> out;
    for (const auto &r : runs)
        out.push_back(summarize(r, max_gpus));
    return out;
}

Series jct_cdf(const RunResult &r) {
    std::vector<double> v;
    for (const auto &j : r.jobs)
        if (j.end_s >= 0)
            v.push_back(std::max((j.end_s - j.submit_s) / 3600, 1e-3));
    std::sort(v.begin(), v.end());
    Series s{r.policy, {}};
    // At most ~400 points: every k-th job, and the last.
    std::size_t k = std::max<std::size_t>(1, v.size() / 400);
    for (std::size_t i = 0; i < v.size(); i += k)
        s.points.push_back({v[i], static_cast<double>(i + 1) / static_cast<double>(v.size())});
    if (!v.empty())
        s.points.push_back({v.back(), 1.0});
    return s;
}

Series busy_series(const RunResult &r, double hours) {
    Series s{r.policy, {}};
    for (const auto &x : r.samples)
        if ((x.t - r.window_start_s) / 3600 <= hours)
            s.points.push_back({(x.t - r.window_start_s) / 3600,
                                100.0 * x.busy_gpus / std::max(r.cluster_gpus, 1)});
    return s;
}

}  // namespace

int write_report(const ReportOptions &o) {
    const auto t_start = std::chrono::steady_clock::now();
    std::error_code ec;
    fs::create_directories(o.image_dir, ec);
    if (ec) {
        std::cerr << "ai-sim: cannot create " << o.image_dir << ": " << ec.message() << '\n';
        return 1;
    }
    const std::string link =
        o.image_link.empty() ? relative_link(o.markdown, o.image_dir) : o.image_link;
    auto fail = [](const InputError &e) {
        std::cerr << "ai-sim: " << e.message() << '\n';
        return 1;
    };

    // Inputs.
    auto flexible = prepare(philly_spec(o.quick, RequestStyle::kFlexible));
    if (!flexible)
        return fail(flexible.error());
    auto packed = prepare(philly_spec(o.quick, RequestStyle::kPacked));
    if (!packed)
        return fail(packed.error());
    const int workloads = o.quick ? 2 : 8;
    std::vector<Scenario> pollux;
    for (int w = 1; w <= workloads; ++w) {
        auto s = prepare(pollux_spec(w));
        if (!s)
            return fail(s.error());
        pollux.push_back(std::move(s).value());
    }
    const int seeds = std::max(o.seeds, 1);
    // Scenario 1 again with other communication shares of a cost-model job's ideal step.
    const std::vector<double> shares{0.1, 0.25};
    std::vector<Scenario> sensitivity;
    for (double share : shares) {
        ScenarioSpec spec = philly_spec(o.quick, RequestStyle::kFlexible);
        spec.comm_share = share;
        auto s = prepare(spec);
        if (!s)
            return fail(s.error());
        sensitivity.push_back(std::move(s).value());
    }

    const auto cases = fabric_cases(o.quick);
    std::vector<Scenario> fabrics;
    for (const auto &f : cases) {
        auto sc = prepare(fabric_spec(o.quick, f));
        if (!sc)
            return fail(sc.error());
        fabrics.push_back(std::move(sc).value());
    }

    // Simulations.
    const SimOptions plain = base_options();
    std::vector<std::vector<RunResult>> runs_fabric(fabrics.size(),
                                                    std::vector<RunResult>(kFabricPolicies.size()));
    std::vector<RunResult> runs_flexible(kPolicies.size()), runs_packed(kPolicies.size());
    std::vector<std::vector<RunResult>> runs_pollux(pollux.size(),
                                                    std::vector<RunResult>(kPolicies.size()));
    std::vector<std::vector<RunResult>> runs_fail(static_cast<std::size_t>(seeds),
                                                  std::vector<RunResult>(kPolicies.size()));
    std::vector<std::vector<RunResult>> runs_share(shares.size(),
                                                   std::vector<RunResult>(kPolicies.size()));
    std::vector<SimOptions> fail_options;
    for (int s = 0; s < seeds; ++s) {
        SimOptions f = base_options();
        f.seed = static_cast<std::uint64_t>(s + 1);
        f.failures = failure_params();
        fail_options.push_back(f);
    }
    std::vector<std::function<void()>> tasks;
    for (std::size_t p = 0; p < kPolicies.size(); ++p) {
        tasks.push_back([&, p] {
            runs_flexible[p] = simulate(flexible->cluster, flexible->jobs.jobs, flexible->steps,
                                        plain, kPolicies[p]);
        });
        tasks.push_back([&, p] {
            runs_packed[p] =
                simulate(packed->cluster, packed->jobs.jobs, packed->steps, plain, kPolicies[p]);
        });
        for (std::size_t w = 0; w < pollux.size(); ++w)
            tasks.push_back([&, p, w] {
                runs_pollux[w][p] = simulate(pollux[w].cluster, pollux[w].jobs.jobs,
                                             pollux[w].steps, plain, kPolicies[p]);
            });
        for (std::size_t k = 0; k < sensitivity.size() && kPolicies[p] != "engine-norisk"; ++k)
            tasks.push_back([&, p, k] {
                runs_share[k][p] = simulate(sensitivity[k].cluster, sensitivity[k].jobs.jobs,
                                            sensitivity[k].steps, plain, kPolicies[p]);
            });
        for (std::size_t s = 0; s < fail_options.size(); ++s)
            tasks.push_back([&, p, s] {
                runs_fail[s][p] = simulate(flexible->cluster, flexible->jobs.jobs, flexible->steps,
                                           fail_options[s], kPolicies[p]);
            });
    }
    for (std::size_t f = 0; f < fabrics.size(); ++f)
        for (std::size_t p = 0; p < kFabricPolicies.size(); ++p)
            tasks.push_back([&, f, p] {
                runs_fabric[f][p] = simulate(fabrics[f].cluster, fabrics[f].jobs.jobs,
                                             fabrics[f].steps, plain, kFabricPolicies[p]);
            });
    run_tasks(tasks, std::max(o.threads, 1));
    const double sim_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();

    // Scale: one policy at a time, nothing else running.
    ScenarioSpec big = philly_spec(false, RequestStyle::kFlexible);
    big.cluster.hosts = o.quick ? 64 : 625;
    big.overlay = o.quick ? 4 : 40;
    auto scale = prepare(big);
    if (!scale)
        return fail(scale.error());
    struct Timing {
        std::string policy;
        double wall_s = 0;
        long rss_mib = 0, placements = 0;
        Summary summary;
    };
    std::vector<Timing> timings;
    for (const auto &p : kPolicies) {
        auto t0 = std::chrono::steady_clock::now();
        RunResult r = simulate(scale->cluster, scale->jobs.jobs, scale->steps, plain, p);
        double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        timings.push_back({p, wall, peak_rss_mib(), r.placements_tried,
                           summarize(r, scale->cluster.max_gpus_per_host)});
    }

    // Figures.
    const auto sum_flexible = summaries(runs_flexible, flexible->cluster.max_gpus_per_host);
    const auto sum_packed = summaries(runs_packed, packed->cluster.max_gpus_per_host);
    std::vector<std::vector<Summary>> sum_pollux, sum_fail;
    for (const auto &w : runs_pollux)
        sum_pollux.push_back(summaries(w, 4));
    for (const auto &s : runs_fail)
        sum_fail.push_back(summaries(s, flexible->cluster.max_gpus_per_host));

    const int hosts = flexible->cluster.graph.host_count();
    LineChart cdf{fmt::format("Philly, {} DGX-2, --gpus=G: job completion time", hosts),
                  "completion time (h, log)",
                  "share of jobs",
                  true,
                  true,
                  {}};
    for (const auto &r : runs_flexible)
        cdf.series.push_back(jct_cdf(r));
    LineChart busy{fmt::format("Philly, {} DGX-2, --gpus=G: GPUs allocated", hosts),
                   "hours after the first submission",
                   "GPUs allocated (%)",
                   false,
                   false,
                   {}};
    for (const auto &r : runs_flexible)
        busy.series.push_back(busy_series(r, 48));
    BarChart pollux_bars{
        "Pollux workloads w1-w8 on 16 g4dn nodes: mean JCT", "mean JCT (h)", kPolicies, {}};
    for (std::size_t w = 0; w < sum_pollux.size(); ++w) {
        BarChart::Group g{fmt::format("w{}", w + 1), {}};
        for (const auto &s : sum_pollux[w])
            g.values.push_back(s.mean_jct_h);
        pollux_bars.groups.push_back(g);
    }
    BarChart lost_bars{
        "Failures (mean over seeds): lost GPU-hours by job graph", "lost GPU-hours", kPolicies, {}};
    for (int r = 0; r < kRegimes; ++r) {
        BarChart::Group g{to_string(static_cast<Regime>(r)), {}};
        for (std::size_t p = 0; p < kPolicies.size(); ++p) {
            double sum = 0;
            for (const auto &s : sum_fail)
                sum += s[p].lost_gpu_h[static_cast<std::size_t>(r)];
            g.values.push_back(sum / seeds);
        }
        lost_bars.groups.push_back(g);
    }
    const std::vector<std::pair<std::string, std::string>> figures{
        {"sim-jct-cdf.svg", render(cdf)},
        {"sim-gpus-allocated.svg", render(busy)},
        {"sim-pollux-jct.svg", render(pollux_bars)},
        {"sim-failures-lost.svg", render(lost_bars)}};
    for (const auto &[name, svg] : figures)
        if (auto err = write_file(fs::path(o.image_dir) / name, svg)) {
            std::cerr << "ai-sim: " << *err << '\n';
            return 1;
        }

    // The page.
    std::string md;
    auto line = [&](const std::string &s = "") { md += s + "\n"; };
    line("# Evaluation: the suite's placements against Slurm's, in numbers");
    line();
    line("This page is written by `ai-sim report` (bench/ai-sim); every figure on it is what that");
    line(
        "run gave on this source tree and ../shared/data, the same on every run of the same build");
    line("except the timings (the next line and the scale section). To regenerate it and its");
    line("figures in docs/img (`bench/ai-sim/evaluate.sh` builds ai-sim first, then runs this):");
    line();
    line("    build/bin/ai-sim report --out docs/evaluation.md --img docs/img");
    line();
    line(fmt::format("This run: {} simulations in {:.0f} s on {} thread{}, then the scale runs.{}",
                     tasks.size(), sim_s, o.threads, o.threads == 1 ? "" : "s",
                     o.quick ? " **Quick mode: small scenarios, for tests only.**" : ""));
    line();
    line("## How the simulator works");
    line();
    line("- **Same engine.** Every placement is a call of `PlacementEngine::place` of");
    line("  `slurm_ai::placement`, the function the select plugin calls inside slurmctld, on the");
    line("  free view the plugin builds (free GPUs of the nodes that are up; the failure history");
    line("  it keeps, a count per node halving every week). Policies: `slurm-default` (Slurm");
    line("  without topology: nodes in order, lowest GPUs), `tree-bestfit` (Slurm's topology/tree");
    line("  best fit), `engine` and `engine-norisk` (the suite, with and without its failure-risk");
    line("  term). The engine's time budget is raised so that its local search always converges:");
    line("  a run does not depend on the machine's speed.");
    line("- **Slurm's scheduling,** with sched/backfill's defaults of Slurm 22.05: the main");
    line("  scheduler starts pending jobs in priority (submission) order after every event and");
    line("  stops at the first that does not fit; backfill every 30 s takes the first 500 pending");
    line("  jobs, finds each the earliest start within one day assuming running jobs end at their");
    line(
        "  time limits, starts those that fit now without touching the nodes reserved for the "
        "jobs");
    line("  before them, and reserves whole nodes for the others, as Slurm's backfill does. Time");
    line("  limits are twice the recorded duration; jobs are not killed at their limit. As in the");
    line("  select plugin, which places run-now tests with the engine and leaves backfill's");
    line("  will-run tests to cons_tres, the engine's reservations are planned with Slurm's");
    line("  topology best fit; the baselines plan with themselves.");
    line("- **Step times.** " + flexible->steps.rule());
    line(
        "- **Failures** (section 4): nodes fail as Poisson processes, a tenth of them ten times "
        "as");
    line(
        "  often; a failed node is down for 4 h; a failure stops every job with a GPU on the "
        "node,");
    line("  which is requeued at its old priority and restarts from its last hourly checkpoint,");
    line(
        "  losing the GPU-hours since. The failure times depend on the seed only, so every policy");
    line("  meets the same failures.");
    line("- **Metrics.** JCT: completion minus submission. Queueing delay: first start minus");
    line("  submission. Over the jobs with several GPUs, at their last placement: communication");
    line("  share of the step time, placement efficiency (communication on the ideal placement /");
    line("  communication on this one, 1 at best), slowdown (step time / ideal step time) and the");
    line(
        "  share split over more nodes than the fewest that hold them. GPU utilisation: allocated");
    line("  GPU-time over the GPU-time between the first and the last submission; useful");
    line("  utilisation: the same with each job's GPUs divided by its slowdown (a job slowed down");
    line("  by its placement holds GPUs longer, which raises utilisation and not work done).");
    line("  Fragmentation:");
    line("  free GPUs (on nodes that are up) that no pending job could use now, averaged over");
    line(
        "  5-minute samples taken while jobs wait, as a share of all GPUs; a job could use a free");
    line(
        "  GPU if the free GPUs hold it (enough nodes with its per-node count free, or enough "
        "free");
    line("  GPUs for a `--gpus=G` job).");
    line();

    std::vector<Verdict> verdicts;
    auto scenario_lines = [&](const Scenario &s) {
        for (const auto &l : s.lines)
            line("- " + l);
        line();
    };

    line(fmt::format("## 1. Philly on {} DGX-2 nodes, jobs asking `--gpus=G`", hosts));
    line();
    scenario_lines(flexible.value());
    md += results_table(sum_flexible, true);
    line();
    line(fmt::format("![JCT CDF]({}/sim-jct-cdf.svg)", link));
    line(fmt::format("![GPUs allocated]({}/sim-gpus-allocated.svg)", link));
    line();
    {
        const auto &e = by_policy(sum_flexible, "engine");
        const auto &t = by_policy(sum_flexible, "tree-bestfit");
        const auto &d = by_policy(sum_flexible, "slurm-default");
        line(fmt::format(
            "Against tree best fit the engine changes mean JCT by {}, p99 JCT by {}, mean queueing "
            "delay by {}; its placements are {:.3f} efficient against {:.3f} ({:.1f}% of multi-GPU "
            "jobs split over more nodes than needed, against {:.1f}%). Against Slurm's default "
            "order: mean JCT {}, efficiency {:.3f} against {:.3f}.",
            change(e.mean_jct_h, t.mean_jct_h), change(e.p99_jct_h, t.p99_jct_h),
            change(e.mean_wait_h, t.mean_wait_h), e.efficiency, t.efficiency, 100 * e.split_share,
            100 * t.split_share, change(e.mean_jct_h, d.mean_jct_h), e.efficiency, d.efficiency));
        line();
        line(fmt::format(
            "GPU utilisation counts allocated GPUs: {:.1f}% for the engine, {:.1f}% for tree best "
            "fit and {:.1f}% for Slurm's default order, whose jobs run {:.2f} times slower than on "
            "their ideal placement (the engine's {:.2f}) and so hold their GPUs longer. Counting "
            "each job's GPUs divided by its slowdown, the useful utilisation is {:.1f}%, {:.1f}% "
            "and {:.1f}%.",
            100 * e.utilisation, 100 * t.utilisation, 100 * d.utilisation, d.slowdown, e.slowdown,
            100 * e.useful, 100 * t.useful, 100 * d.useful));
        line();
        add_verdicts(verdicts, "1. Philly, --gpus=G", sum_flexible);
    }
    line("How much this depends on the communication share of a step (on the ideal placement),");
    line("which Philly does not record: mean JCT (h) with other shares, everything else alike.");
    line();
    line(
        "| communication share | slurm-default | tree-bestfit | engine | engine against "
        "tree-bestfit |");
    line("|---|---:|---:|---:|---:|");
    {
        auto row = [&](double share, const std::vector<double> &jct) {
            md += fmt::format("| {:.0f}% | {:.3f} | {:.3f} | {:.3f} | {} |\n", 100 * share, jct[0],
                              jct[1], jct[2], change(jct[2], jct[1]));
        };
        for (std::size_t k = 0; k < shares.size(); ++k) {
            std::vector<double> jct;
            for (std::size_t p = 0; p < 3; ++p)
                jct.push_back(summarize(runs_share[k][p], 16).mean_jct_h);
            row(shares[k], jct);
        }
        row(flexible->steps.comm_share(),
            {sum_flexible[0].mean_jct_h, sum_flexible[1].mean_jct_h, sum_flexible[2].mean_jct_h});
    }
    line();

    line("## 2. The same jobs asking for whole nodes (`-N n --gpus-per-node`)");
    line();
    line("Jobs up to 16 GPUs ask for one node, larger ones for the fewest nodes with an even");
    line("split. Everything else as in section 1.");
    line();
    md += results_table(sum_packed, true);
    line();
    {
        const auto &e = by_policy(sum_packed, "engine");
        const auto &t = by_policy(sum_packed, "tree-bestfit");
        line(fmt::format(
            "With fixed node shapes there is little to choose: inside a DGX-2 every GPU pair is "
            "linked alike through the NVSwitches, and multi-node jobs take whole nodes. The engine "
            "changes mean JCT by {} and fragmentation from {:.1f}% to {:.1f}% against tree best "
            "fit.",
            change(e.mean_jct_h, t.mean_jct_h), 100 * t.fragmentation, 100 * e.fragmentation));
        line();
        add_verdicts(verdicts, "2. Philly, whole nodes", sum_packed);
    }

    line("## 3. Pollux workloads on the measurement testbed (measured step times)");
    line();
    line(fmt::format(
        "The {} workloads of ../shared/data/comm-measurements/workloads (160 jobs each,",
        workloads));
    line("submitted over 8 hours) on the cluster the measurements were taken on: 16 hosts of 4");
    line("T4 GPUs (tests/inputs/g4dn-12xlarge-topo.xml) under one switch at 50 Gb/s. Jobs ask");
    line("`--gpus=G` for their replica count. Workload 1, as simulated:");
    line();
    scenario_lines(pollux.front());
    line(
        "The workloads carry no duration: each job draws one from the Philly jobs of its GPU "
        "count,");
    line(
        "and all are scaled by 1/30 so that a workload offers about as much work as the testbed "
        "can");
    line("do in a day or two (unscaled, one workload would keep it busy for weeks).");
    line();
    {
        std::vector<Summary> mean_rows;
        for (std::size_t p = 0; p < kPolicies.size(); ++p) {
            Summary m;
            m.policy = kPolicies[p];
            const double n = static_cast<double>(sum_pollux.size());
            for (const auto &w : sum_pollux) {
                const Summary &x = w[p];
                m.jobs += x.jobs;
                m.finished += x.finished;
                m.mean_jct_h += x.mean_jct_h / n;
                m.p99_jct_h += x.p99_jct_h / n;
                m.mean_wait_h += x.mean_wait_h / n;
                m.p99_wait_h += x.p99_wait_h / n;
                m.comm_share += x.comm_share / n;
                m.efficiency += x.efficiency / n;
                m.slowdown += x.slowdown / n;
                m.split_share += x.split_share / n;
                m.utilisation += x.utilisation / n;
                m.useful += x.useful / n;
                m.fragmentation += x.fragmentation / n;
                for (std::size_t k = 0; k < 3; ++k)
                    m.sources[k] += x.sources[k];
            }
            mean_rows.push_back(m);
        }
        line("Mean over the workloads of each figure (jobs and done: totals):");
        line();
        md += results_table(mean_rows, true);
        line();
        line("Where the step times came from (jobs, all workloads):");
        line();
        md += sources_table(mean_rows, true);
        line();
        line("Mean JCT (h) per workload:");
        line();
        md += "| workload |";
        for (const auto &p : kPolicies)
            md += " " + p + " |";
        md += "\n|---|";
        for (std::size_t p = 0; p < kPolicies.size(); ++p)
            md += "---:|";
        md += "\n";
        // Engine against each baseline, workload by workload: better, tied, worse.
        std::map<std::string, std::array<int, 3>> tally;
        bool alike = true;  // the engine and tree best fit gave the same figures everywhere
        for (std::size_t w = 0; w < sum_pollux.size(); ++w) {
            md += fmt::format("| workload-{} |", w + 1);
            for (const auto &s : sum_pollux[w])
                md += fmt::format(" {:.3f} |", s.mean_jct_h);
            md += "\n";
            const Summary &e = by_policy(sum_pollux[w], "engine");
            for (const char *other : {"tree-bestfit", "slurm-default"}) {
                const Summary &b = by_policy(sum_pollux[w], other);
                Verdict v{"", "", other, e.mean_jct_h, b.mean_jct_h, true, 0};
                ++tally[other][static_cast<std::size_t>(1 - v.sign())];
            }
            const Summary &t = by_policy(sum_pollux[w], "tree-bestfit");
            alike = alike && e.mean_jct_h == t.mean_jct_h && e.efficiency == t.efficiency &&
                    e.split_share == t.split_share;
        }
        line();
        line(fmt::format("![Pollux mean JCT]({}/sim-pollux-jct.svg)", link));
        line();
        for (const char *other : {"tree-bestfit", "slurm-default"}) {
            const auto &c = tally[other];
            line(
                fmt::format("- Mean JCT per workload, engine against {}: better in {}, within 0.5% "
                            "in {}, worse in {} of {}.",
                            other, c[0], c[1], c[2], sum_pollux.size()));
        }
        if (alike)
            line("- The engine places these jobs as tree best fit does: every figure is equal.");
        {
            const auto &e = by_policy(mean_rows, "engine");
            const auto &d = by_policy(mean_rows, "slurm-default");
            line(fmt::format(
                "- Slurm's default order splits {:.0f}% of the multi-GPU jobs over more nodes than "
                "needed (the engine {:.0f}%), and its placements are {:.3f} efficient against "
                "{:.3f}; on this testbed that costs a mean slowdown of {:.3f} against {:.3f}; its "
                "mean queueing delay differs from the engine's by {}.",
                100 * d.split_share, 100 * e.split_share, d.efficiency, e.efficiency, d.slowdown,
                e.slowdown, change(d.mean_wait_h, e.mean_wait_h)));
        }
        line();
        add_verdicts(verdicts, "3. Pollux, measured", mean_rows);
    }

    line("## 4. Failures: geometry-aware against geometry-blind placement");
    line();
    {
        const auto f = failure_params();
        line(fmt::format(
            "Scenario 1 with node failures: {:g} per node per day, {:.0f}% of the nodes {:g} times "
            "as "
            "often, down {:g} h, checkpoints every {:g} h; seeds 1 to {}. The engine with its "
            "failure-risk term (`engine`: it knows each job's execution graph and the nodes' "
            "failure history) is the geometry-aware placement, `engine-norisk` the geometry-blind "
            "one. Job graphs: *cyclic* (all-reduce rings over several GPUs), *tree-like* "
            "(pipelines and parameter-server trees) and single-GPU jobs.",
            f.node_rate_per_day, 100 * f.flaky_share, f.flaky_factor, f.repair_s / 3600,
            f.checkpoint_s / 3600, seeds));
        line();
        std::vector<Summary> mean_rows;
        for (std::size_t p = 0; p < kPolicies.size(); ++p) {
            Summary m;
            m.policy = kPolicies[p];
            for (const auto &s : sum_fail) {
                const Summary &x = s[p];
                m.failures += x.failures;
                m.failures_stopping_jobs += x.failures_stopping_jobs;
                m.failures_stopping_several += x.failures_stopping_several;
                m.jobs_stopped += x.jobs_stopped;
                for (std::size_t r = 0; r < kRegimes; ++r)
                    m.lost_gpu_h[r] += x.lost_gpu_h[r] / seeds;
                m.mean_jct_h += x.mean_jct_h / seeds;
            }
            mean_rows.push_back(m);
        }
        line(
            fmt::format("Totals over the {} seeds (failures, jobs stopped) and means per seed "
                        "(lost GPU-hours):",
                        seeds));
        line();
        md += failures_table(mean_rows, true);
        line();
        md +=
            "| policy | failures stopping >1 job / stopping any | mean JCT h (mean over seeds) |\n";
        md += "|---|---:|---:|\n";
        for (const auto &m : mean_rows)
            md += fmt::format("| {} | {:.1f}% | {:.3f} |\n", m.policy,
                              m.failures_stopping_jobs
                                  ? 100.0 * m.failures_stopping_several / m.failures_stopping_jobs
                                  : 0.0,
                              m.mean_jct_h);
        line();
        line(fmt::format("![Lost GPU-hours]({}/sim-failures-lost.svg)", link));
        line();
        line(
            "Geometry-aware (`engine`) against geometry-blind (`engine-norisk`), seed by seed: a "
            "win");
        line("is fewer GPU-hours lost by the jobs of that graph regime.");
        line();
        line("| regime | wins | ties | losses | win rate | mean lost GPU-h, aware | blind |");
        line("|---|---:|---:|---:|---:|---:|---:|");
        const std::size_t ie = 2, in = 3;  // engine, engine-norisk in kPolicies
        for (int r : {1, 2, 0}) {
            int w = 0, t = 0, l = 0;
            double a = 0, b = 0;
            for (const auto &s : sum_fail) {
                double x = s[ie].lost_gpu_h[static_cast<std::size_t>(r)];
                double y = s[in].lost_gpu_h[static_cast<std::size_t>(r)];
                a += x / seeds;
                b += y / seeds;
                if (std::abs(x - y) < 1e-9)
                    ++t;
                else if (x < y)
                    ++w;
                else
                    ++l;
            }
            md += fmt::format("| {} | {} | {} | {} | {:.0f}% | {:.1f} | {:.1f} |\n",
                              to_string(static_cast<Regime>(r)), w, t, l, 100.0 * w / seeds, a, b);
        }
        line();
        line("The number of node failures differs between policies because a run lasts until its");
        line("last job ends, and failures keep coming until then.");
        line();
        {
            const auto &e = by_policy(mean_rows, "engine");
            for (const char *other : {"engine-norisk", "tree-bestfit", "slurm-default"}) {
                const auto &b = by_policy(mean_rows, other);
                verdicts.push_back({"4. failures", "lost GPU-hours per seed", other,
                                    e.lost_gpu_h_total(), b.lost_gpu_h_total(), true, 0});
                auto several = [](const Summary &x) {
                    return x.failures_stopping_jobs
                               ? static_cast<double>(x.failures_stopping_several) /
                                     x.failures_stopping_jobs
                               : 0.0;
                };
                verdicts.push_back({"4. failures",
                                    "share of job-stopping failures that stop >1 job", other,
                                    several(e), several(b), true, 1e-3});
            }
        }
        line("The two runs of a seed diverge from the first placement that differs, so a seed's");
        line("difference mixes the risk term's effect with the noise of a different schedule; the");
        line("win rate over seeds, not one seed, is the figure to read.");
        line();
    }

    line("## 5. Scale: one day of trace on a 10,000-GPU cluster");
    line();
    scenario_lines(scale.value());
    line("Each policy simulated alone, one thread, on this machine (timings vary between runs;");
    line("`build/bin/ai-sim bench` prints the same). Peak RSS is the process's, which also holds");
    line("every earlier simulation of this report; `ai-sim bench` alone reports its own.");
    line();
    line(
        "| policy | jobs | done | mean JCT h | GPU util % | placements tried | wall s | vs "
        "slurm-default | peak RSS MiB |");
    line("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (const auto &t : timings)
        md += fmt::format("| {} | {} | {} | {:.3f} | {:.1f} | {} | {:.2f} | {:.2f}x | {} |\n",
                          t.policy, t.summary.jobs, t.summary.finished, t.summary.mean_jct_h,
                          100 * t.summary.utilisation, t.placements, t.wall_s,
                          t.wall_s / timings.front().wall_s, t.rss_mib);
    line();

    line("## 6. The fabrics of 2026: rails and NVLink domains");
    line();
    line("Philly's jobs (`--gpus=G`, as section 1) on clusters in the shape of two real fabric");
    line("files, repeated to the size given: the NDR fabric of DGX hosts in example.out (4 rails:");
    line("each host's NIC k on leaf k of its scalable unit) with DGX H100 nodes, and the GB200");
    line("NVL72 racks of nvl72.yaml (a leaf and an NVLink domain of 18 trays per rack) with GB200");
    line("trays. The node files are written by hand from the vendors' published layouts");
    line(
        "(tests/inputs/dgx-h100-topo.xml, gb200-tray-topo.xml): no export of either machine is in");
    line("../shared/data. Host links 400 Gb/s. Besides tree best fit, Slurm's topology/block is a");
    line(
        "baseline: `block-bestfit` places on the fabric's blocks (here the NVLink domains, else "
        "the");
    line("leaves) as topology/block does, `block-segment` as with `--segment`. Jobs here carry");
    line("no tensor-parallel groups (Philly has no model), so `block-segment` takes each job's");
    line("share of a block as its segment.");
    line();
    for (std::size_t f = 0; f < fabrics.size(); ++f) {
        const auto sums = summaries(runs_fabric[f], fabrics[f].cluster.max_gpus_per_host);
        line(
            fmt::format("### {} hosts: {}", fabrics[f].cluster.graph.host_count(), cases[f].title));
        line();
        scenario_lines(fabrics[f]);
        md += results_table(sums, true);
        line();
        const auto &e = by_policy(sums, "engine");
        const auto &t = by_policy(sums, "tree-bestfit");
        const auto &b = by_policy(sums, "block-bestfit");
        line(fmt::format(
            "Against tree best fit the engine changes mean JCT by {} (efficiency {:.3f} against "
            "{:.3f}); against topology/block by {} ({:.3f}).",
            change(e.mean_jct_h, t.mean_jct_h), e.efficiency, t.efficiency,
            change(e.mean_jct_h, b.mean_jct_h), b.efficiency));
        line();
        add_verdicts(verdicts,
                     fmt::format("6. {} hosts, {}", fabrics[f].cluster.graph.host_count(),
                                 cases[f].shape.substr(cases[f].shape.rfind('/') + 1)),
                     sums, {"tree-bestfit", "block-bestfit", "block-segment", "slurm-default"});
    }

    line("## Where the engine wins, ties and loses");
    line();
    line("Every comparison above of `engine` with a baseline; differences under 0.5% are ties.");
    line();
    for (int sign : {1, 0, -1}) {
        line(sign > 0 ? "**Better:**" : sign == 0 ? "**Tied:**" : "**Worse:**");
        line();
        int n = 0;
        for (const auto &v : verdicts)
            if (v.sign() == sign) {
                md += fmt::format("- {}: {} {:.4g} against {} {:.4g} ({})\n", v.scenario, v.metric,
                                  v.engine, v.other, v.baseline, change(v.engine, v.baseline));
                ++n;
            }
        if (n == 0)
            line("- none");
        line();
    }

    line("## What this evaluation does not show");
    line();
    line("- **No contention between jobs.** A job's step time is fixed when it starts, from its");
    line(
        "  own placement; jobs sharing a leaf's uplinks do not slow each other, and the cost "
        "model");
    line("  counts only leaf uplinks, not the spines' oversubscription towards the core.");
    line("- **GPUs inside a node.** The simulator applies the GPUs the policy picks. The select");
    line("  plugin today narrows the nodes and lets cons_tres pick the GPUs on them, so on nodes");
    line("  whose GPUs are not all linked alike the plugin may get less than simulated here.");
    line("- **Philly carries no model, pattern or time limit.** Multi-GPU Philly jobs get a");
    line("  pattern drawn from a fixed mix, a communication share from the measurements, and a");
    line("  time limit of twice their duration; the arrivals of four days are laid over one (and");
    line("  of forty for the scale run) to load the cluster.");
    line("- **The measurements come from one small testbed** (16 nodes of 4 T4 GPUs on 50 Gb/s");
    line("  Ethernet under one switch); placements there differ only in how the GPUs spread over");
    line("  nodes, and the Pollux workloads' durations are drawn from Philly and scaled.");
    line(
        "- **Failures** are independent per node (no switch or rack failures), and a failure "
        "stops");
    line("  the whole job: the suite's recovery (restart from a checkpoint on healthy nodes) is");
    line("  modelled only as Slurm's requeue.");
    line("- **Scheduler details.** Slurm's event-triggered main scheduler looks at 100 jobs");
    line("  (default_queue_depth) and its backfill rounds times to 60 s and stops after");
    line("  bf_max_time; here the main scheduler walks the whole queue (up to the first job that");
    line("  does not fit) after every event and backfill plans at exact times. Priority is");
    line("  submission order (no fair share, no partitions).");

    if (auto err = write_file(o.markdown, md)) {
        std::cerr << "ai-sim: " << *err << '\n';
        return 1;
    }
    const double total =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
    std::cout << fmt::format("wrote {} and {} figures in {} ({:.0f} s)\n", o.markdown,
                             figures.size(), o.image_dir, total);
    return 0;
}

}  // namespace slurm_ai::sim
