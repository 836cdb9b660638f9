// The evaluation of docs/evaluation.md. Scenarios (report_cases.hpp), each simulated with
// contention between jobs off and on and with none, half or all of the jobs that can be
// elastic submitted elastic:
//   philly-gpus         one day of the Philly trace (four consecutive days laid over one,
//                       for load) on 64 DGX-2 nodes under a fabric in the shape of the X5
//                       dump; jobs ask --gpus=G;
//   philly-whole-nodes  the same with whole-node requests (-N n --gpus-per-node);
//   pollux              the eight Pollux workloads on the measurement testbed (16
//                       g4dn.12xlarge nodes under one switch), step times from the
//                       measurements;
//   rail-h100           Philly on 64 DGX H100 hosts in the shape of example.out's
//                       rail-optimized fabric;
//   nvl72               Philly on 144 GB200 trays in the shape of nvl72.yaml's racks;
// then the same fabrics at larger sizes (the headline variant only), failures (recovery,
// and geometry-aware against geometry-blind placement), backfill planning with the
// engine, and scale: one day of trace on a 10,000-GPU cluster, time and memory per
// policy. The simulations run `threads` at a time; the scale runs last, alone.
#include "report.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "metrics.hpp"
#include "output.hpp"
#include "page_template.hpp"
#include "report_cases.hpp"
#include "report_failures.hpp"
#include "report_learned.hpp"
#include "report_limits.hpp"
#include "scenario.hpp"
#include "svg_chart.hpp"
#include "task_pool.hpp"

namespace slurm_ai::sim {
namespace {

namespace fs = std::filesystem;

// Slurm's topology/block and the ideal come last: sections index the first four.
const std::vector<std::string> kPolicies{"slurm-default", "tree-bestfit", "engine",        "suite",
                                         "block-bestfit", "block-segment", "ideal"};
const std::vector<std::string> kScalePolicies{"slurm-default", "tree-bestfit", "engine",
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
    // The site measured its shapes (the testbed's placements.csv): the engine gets them as
    // ai-fit --shapes writes them for ShapeProfile=.
    s.cluster.shape_profile = "measured";
    return s;
}

// A cluster of today's fabrics, in the shape of a real fabric file (repeated to `hosts`),
// with hand-written node files of the machines built on it (tests/inputs).
struct FabricCase {
    std::string name, title, shape, node;
    int hosts = 0, overlay = 1;
};
const std::string kH100 = "a rail-optimized H100 cluster (example.out, DGX H100)";
const std::string kNvl = "GB200 NVL72 racks (nvl72.yaml, GB200 trays)";
FabricCase rail_case(int hosts, int overlay) {
    return {"rail-h100", kH100, "fabric/topograph/example.out", "dgx-h100-topo.xml", hosts,
            overlay};
}
FabricCase nvl_case(int hosts, int overlay) {
    return {"nvl72", kNvl, "fabric/topograph/nvl72.yaml", "gb200-tray-topo.xml", hosts, overlay};
}
const std::string kNvlRails =
    "GB200 NVL72 racks on a rail-optimized, non-blocking fabric (gb200-nvl72-rails.conf)";
FabricCase nvl_rails_case(int hosts, int overlay) {
    return {"nvl72-rails", kNvlRails, "", "gb200-tray-topo.xml", hosts, overlay};
}
ScenarioSpec fabric_spec(bool quick, const FabricCase &f) {
    ScenarioSpec s;
    s.start = "2017-10-10";
    s.overlay = f.overlay;
    s.max_jobs = quick ? 300 : 0;
    // A shape of ../shared/data, or (no shape given) one of tests/inputs written from a
    // vendor's published layout.
    s.cluster.shape_of = f.shape.empty()
                             ? std::string(SLURM_AI_SOURCE_DIR) + "/tests/inputs/gb200-nvl72-rails.conf"
                             : data_dir() + "/" + f.shape;
    s.cluster.nodes.push_back(std::string(SLURM_AI_SOURCE_DIR) + "/tests/inputs/" + f.node);
    s.cluster.hosts = f.hosts;
    s.cluster.host_gbps = 400;  // one ConnectX-7 (NDR) per NIC
    s.jobs.request = RequestStyle::kFlexible;
    return with_defaults(s);
}


std::string relative_link(const std::string &markdown, const std::string &dir) {
    auto base = fs::weakly_canonical(fs::absolute(markdown)).parent_path();
    return fs::relative(fs::weakly_canonical(fs::absolute(dir)), base).generic_string();
}

// "-7.6%" style comparisons.
std::string change(double x, double other) {
    if (other == 0)
        return x == 0 ? "equal" : "n/a";
    return fmt::format("{:+.1f}%", 100 * (x - other) / std::abs(other));
}
double relative(double x, double other) {
    return other == 0 ? 0 : (x - other) / std::abs(other);
}

struct Verdict {
    std::string scenario, metric, other;
    double suite = 0, baseline = 0;
    bool lower_better = true;
    double tolerance = 0;  // absolute differences up to this are ties too
    // Relative differences under 0.5% count as ties.
    int sign() const {
        double d = suite - baseline;
        double scale = std::max(std::abs(baseline), 1e-12);
        if (std::abs(d) / scale < kJctTie || std::abs(d) <= tolerance)
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
                  const std::vector<Summary> &rows, const std::vector<std::string> &others) {
    const Summary e = by_policy(rows, "suite");
    for (const auto &other : others) {
        const Summary b = by_policy(rows, other);
        out.push_back({scenario, "mean JCT (h)", other, e.mean_jct_h, b.mean_jct_h, true, 0});
        out.push_back({scenario, "p99 JCT (h)", other, e.p99_jct_h, b.p99_jct_h, true, 0});
        out.push_back(
            {scenario, "mean queueing delay (h)", other, e.mean_wait_h, b.mean_wait_h, true, 0});
        out.push_back({scenario, "useful utilisation", other, e.useful, b.useful, false, 1e-3});
    }
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

std::string share_name(double share) {
    return fmt::format("{:.0f}%", 100 * share);
}

// The page, line by line.
class Page {
  public:
    void line(const std::string &s = "") { md_ += s + "\n"; }
    void raw(const std::string &s) { md_ += s; }
    const std::string &text() const { return md_; }

  private:
    std::string md_;
};

// A scenario's matrix: mean and p99 JCT of each policy in each variant, with the suite
// against tree best fit and Slurm's default order.
void matrix_tables(Page &page, const CaseResult &c) {
    const auto &pol = c.spec.policies;
    for (const bool p99 : {false, true}) {
        std::string head = "| contention | elastic jobs |";
        std::string rule = "|---|---:|";
        for (const auto &p : pol) {
            head += " " + p + " |";
            rule += "---:|";
        }
        page.line(p99 ? "p99 JCT (h):" : "Mean JCT (h):");
        page.line();
        page.line(head + " suite against tree-bestfit | against slurm-default |");
        page.line(rule + "---:|---:|");
        for (std::size_t v = 0; v < c.spec.variants.size(); ++v) {
            const Variant &var = c.spec.variants[v];
            std::string row =
                fmt::format("| {} | {} ({}) |", var.contention ? "on" : "off",
                            share_name(var.elastic_share), c.elastic_jobs(var));
            auto fig = [&](const Summary &s) { return p99 ? s.p99_jct_h : s.mean_jct_h; };
            for (const auto &s : c.rows[v])
                row += fmt::format(" {:.3f} |", fig(s));
            const Summary su = by_policy(c.rows[v], "suite");
            row += fmt::format(" {} | {} |", change(fig(su), fig(by_policy(c.rows[v], "tree-bestfit"))),
                               change(fig(su), fig(by_policy(c.rows[v], "slurm-default"))));
            page.line(var == kHeadline ? row + " ←" : row);
        }
        page.line();
    }
}

// What the suite did in the headline variant: how many resizes, how much contention.
void behaviour_line(Page &page, const CaseResult &c) {
    const auto &rows = c.at(kHeadline);
    const Summary su = by_policy(rows, "suite"), t = by_policy(rows, "tree-bestfit");
    page.line(fmt::format(
        "In the headline variant (←: contention on, {} of the elastic-capable jobs elastic) "
        "ai-elasticd grew jobs {} times and shrank them {} times; multi-GPU jobs ran {:.3f} times "
        "as long per step as with the fabric to themselves under the suite and {:.3f} under tree "
        "best fit. Against tree best fit the suite changes mean JCT by {}, p99 JCT by {} and mean "
        "queueing delay by {}; useful utilisation {:.1f}% against {:.1f}%.",
        share_name(kHeadline.elastic_share), su.grows, su.shrinks, su.contention, t.contention,
        change(su.mean_jct_h, t.mean_jct_h), change(su.p99_jct_h, t.p99_jct_h),
        change(su.mean_wait_h, t.mean_wait_h), 100 * su.useful, 100 * t.useful));
    page.line();
}

void case_header(Page &page, const CaseResult &c) {
    for (const auto &l : c.prepared[c.variant(kHeadline)].front().lines)
        page.line("- " + l);
    page.line(fmt::format(
        "- elastic: {} of the jobs can be elastic (more than one GPU, split evenly over the "
        "fewest nodes: --ai-elastic=n/2:2n); the headline variant submits {} of them elastic",
        c.could_be_elastic(), c.elastic_jobs(kHeadline)));
    page.line();
    page.line("The headline variant, every figure:");
    page.line();
    page.raw(results_table(c.at(kHeadline), true));
    page.line();
}

struct Target {
    std::string what, figure;
    bool met = false;
};
struct Targets {
    std::vector<Target> rows;  // as the page's table shows them
    nlohmann::json json = nlohmann::json::array(), placement_json = nlohmann::json::array();
};

// The evaluation's targets: the suite against tree best fit from the headline variants,
// the placement targets (report_limits.hpp) and the failure targets.
Targets judge_targets(const std::vector<CaseResult *> &cases,
                      const std::vector<const CaseResult *> &all_cases,
                      const std::vector<CaseResult *> &big, const FailureStudy &study) {
    Targets out;
    for (std::size_t i : {0, 1, 4}) {
        const auto &rows = cases[i]->at(kHeadline);
        const Summary su = by_policy(rows, "suite"), t = by_policy(rows, "tree-bestfit");
        const double mean = relative(su.mean_jct_h, t.mean_jct_h);
        const double p99 = relative(su.p99_jct_h, t.p99_jct_h);
        out.rows.push_back({fmt::format("{}: mean JCT at least 25% below tree best fit",
                                       cases[i]->spec.name),
                           change(su.mean_jct_h, t.mean_jct_h), mean <= -0.25});
        out.rows.push_back({fmt::format("{}: p99 JCT below tree best fit", cases[i]->spec.name),
                           change(su.p99_jct_h, t.p99_jct_h), p99 < 0});
        out.json.push_back({{"scenario", cases[i]->spec.name},
                               {"mean_jct_change", mean},
                               {"p99_jct_change", p99},
                               {"mean_met", mean <= -0.25},
                               {"p99_met", p99 < 0}});
    }
    {
        std::string worst;
        double worst_change = -1;
        auto consider = [&](const CaseResult &c, const Variant &v, const std::string &name) {
            const auto &rows = c.at(v);
            const double d = relative(by_policy(rows, "suite").mean_jct_h,
                                      by_policy(rows, "tree-bestfit").mean_jct_h);
            if (d > worst_change) {
                worst_change = d;
                worst = name;
            }
        };
        for (const auto *c : cases)
            for (const auto &v : c->spec.variants)
                consider(*c, v,
                         fmt::format("{} (contention {}, {} elastic)", c->spec.name,
                                     v.contention ? "on" : "off", share_name(v.elastic_share)));
        for (const auto *c : big)
            consider(*c, kHeadline, c->spec.name);
        out.rows.push_back({"no scenario worse than tree best fit by more than 1% (mean JCT)",
                           fmt::format("worst: {} in {}", change(1 + worst_change, 1), worst),
                           worst_change <= 0.01});
        out.json.push_back({{"scenario", "all"},
                               {"worst_mean_jct_change", worst_change},
                               {"worst", worst},
                               {"met", worst_change <= 0.01}});
    }
    // Placement against what Slurm ships and against the ideal (report_limits.hpp).
    for (auto &pt : placement_targets(all_cases,
                                     {"nvl72", "nvl72-576", "nvl72-rails", "rail-h100",
                                      "rail-h100-256", "rail-h100-1024"},
                                     out.placement_json))
        out.rows.push_back({std::move(pt.what), std::move(pt.figure), pt.met});
    // The failure targets, on the trace replay's smaller cluster.
    {
        const auto h = failure_headline(study, 0);
        const int study_hosts = study.sizes.front().hosts;
        for (int r : {1, 2}) {
            const auto &paired = h.paired[static_cast<std::size_t>(r)];
            const auto window = win_rate(h.window_wins[static_cast<std::size_t>(r)],
                                         h.window_losses[static_cast<std::size_t>(r)]);
            const bool met = window.value_or(0) >= 0.87;
            out.rows.push_back(
                {fmt::format("geometry-aware placement wins at least 87% of comparisons, {} "
                             "({} hosts, the trace)",
                             to_string(static_cast<Regime>(r)), study_hosts),
                 fmt::format("{} window by window; {} decision by decision ({} comparisons)",
                             percent_or(window, "none"), percent_or(paired.win_rate(), "none"),
                             paired.comparisons()),
                 met});
            out.json.push_back({{"scenario", "failures"},
                                   {"regime", r == 1 ? "cyclic" : "tree"},
                                   {"window_win_rate", rate_json(window)},
                                   {"paired_win_rate", rate_json(paired.win_rate())},
                                   {"paired_comparisons", paired.comparisons()},
                                   {"met", met}});
        }
        const double suite = relative(h.lost_suite, h.lost_tree),
                     engine = relative(h.lost_engine, h.lost_tree);
        out.rows.push_back(
            {fmt::format("GPU-hours lost to failures at least 25% below tree best fit ({} hosts, "
                         "the trace)",
                         study_hosts),
             fmt::format("the suite {} (with ai-recover), the engine alone {} (Slurm's requeue)",
                         change(h.lost_suite, h.lost_tree), change(h.lost_engine, h.lost_tree)),
             suite <= -0.25});
        out.json.push_back({{"scenario", "failures"},
                               {"lost_gpu_h_change_suite", suite},
                               {"lost_gpu_h_change_engine", engine},
                               {"met", suite <= -0.25}});
    }

    return out;
}

// What one report runs, and what it got.
struct Timing {
    std::string policy;
    double wall_s = 0;
    long rss_mib = 0, placements = 0;
    Summary summary;
};
struct ReportRun {
    std::vector<std::unique_ptr<CaseResult>> results;
    std::vector<CaseResult *> cases, big, planned, shares;
    FailureStudy study;
    std::vector<double> comm_shares;
    std::size_t simulations = 0;
    double sim_s = 0;
    std::vector<std::string> scale_lines;
    std::vector<Timing> timings;
};

// The scenarios, largest first so that the threads finish together; the same fabrics
// larger; backfill planned by the engine; the communication share's sensitivity.
struct ReportPlan {
    std::vector<CaseSpec> specs, larger, planning, sensitivity;
    std::vector<double> comm_shares;
};

ReportPlan report_plan(bool quick) {
    ReportPlan r;
    const auto matrix = full_matrix();
    const auto rail = rail_case(quick ? 16 : 64, quick ? 1 : 2);
    const auto nvl = nvl_case(quick ? 36 : 144, quick ? 1 : 4);
    r.specs.push_back({"philly-gpus", "Philly, jobs asking --gpus=G",
                       {philly_spec(quick, RequestStyle::kFlexible)}, kPolicies, matrix});
    r.specs.push_back({"philly-whole-nodes", "Philly, jobs asking whole nodes",
                       {philly_spec(quick, RequestStyle::kPacked)}, kPolicies, matrix});
    r.specs.push_back({rail.name, kH100, {fabric_spec(quick, rail)}, judged_policies(), matrix});
    r.specs.push_back({nvl.name, kNvl, {fabric_spec(quick, nvl)}, judged_policies(), matrix});
    CaseSpec pollux{"pollux", "the Pollux workloads on the measurement testbed", {}, kPolicies,
                    matrix};
    for (int w = 1; w <= (quick ? 2 : 8); ++w)
        pollux.parts.push_back(pollux_spec(w));
    r.specs.push_back(pollux);
    const auto rails = nvl_rails_case(quick ? 36 : 144, quick ? 1 : 4);
    r.specs.push_back(
        {rails.name, kNvlRails, {fabric_spec(quick, rails)}, judged_policies(), matrix});
    // The headline variant, and the engine alone (nothing elastic) the placement targets
    // judge.
    if (!quick)
        for (const auto &f : {rail_case(256, 8), rail_case(1024, 32), nvl_case(576, 16)})
            r.larger.push_back({f.name + "-" + std::to_string(f.hosts), f.title,
                                {fabric_spec(false, f)}, judged_policies(),
                                {kHeadline, Variant{true, 0.0}}});
    for (std::size_t i : {0, 1, 4})
        r.planning.push_back({r.specs[i].name, r.specs[i].title, r.specs[i].parts, {"suite"},
                              headline_only()});
    // The communication share of a cost-model job's ideal step, which Philly does not
    // record: philly-gpus again with other shares, contention off and no elastic job.
    r.comm_shares = {0.1, 0.25};
    for (double share : r.comm_shares) {
        ScenarioSpec sp = r.specs[0].parts.front();
        sp.comm_share = share;
        r.sensitivity.push_back({"philly-gpus", "", {sp},
                                 {"slurm-default", "tree-bestfit", "suite"}, {{false, 0.0}}});
    }
    return r;
}

// Plans and runs every simulation of the report but the scale runs, `threads` at a time.
std::optional<InputError> run_cases(const ReportOptions &o, ReportRun &run) {
    const auto t_start = std::chrono::steady_clock::now();
    const ReportPlan plan_of = report_plan(o.quick);
    run.comm_shares = plan_of.comm_shares;
    const SimOptions plain = base_options();
    SimOptions plans = plain;
    plans.suite.plan_with_engine = true;
    std::vector<std::function<void()>> tasks;
    auto plan = [&](const CaseSpec &spec, const SimOptions &opts) -> CaseResult * {
        run.results.push_back(std::make_unique<CaseResult>());
        if (auto err = plan_case(*run.results.back(), spec, opts, tasks))
            throw *err;
        return run.results.back().get();
    };
    try {
        for (const auto &sp : plan_of.larger)
            run.big.push_back(plan(sp, plain));
        for (const auto &sp : plan_of.specs)
            run.cases.push_back(plan(sp, plain));
        for (const auto &sp : plan_of.planning)
            run.planned.push_back(plan(sp, plans));
        // Failures: the fault trace replayed (report_failures.hpp), `seeds` windows a size.
        if (auto err = plan_failures(run.study, o.quick, std::max(o.seeds, 1), tasks))
            throw *err;
        for (const auto &sp : plan_of.sensitivity)
            run.shares.push_back(plan(sp, plain));
    } catch (const InputError &e) {
        return e;
    }
    run_tasks(tasks, std::max(o.threads, 1));
    for (auto &r : run.results)
        finish_case(*r);
    run.simulations = tasks.size();
    run.sim_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
    return std::nullopt;
}

// Scale: one day of trace on a large cluster, one policy at a time, nothing else running.
std::optional<InputError> run_scale(bool quick, ReportRun &run) {
    ScenarioSpec bigspec = philly_spec(false, RequestStyle::kFlexible);
    bigspec.cluster.hosts = quick ? 64 : 625;
    bigspec.overlay = quick ? 4 : 40;
    auto scale = prepare(bigspec);
    if (!scale)
        return scale.error();
    run.scale_lines = scale->lines;
    const SimOptions plain = base_options();
    for (const auto &p : kScalePolicies) {
        auto t0 = std::chrono::steady_clock::now();
        RunResult r = simulate(scale->cluster, scale->jobs.jobs, scale->steps, plain, p);
        double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        run.timings.push_back({p, wall, peak_rss_mib(), r.placements_tried,
                               summarize(r, scale->cluster.max_gpus_per_host)});
    }
    return std::nullopt;
}

// The SVG figures, by file name.
std::vector<std::pair<std::string, std::string>> report_figures(const ReportRun &run) {
    const CaseResult &gpus = *run.cases[0];
    const std::size_t hv = gpus.variant(kHeadline);
    const int hosts = gpus.prepared[hv].front().cluster.graph.host_count();
    LineChart cdf{fmt::format("philly-gpus, {} DGX-2, headline variant: job completion time",
                              hosts),
                  "completion time (h, log)",
                  "share of jobs",
                  true,
                  true,
                  {}};
    for (const auto &r : gpus.runs[hv])
        cdf.series.push_back(jct_cdf(r));
    LineChart busy{fmt::format("philly-gpus, {} DGX-2, headline variant: GPUs allocated", hosts),
                   "hours after the first submission",
                   "GPUs allocated (%)",
                   false,
                   false,
                   {}};
    for (const auto &r : gpus.runs[hv])
        busy.series.push_back(busy_series(r, 48));
    const CaseResult &pollux = *run.cases[4];
    BarChart pollux_bars{"pollux, headline variant: mean JCT per workload", "mean JCT (h)",
                         kPolicies, {}};
    for (std::size_t w = 0; w < pollux.spec.parts.size(); ++w) {
        BarChart::Group g{fmt::format("w{}", w + 1), {}};
        for (std::size_t p = 0; p < kPolicies.size(); ++p)
            g.values.push_back(pollux.figures[pollux.variant(kHeadline)][p][w].mean_jct_h);
        pollux_bars.groups.push_back(g);
    }
    const FailureStudy &study = run.study;
    BarChart lost_bars{fmt::format("Trace replay on {} hosts (mean per window): lost GPU-hours by "
                                   "job graph",
                                   study.sizes.front().hosts),
                       "lost GPU-hours", study.policies, {}};
    for (int r = 0; r < kRegimes; ++r) {
        BarChart::Group g{to_string(static_cast<Regime>(r)), {}};
        for (std::size_t p = 0; p < study.policies.size(); ++p) {
            double sum = 0;
            for (const auto &w : study.sizes.front().rows)
                sum += w[p].lost_gpu_h[static_cast<std::size_t>(r)];
            g.values.push_back(sum / std::max<std::size_t>(study.sizes.front().rows.size(), 1));
        }
        lost_bars.groups.push_back(g);
    }
    return {{"sim-jct-cdf.svg", render(cdf)},
            {"sim-gpus-allocated.svg", render(busy)},
            {"sim-pollux-jct.svg", render(pollux_bars)},
            {"sim-failures-lost.svg", render(lost_bars)}};
}

// Every comparison of `suite` with a baseline, in the page's order.
std::vector<Verdict> all_verdicts(const ReportRun &run) {
    const std::vector<std::string> base_others{"tree-bestfit", "slurm-default"};
    const std::vector<std::string> fabric_others{"tree-bestfit", "block-bestfit", "block-segment",
                                                 "slurm-default"};
    std::vector<Verdict> v;
    add_verdicts(v, "philly-gpus", run.cases[0]->at(kHeadline), base_others);
    add_verdicts(v, "philly-whole-nodes", run.cases[1]->at(kHeadline), base_others);
    add_verdicts(v, "pollux", run.cases[4]->at(kHeadline), base_others);
    for (std::size_t i : {2, 3, 5})
        add_verdicts(v, run.cases[i]->spec.name, run.cases[i]->at(kHeadline), fabric_others);
    for (const auto *c : run.big)
        add_verdicts(v, c->spec.name, c->at(kHeadline), fabric_others);
    const auto h = failure_headline(run.study, 0);
    v.push_back({"failures (trace)", "lost GPU-hours per window", "tree-bestfit", h.lost_suite,
                 h.lost_tree, true, 0});
    return v;
}

// A scenario's header, what the suite did and its matrix of variants.
std::string case_text(const CaseResult &c) {
    Page page;
    case_header(page, c);
    behaviour_line(page, c);
    matrix_tables(page, c);
    return page.text();
}

std::string joined(const std::vector<std::string> &lines, const std::string &prefix = "") {
    std::string out;
    for (const auto &l : lines)
        out += prefix + l + "\n";
    return out;
}

// Sections 1 and 2: Philly on DGX-2 nodes.
void philly_slots(const ReportRun &run, Slots &slots) {
    const CaseResult &gpus = *run.cases[0];
    slots["philly_hosts"] =
        std::to_string(gpus.prepared[gpus.variant(kHeadline)].front().cluster.graph.host_count());
    slots["philly_case"] = case_text(gpus);
    const auto &off = gpus.at({false, 0.0});
    const Summary e = by_policy(off, "engine"), t = by_policy(off, "tree-bestfit");
    slots["philly_engine_change"] = change(e.mean_jct_h, t.mean_jct_h);
    slots["philly_engine_efficiency"] = fmt::format("{:.3f}", e.efficiency);
    slots["philly_tree_efficiency"] = fmt::format("{:.3f}", t.efficiency);
    std::string rows;
    auto row = [&](double share, const std::vector<Summary> &r) {
        const double d = by_policy(r, "slurm-default").mean_jct_h,
                     tb = by_policy(r, "tree-bestfit").mean_jct_h,
                     su = by_policy(r, "suite").mean_jct_h;
        rows += fmt::format("| {:.0f}% | {:.3f} | {:.3f} | {:.3f} | {} |\n", 100 * share, d, tb,
                            su, change(su, tb));
    };
    for (std::size_t k = 0; k < run.comm_shares.size(); ++k)
        row(run.comm_shares[k], run.shares[k]->rows.front());
    row(gpus.prepared.front().front().steps.comm_share(), gpus.at({false, 0.0}));
    slots["comm_share_rows"] = rows;
    slots["whole_case"] = case_text(*run.cases[1]);
}

// Section 3: the Pollux workloads, with the table workload by workload.
void pollux_slots(const ReportRun &run, Slots &slots) {
    const CaseResult &pollux = *run.cases[4];
    slots["pollux_workloads"] = std::to_string(pollux.spec.parts.size());
    slots["pollux_case"] = case_text(pollux);
    std::string head = "| workload |", rule = "|---|";
    for (const auto &p : kPolicies) {
        head += " " + p + " |";
        rule += "---:|";
    }
    std::string out = head + " suite against tree-bestfit |\n" + rule + "---:|\n";
    const std::size_t v = pollux.variant(kHeadline);
    int better = 0, tied = 0, worse = 0;
    for (std::size_t w = 0; w < pollux.spec.parts.size(); ++w) {
        std::string row = fmt::format("| workload-{} |", w + 1);
        for (std::size_t p = 0; p < kPolicies.size(); ++p)
            row += fmt::format(" {:.3f} |", pollux.figures[v][p][w].mean_jct_h);
        const double s = pollux.figures[v][3][w].mean_jct_h, t = pollux.figures[v][1][w].mean_jct_h;
        Verdict vd{"", "", "", s, t, true, 0};
        (vd.sign() > 0 ? better : vd.sign() < 0 ? worse : tied)++;
        out += row + " " + change(s, t) + " |\n";
    }
    out += fmt::format(
        "\nThe suite against tree best fit, workload by workload: better in {}, within 0.5% in "
        "{}, worse in {}.\n\n",
        better, tied, worse);
    slots["pollux_workloads_table"] = out;
}

// Section 4: the fabrics of 2026, and the same fabrics larger.
void fabric_slots(const ReportRun &run, Slots &slots) {
    std::string cases;
    for (std::size_t i : {2, 3, 5}) {
        const CaseResult &c = *run.cases[i];
        cases += fmt::format("### {}: {} hosts, {}\n\n", c.spec.name,
                             c.prepared.front().front().cluster.graph.host_count(), c.spec.title);
        cases += case_text(c);
    }
    slots["fabric_cases"] = cases;
    slots["nvl72_job_by_job"] =
        joined(job_by_job_section(*run.cases[3], {true, 0.0}, "block-bestfit", "engine"));
    std::string larger;
    if (!run.big.empty())
        larger = "### The same fabrics, larger (headline variant, then the engine alone)\n\n";
    for (const auto *c : run.big) {
        Page page;
        page.line(fmt::format("#### {}: {} hosts", c->spec.name,
                              c->prepared.front().front().cluster.graph.host_count()));
        page.line();
        page.raw(joined(c->prepared.front().front().lines, "- "));
        page.line();
        page.raw(results_table(c->at(kHeadline), true));
        page.line();
        behaviour_line(page, *c);
        page.line("Contention on, nothing elastic (the engine alone against Slurm's policies):");
        page.line();
        page.raw(results_table(c->at({true, 0.0}), true));
        page.line();
        larger += page.text();
    }
    slots["larger_fabrics"] = larger;
}

// Section 5's table and verdict, and the same figures as JSON.
nlohmann::json planning_slots(const ReportRun &run, Slots &slots) {
    std::string rows;
    bool helps = false;
    nlohmann::json json = nlohmann::json::array();
    for (std::size_t k = 0; k < run.planned.size(); ++k) {
        const std::size_t i = k == 2 ? 4 : k;
        const double a = by_policy(run.cases[i]->at(kHeadline), "suite").mean_jct_h;
        const double b = run.planned[k]->rows.front().front().mean_jct_h;
        Verdict vd{"", "", "", b, a, true, 0};
        helps = helps || vd.sign() > 0;
        rows += fmt::format("| {} | {:.3f} | {:.3f} | {} |\n", run.cases[i]->spec.name, a, b,
                            change(b, a));
        json.push_back({{"scenario", run.cases[i]->spec.name},
                        {"mean_jct_h_tree_bestfit_plans", a},
                        {"mean_jct_h_engine_plans", b}});
    }
    slots["planning_rows"] = rows;
    slots["planning_verdict"] =
        helps ? "Planning with the engine helps somewhere by more than the 0.5% a tie allows."
              : "Planning with the engine changes mean JCT by less than the 0.5% a tie allows "
                "everywhere: the plugin keeps leaving will-run tests to cons_tres (`ai-sim "
                "--suite-plans-backfill` keeps the experiment).";
    return json;
}

// Sections 6, 7 and the wins, ties and losses.
void closing_slots(const ReportRun &run, Slots &slots) {
    slots["failures"] = failures_section(run.study);
    slots["scale_lines"] = joined(run.scale_lines, "- ");
    std::string rows;
    for (const auto &t : run.timings)
        rows += fmt::format("| {} | {} | {} | {:.3f} | {:.1f} | {} | {:.2f} | {:.2f}x | {} |\n",
                            t.policy, t.summary.jobs, t.summary.finished, t.summary.mean_jct_h,
                            100 * t.summary.utilisation, t.placements, t.wall_s,
                            t.wall_s / run.timings.front().wall_s, t.rss_mib);
    slots["scale_rows"] = rows;
    const auto verdicts = all_verdicts(run);
    std::string out;
    for (int sign : {1, 0, -1}) {
        out += sign > 0 ? "**Better:**\n\n" : sign == 0 ? "**Tied:**\n\n" : "**Worse:**\n\n";
        int n = 0;
        for (const auto &v : verdicts)
            if (v.sign() == sign) {
                out += fmt::format("- {}: {} {:.4g} against {} {:.4g} ({})\n", v.scenario,
                                   v.metric, v.suite, v.other, v.baseline,
                                   change(v.suite, v.baseline));
                ++n;
            }
        out += n == 0 ? "- none\n\n" : "\n";
    }
    slots["verdicts"] = out;
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
    auto fail = [](const std::string &message) {
        std::cerr << "ai-sim: " << message << '\n';
        return 1;
    };
    // The page's prose, read first: a report that cannot be written is not run.
    const std::string page_template = read_page_template(std::string(SLURM_AI_SOURCE_DIR) +
                                                         "/bench/ai-sim/evaluation_template.md");
    auto learned =
        load_learned_placement(std::string(SLURM_AI_SOURCE_DIR) + "/contrib/slurm.conf.d");
    if (!learned)
        return fail(learned.error().message());
    ReportRun run;
    if (auto err = run_cases(o, run))
        return fail(err->message());
    if (auto err = run_scale(o.quick, run))
        return fail(err->message());
    const auto figures = report_figures(run);
    for (const auto &[name, svg] : figures)
        if (auto err = write_output((fs::path(o.image_dir) / name).string(), svg))
            return fail(*err);

    std::vector<const CaseResult *> all_cases(run.cases.begin(), run.cases.end());
    all_cases.insert(all_cases.end(), run.big.begin(), run.big.end());
    const Targets judged = judge_targets(run.cases, all_cases, run.big, run.study);
    Slots slots;
    slots["this_run"] = fmt::format(
        "This run: {} simulations in {:.0f} s on {} thread{}, then the scale runs.{}",
        run.simulations, run.sim_s, o.threads, o.threads == 1 ? "" : "s",
        o.quick ? " **Quick mode: small scenarios, for tests only.**" : "");
    for (const auto &t : judged.rows)
        slots["targets"] +=
            fmt::format("| {} | {} | {} |\n", t.what, t.figure, t.met ? "yes" : "**no**");
    slots["limits"] = joined(limits_section(all_cases));
    slots["img"] = o.image_link.empty() ? relative_link(o.markdown, o.image_dir) : o.image_link;
    const CaseResult &first = *run.cases[0];
    slots["step_rule"] = first.prepared[first.variant(kHeadline)].front().steps.rule();
    slots["assumed_share"] = share_name(kAssumedElasticShare);
    philly_slots(run, slots);
    pollux_slots(run, slots);
    fabric_slots(run, slots);
    const nlohmann::json planning_json = planning_slots(run, slots);
    closing_slots(run, slots);
    slots["learned_placement"] = learned_placement_section(learned.value());
    if (auto err = write_output(o.markdown, fill_page(page_template, slots)))
        return fail(*err);
    if (!o.json.empty()) {
        nlohmann::json j;
        j["scenarios"] = nlohmann::json::array();
        for (const auto *c : all_cases)
            j["scenarios"].push_back(case_json(*c));
        j["targets"] = judged.json;
        j["placement_targets"] = judged.placement_json;
        j["backfill_planning"] = planning_json;
        j["failures"] = failures_json(run.study);
        j["learned_placement"] = learned_placement_json(learned.value());
        if (auto err = write_output(o.json, j.dump(2) + "\n"))
            return fail(*err);
    }
    const double total =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
    std::cout << fmt::format("wrote {}{} and {} figures in {} ({:.0f} s)\n", o.markdown,
                             o.json.empty() ? "" : ", " + o.json, figures.size(), o.image_dir,
                             total);
    return 0;
}

}  // namespace slurm_ai::sim
