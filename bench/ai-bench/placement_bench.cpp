// ai-bench-placement: decision time and placement efficiency of the suite's engine and of
// Slurm's topology/tree best-fit, measured in one run on fat trees of 64, 1,000 and
// 10,000 nodes (8 GPUs each, the NDv4 node file) at a realistic occupancy.
//
// Occupancy: jobs drawn from a Philly-like size mix are placed, alternately by
// tree-bestfit and at random, until the target share of GPUs is busy, then a quarter of
// them end, leaving holes. Then a fixed
// set of probe jobs (1 GPU to 16 nodes x 8 GPUs, all-reduce, pipeline and all-to-all, and
// --gpus=12 that Slurm may split over 1 to 12 nodes) is
// placed by both policies on that same state, without allocating, and timed.
//
// With --risk-model FILE (RiskModel= of ai_select.conf, ai-sim train-risk) the engine
// places each probe a second time with the learned model in use, on the same state with a
// failure history (a fiftieth of the hosts failed in the past month), and the two are
// timed side by side: what the learned model costs in slurmctld's hot path.
//
// With --placement-model FILE (PlacementModel=, ai-sim train-place) the engine places each
// probe once more with that learned scorer picking among its candidates, on the same
// state, timed beside the engine alone (whatever the file's verdict: this measures cost).
//
// With --shape-profile FILE (ShapeProfile=, ai-fit --shapes) the engine has that profile
// in every decision: its figures, and the targets, are then the profiled engine's.
//
// One job of each multi-GPU probe size waits while the probes are placed, so that the
// engine's decisions include what each placement takes from them (placement_terms.hpp).
//
// Not a test: it prints figures. Targets: the engine's p99 decision under 1 ms at 10,000
// nodes and under 10 ms at 100,000 GPUs (12,500 nodes of 8), and at most twice tree best
// fit's p99 in the same run at every size, printed as met or not at the end; engine
// efficiency at least 0.9 on average and never below the baseline's.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "slurm_ai/placement/learned_placement.hpp"
#include "slurm_ai/placement/learned_risk.hpp"
#include "slurm_ai/placement/placement_engine.hpp"
#include "slurm_ai/placement/shape_profile.hpp"
#include "slurm_ai/topology/fabric.hpp"
#include "slurm_ai/topology/node_topology.hpp"
#include "testbed/synthetic_fabric.hpp"

using namespace slurm_ai;

namespace {

struct Shape {
    std::uint32_t nodes, per_node, gpus;  // nodes 0: --gpus=G over 1 to G nodes
    CommPattern pattern;
};

JobDemand make_job(const Shape &s) {
    JobHints h;
    h.comm = CommSpec{};
    h.comm->pattern = s.pattern;
    if (s.pattern == CommPattern::kPipeline)
        h.comm->stages = std::max<std::uint32_t>(s.nodes, 2);
    JobRequest r{std::max(s.nodes, 1u), s.nodes ? s.nodes : s.gpus, s.per_node, s.gpus, 1};
    return make_demand(r, h);
}

// Milliseconds since `t0`.
double since_ms(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
        .count();
}

double percentile(std::vector<double> v, double q) {
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())))];
}

long peak_rss_mib() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss / 1024;
}

// How many probes, each timed how many times; --probes and --repeat are counts of at
// least one.
const CLI::Range kCount(1, 1000000);
struct ProbePlan {
    int probes = 1000;  // 125 of each shape: the p99 is the tenth slowest decision
    int repeat = 5;
    bool verbose = false;
};

// The decisions of one policy over the probes of one size.
struct ProbeStats {
    std::vector<double> ms, eff;
    int fits = 0;
};

void print_row(int nodes, int probes, const char *policy, const ProbeStats &s,
               const std::string &below) {
    double mean_ms = 0, mean_eff = 0;
    for (double v : s.ms)
        mean_ms += v / static_cast<double>(s.ms.size());
    for (double v : s.eff)
        mean_eff += v / static_cast<double>(s.eff.size());
    double min_eff = s.eff.empty() ? 0 : *std::min_element(s.eff.begin(), s.eff.end());
    std::printf("%-7d %-6d %-13s %10.3f %10.3f %10.3f %8d %10.3f %10.3f %9s %9ld\n", nodes,
                probes, policy, mean_ms, percentile(s.ms, 0.5), percentile(s.ms, 0.99), s.fits,
                mean_eff, min_eff, below.c_str(), peak_rss_mib());
}

// Gives a fiftieth of the hosts one failure in the past month (in `state`'s weekly counts)
// and returns a copy with the learned model in use over that history.
ClusterState with_failure_history(ClusterState &state, const LearnedRisk &model,
                                  std::mt19937_64 &rng) {
    const ClusterGraph &g = *state.graph;
    const double now = 30 * kDaySeconds;
    RiskHistory history(g, now);
    std::set<int> failed;
    while (static_cast<int>(failed.size()) < g.host_count() / 50)
        failed.insert(static_cast<int>(rng() % static_cast<std::uint64_t>(g.host_count())));
    int k = 0;
    for (int h : failed) {
        HostFailures f;
        f.note(static_cast<double>(rng() % static_cast<std::uint64_t>(now)),
               static_cast<FailureClass>(k++ % kFailureClasses));
        history.add(h, f);
        state.failures[h] = f.as_of(now).week;
    }
    ClusterState learned = state;
    learned.learned = std::make_shared<LearnedRiskView>(LearnedRiskView{&model, std::move(history)});
    return learned;
}

// Places every probe (the shapes cycled) by the engine, tree best fit, with a learned
// state the engine with the learned risk model, and with a scored engine the engine with
// its learned scorer, on the same state without allocating; times each decision into
// stats (in that order). Returns how many probes the engine placed less efficiently.
int time_probes(const PlacementEngine &engine, const ClusterState &state,
                const ClusterState *learned_state, const PlacementEngine *scored,
                const std::vector<Shape> &probe_shapes, const ProbePlan &plan,
                ProbeStats stats[4]) {
    const PlacementPolicy bestfit = *make_policy("tree-bestfit");
    int below = 0;
    for (int i = 0; i < plan.probes; ++i) {
        auto d = make_job(probe_shapes[i % probe_shapes.size()]);
        engine.lower_bound(d);  // warm the per-shape cache, as a long-running plugin has it
        if (scored)
            scored->lower_bound(d);
        double eff[4] = {-1, -1, -1, -1};
        const PlacementPolicy *policies[4] = {&engine_policy(), &bestfit, &engine_policy(),
                                              &engine_policy()};
        for (int k = 0; k < 4; ++k) {
            if ((k == 2 && !learned_state) || (k == 3 && !scored))
                continue;
            // The same decision `repeat` times (it reads the state, never changes it); its
            // median time, so that an interrupt in one of them is not the decision's cost.
            std::vector<double> times;
            Decision dec;
            for (int r = 0; r < plan.repeat; ++r) {
                auto start = std::chrono::steady_clock::now();
                dec = (k == 3 ? *scored : engine)
                          .place(d, k == 2 ? *learned_state : state, *policies[k]);
                times.push_back(since_ms(start));
            }
            stats[k].ms.push_back(percentile(times, 0.5));
            if (dec.placement) {
                ++stats[k].fits;
                eff[k] = dec.placement->efficiency;
                stats[k].eff.push_back(eff[k]);
            }
        }
        if (eff[0] >= 0 && eff[1] >= 0 && eff[0] < eff[1] - 1e-9)
            ++below;
        if (plan.verbose)
            std::printf(
                "  probe %d: %u x %u GPUs %s: engine %.3f ms eff %.3f, tree-bestfit %.3f ms "
                "eff %.3f\n",
                i, d.min_nodes, d.gpus_per_node ? d.gpus_per_node : d.total_gpus,
                std::string(to_string(d.comm.pattern)).c_str(), stats[0].ms.back(), eff[0],
                stats[1].ms.back(), eff[1]);
    }
    return below;
}

// Places jobs of the mix, alternately by tree best fit and at random, until `occupancy` of
// the GPUs is busy, then ends a quarter of them: what years of arrivals, departures and
// hand-placed jobs leave behind. Returns the GPUs left busy.
double fill(const PlacementEngine &engine, ClusterState &state,
            const std::vector<std::pair<Shape, int>> &mix, double occupancy,
            std::mt19937_64 &rng) {
    const PlacementPolicy random = *make_policy("random"), bestfit = *make_policy("tree-bestfit");
    // A shape of more GPUs per node than the nodes have is never drawn: else its misses
    // end the fill early (a 4-GPU node file was filled to 0% at 10,000 nodes).
    const auto &g = engine.graph();
    const auto node_gpus =
        static_cast<std::uint32_t>(g.gpu_count() / std::max(g.host_count(), 1));
    std::vector<int> weights;
    for (const auto &[s, w] : mix)
        weights.push_back(s.per_node <= node_gpus ? w : 0);
    std::discrete_distribution<int> pick(weights.begin(), weights.end());
    std::vector<Placement> running;
    const double total = static_cast<double>(g.gpu_count());
    double busy = 0;
    int misses = 0;
    while (busy / total < occupancy && misses < 50) {
        auto d = make_job(mix[pick(rng)].first);
        auto dec = engine.place(d, state, (running.size() % 2) ? random : bestfit);
        if (!dec.placement) {
            ++misses;
            continue;
        }
        state.allocate(*dec.placement);
        busy += static_cast<double>(dec.placement->rank_count());
        running.push_back(std::move(*dec.placement));
    }
    std::shuffle(running.begin(), running.end(), rng);
    for (std::size_t i = 0; i < running.size() / 4; ++i) {
        state.release(running[i]);
        busy -= static_cast<double>(running[i].rank_count());
    }
    return busy;
}

// One cluster size's rows (a policy's row only where it was timed), the engine's decision
// time against tree best fit's, and each learned model's p99 against the engine alone.
void print_size(int n, int probes, const ProbeStats stats[4], int below,
                const std::string &setting) {
    const char *names[4] = {"engine", "tree-bestfit", "engine+model", "engine+scorer"};
    for (int k = 0; k < 4; ++k)
        if (!stats[k].ms.empty())
            print_row(n, probes, names[k], stats[k], k == 0 ? std::to_string(below) : "-");
    const double engine_ms = std::accumulate(stats[0].ms.begin(), stats[0].ms.end(), 0.0);
    const double base_ms = std::accumulate(stats[1].ms.begin(), stats[1].ms.end(), 0.0);
    std::printf("%-7d %s; engine/baseline decision time %.2fx\n", n, setting.c_str(),
                base_ms > 0 ? engine_ms / base_ms : 0);
    const double engine_p99 = std::max(percentile(stats[0].ms, 0.99), 1e-9);
    if (!stats[2].ms.empty())
        std::printf("%-7d learned model in use/hand-written: p99 decision time %.2fx\n", n,
                    percentile(stats[2].ms, 0.99) / engine_p99);
    if (!stats[3].ms.empty()) {
        const double p99 = percentile(stats[3].ms, 0.99);
        std::printf("%-7d learned scorer/engine alone: p99 decision time %.3f ms against %.3f "
                    "ms (%.2fx)%s\n",
                    n, p99, engine_p99, p99 / engine_p99,
                    n >= 10000 ? (p99 < 1 ? "; under 1 ms: met" : "; under 1 ms: NOT met") : "");
    }
}

// The targets, from the largest size that reaches each: 10,000 nodes, 100,000 GPUs; and
// the engine's p99 against twice tree best fit's at every size.
void print_targets(const std::vector<std::pair<int, double>> &engine_nodes_p99,
                   const std::vector<std::pair<int, double>> &engine_p99,
                   const std::vector<std::pair<int, double>> &p99_ratio) {
    auto target = [](const char *what, const std::vector<std::pair<int, double>> &by, int size,
                     double limit_ms) {
        const std::pair<int, double> *at = nullptr;
        for (const auto &x : by)
            if (x.first >= size && (!at || x.first < at->first))
                at = &x;
        if (!at)
            std::printf("target: engine p99 under %g ms at %s: not measured (no size that large)\n",
                        limit_ms, what);
        else
            std::printf("target: engine p99 under %g ms at %s: %.3f ms at %d %s, %s\n", limit_ms,
                        what, at->second, at->first, what + std::string(what).find(' ') + 1,
                        at->second < limit_ms ? "met" : "NOT met");
    };
    target("10,000 nodes", engine_nodes_p99, 10000, 1.0);
    target("100,000 GPUs", engine_p99, 100000, 10.0);
    // And at most twice tree best fit's p99, measured in the same run, at every size.
    for (const auto &[n, r] : p99_ratio)
        std::printf("target: engine p99 at most 2x tree best fit's at %d nodes: %.2fx, %s\n", n, r,
                    r <= 2 ? "met" : "NOT met");
}

// The model of a file named on the command line (null: none named); nullopt, said on
// stderr, for a file that does not load.
template <class Model, class Load>
std::optional<std::shared_ptr<const Model>> load_model(const std::string &path, Load load) {
    if (path.empty())
        return std::shared_ptr<const Model>();
    auto m = load(path);
    if (!m) {
        std::fprintf(stderr, "ai-bench-placement: %s\n", m.error().message().c_str());
        return std::nullopt;
    }
    return std::make_shared<const Model>(std::move(m).value());
}

// The files the engine may decide with: RiskModel=, PlacementModel= and ShapeProfile=.
struct EngineFiles {
    std::string risk, placement, shapes;
};

void add_engine_files(CLI::App &app, EngineFiles &f) {
    app.add_option("--risk-model", f.risk,
                   "Also time the engine with this learned risk model in use (RiskModel=)")
        ->check(CLI::ExistingFile);
    app.add_option("--placement-model", f.placement,
                   "Also time the engine with this learned scorer picking among its "
                   "candidates (PlacementModel=)")
        ->check(CLI::ExistingFile);
    app.add_option("--shape-profile", f.shapes,
                   "The engine decides with this measured shape profile (ShapeProfile=)")
        ->check(CLI::ExistingFile);
}

}  // namespace

int main(int argc, char **argv) {
    CLI::App app{"ai-bench-placement: decision time and efficiency, engine vs tree best-fit"};
    std::string node_file = std::string(SLURM_AI_DATA_DIR) + "/nccl-topo/ndv4-topo.xml";
    std::vector<int> sizes{64, 1000, 10000, 12500};
    double occupancy = 0.7, budget_ms = 5;
    ProbePlan plan;
    int uplinks = 16;
    app.add_option(
        "--uplinks", uplinks,
        "Uplinks per leaf of 32 hosts (16: 2:1 by host links; fewer: more oversubscribed)");
    app.add_flag("--verbose", plan.verbose, "Print every probe");
    app.add_option("--node", node_file, "Node topology of every host")->check(CLI::ExistingFile);
    app.add_option("--sizes", sizes, "Cluster sizes in nodes");
    app.add_option("--occupancy", occupancy, "Share of GPUs busy before the probes");
    app.add_option("--probes", plan.probes, "Probe jobs per cluster size")->check(kCount);
    app.add_option("--repeat", plan.repeat, "Timings of each decision (its median counts)")
        ->check(kCount);
    app.add_option("--budget-ms", budget_ms, "The engine's time budget per decision");
    EngineFiles files;
    add_engine_files(app, files);
    CLI11_PARSE(app, argc, argv);
    auto scorer = load_model<LearnedPlacement>(files.placement, LearnedPlacement::load);
    auto risk = load_model<LearnedRisk>(files.risk, LearnedRisk::load);
    auto profile = load_model<ShapeProfile>(files.shapes, load_shape_profile);
    if (!scorer || !risk || !profile)
        return 1;
    std::shared_ptr<const LearnedPlacement> placement = *scorer;
    std::shared_ptr<const LearnedRisk> model = *risk;
    std::shared_ptr<const ShapeProfile> shapes = *profile;

    auto node = load_node_topology(node_file);
    if (!node) {
        std::fprintf(stderr, "ai-bench-placement: %s\n", node.error().message().c_str());
        return 1;
    }
    // A Philly-like mix: most jobs small, a few large.
    const std::vector<std::pair<Shape, int>> mix{
        {{1, 0, 1, CommPattern::kNone}, 40},      {{1, 0, 2, CommPattern::kAllReduce}, 15},
        {{1, 0, 4, CommPattern::kAllReduce}, 15}, {{1, 8, 8, CommPattern::kAllReduce}, 15},
        {{2, 8, 16, CommPattern::kAllReduce}, 8}, {{4, 8, 32, CommPattern::kPipeline}, 4},
        {{8, 8, 64, CommPattern::kAllReduce}, 2}, {{16, 8, 128, CommPattern::kMoE}, 1},
    };

    std::printf("%-7s %-6s %-13s %10s %10s %10s %8s %10s %10s %9s %9s\n", "nodes", "probes",
                "policy", "mean ms", "p50 ms", "p99 ms", "fits", "mean eff", "min eff", "eff<base",
                "RSS MiB");
    std::vector<std::pair<int, double>> engine_p99;  // (GPUs, engine p99 ms) per size
    std::vector<std::pair<int, double>> p99_ratio;  // engine p99 / tree best fit p99
    std::vector<std::pair<int, double>> engine_nodes_p99;
    for (int n : sizes) {
        const std::string conf = testbed::clos_topology_conf(n, uplinks);
        auto t0 = std::chrono::steady_clock::now();  // the loader's time too
        auto fabric = parse_topology_conf(conf, "fat-tree");
        if (!fabric) {
            std::fprintf(stderr, "%s\n", fabric.error().message().c_str());
            return 1;
        }
        const std::size_t written = write_topology_conf(fabric.value()).size();
        const double load_ms = since_ms(t0);
        t0 = std::chrono::steady_clock::now();
        auto graph = ClusterGraph::build(std::move(fabric).value(), {}, node.value());
        if (!graph) {
            std::fprintf(stderr, "%s\n", graph.error().message().c_str());
            return 1;
        }
        const double build_ms = since_ms(t0);
        const ClusterGraph &g = graph.value();
        EngineOptions opt;
        opt.time_budget_ms = budget_ms;
        opt.shape_profile = shapes;
        PlacementEngine engine(g, {}, {}, opt);
        std::optional<PlacementEngine> scored;
        if (placement) {
            EngineOptions with = opt;
            with.placement_model = placement;
            scored.emplace(g, CostConstants{}, RiskConstants{}, with);
        }

        // Fill to the occupancy, then end a quarter of the jobs.
        ClusterState state(g);
        const double total = static_cast<double>(g.gpu_count());
        std::mt19937_64 rng(42 + n);
        const double busy = fill(engine, state, mix, occupancy, rng);
        // With a learned model: a failure history for both (the hand-written model reads
        // its weekly counts), and the model in use on a copy.
        std::optional<ClusterState> learned_state;
        if (model)
            learned_state = with_failure_history(state, *model, rng);

        // Probe jobs: every shape, cycled, both policies on the same state.
        std::vector<Shape> probe_shapes{
            {1, 0, 1, CommPattern::kNone},       {1, 0, 4, CommPattern::kAllReduce},
            {1, 8, 8, CommPattern::kAllReduce},  {2, 8, 16, CommPattern::kAllReduce},
            {4, 8, 32, CommPattern::kPipeline},  {4, 8, 32, CommPattern::kAllReduce},
            {8, 8, 64, CommPattern::kAllReduce}, {16, 8, 128, CommPattern::kMoE},
            {0, 0, 12, CommPattern::kAllReduce},  // Slurm may split it (ShapeProfile=)
        };
        // One job of each multi-GPU probe size waits: the engine weighs what each
        // placement takes from them (placement_terms.hpp), as in slurmctld with a queue.
        for (const auto &p : probe_shapes)
            if (p.gpus > 1)
                state.wanted.push_back({static_cast<int>(p.gpus), 1});
        if (learned_state)
            learned_state->wanted = state.wanted;
        ProbeStats stats[4];
        const int below = time_probes(engine, state, learned_state ? &*learned_state : nullptr,
                                      scored ? &*scored : nullptr, probe_shapes, plan,
                                      stats);
        engine_p99.push_back({g.gpu_count(), percentile(stats[0].ms, 0.99)});
        engine_nodes_p99.push_back({n, percentile(stats[0].ms, 0.99)});
        p99_ratio.push_back({n, percentile(stats[0].ms, 0.99) /
                                    std::max(percentile(stats[1].ms, 0.99), 1e-9)});
        print_size(n, plan.probes, stats, below,
                   fmt::format("topology.conf read and written ({} bytes) in {:.1f} ms; "
                               "graph built in {:.1f} ms; {:.0f}% GPUs busy",
                               written, load_ms, build_ms, 100 * busy / total));
    }
    print_targets(engine_nodes_p99, engine_p99, p99_ratio);
    return 0;
}
