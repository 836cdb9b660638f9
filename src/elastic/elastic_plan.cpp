#include "slurm_ai/elastic/elastic_plan.hpp"

#include <algorithm>
#include <limits>
#include <optional>
#include <tuple>

#include "slurm_ai/elastic/elastic_policy.hpp"

namespace slurm_ai {
namespace {

constexpr int kFar = 1 << 20;

// Switch hops between two hosts' leaves; kFar when either is not cabled to a leaf.
int hops(const ClusterGraph &g, int a, int b) {
    int la = g.host_leaf(a), lb = g.host_leaf(b);
    if (la < 0 || lb < 0)
        return kFar;
    if (la == lb)
        return 0;
    int h = g.switch_hops(la, lb);
    return h < 0 ? kFar : h;
}

int distance_to(const ClusterGraph &g, int host, std::span<const int> others) {
    int best = kFar;
    for (int o : others)
        if (o != host)
            best = std::min(best, hops(g, host, o));
    return best;
}

double comm_of(const PlacementEngine &engine, const JobDemand &demand, std::vector<int> hosts,
               const ClusterState *state) {
    if (hosts.empty())
        return 0;
    auto d = demand_at_size(demand, static_cast<std::uint32_t>(hosts.size()));
    auto p = job_placement(engine.graph(), d, std::move(hosts), state);
    return engine.cost_model().estimate(d, p, state).seconds;
}

}  // namespace

JobDemand demand_at_size(const JobDemand &demand, std::uint32_t nodes) {
    JobDemand d = demand;
    nodes = std::max<std::uint32_t>(nodes, 1);
    const auto per = demand.gpus_per_host();
    d.min_nodes = d.max_nodes = nodes;
    d.total_gpus = per * nodes;
    if (per)
        d.gpus_per_node = per;
    // Counts tied to the job's size scale with it, as make_demand sets them.
    if (d.comm.pattern == CommPattern::kPipeline && demand.comm.stages == demand.min_nodes)
        d.comm.stages = std::max<std::uint32_t>(nodes, 2);
    if (d.comm.pattern == CommPattern::kMoE && demand.comm.experts == demand.ranks())
        d.comm.experts = std::max<std::uint32_t>(d.ranks(), 2);
    return d;
}

std::vector<double> goodput_curve(const PlacementEngine &engine, const JobDemand &demand,
                                  std::uint32_t max_nodes, double compute_gpu_s) {
    std::vector<double> out(max_nodes + 1, 0.0);
    for (std::uint32_t n = 1; n <= max_nodes; ++n) {
        const JobDemand d = demand_at_size(demand, n);
        const double gpus = std::max<double>(d.total_gpus, n);
        const double step = compute_gpu_s / gpus + engine.lower_bound(d);
        out[n] = step > 0 ? compute_gpu_s / step : 0.0;
    }
    return out;
}

double compute_from_share(const PlacementEngine &engine, const JobDemand &demand,
                          std::uint32_t nodes, double share) {
    const JobDemand d = demand_at_size(demand, nodes);
    const double gpus = std::max<double>(d.total_gpus, nodes);
    return engine.lower_bound(d) * (1 - share) / share * gpus;
}

std::vector<double> job_goodput(const PlacementEngine &engine, const JobDemand &demand,
                                std::uint32_t nodes, std::uint32_t max_nodes, double share) {
    const double compute = demand.comm.compute_ms
                               ? demand.comm.compute_ms / 1e3
                               : compute_from_share(engine, demand, nodes, share);
    return goodput_curve(engine, demand, max_nodes, compute);
}

std::uint32_t comm_share_size(const PlacementEngine &engine, std::uint32_t start_max) {
    const auto hosts = static_cast<std::uint32_t>(std::max(engine.graph().host_count(), 1));
    return std::clamp<std::uint32_t>(start_max, 1, hosts);
}

std::uint32_t goodput_start(const PlacementEngine &engine, const JobDemand &demand,
                            const ElasticSpec &spec, std::uint32_t upto, double share,
                            double min_gain) {
    if (upto <= spec.min_nodes || spec.max_nodes <= spec.min_nodes)
        return spec.min_nodes;
    ElasticJob e;
    e.spec = spec;
    e.spec.max_nodes = std::min(spec.max_nodes, upto);
    e.goodput = job_goodput(engine, demand, comm_share_size(engine, spec.max_nodes),
                            e.spec.max_nodes, share);
    e.gpus_per_node = std::max<std::uint32_t>(demand.gpus_per_host(), 1);
    return goodput_size(std::move(e), min_gain);
}

double start_gain(const ClusterState &state, int own_gpus, int min_gpus, double min_gain) {
    int spare = -min_gpus;
    for (int h = 0; h < state.graph->host_count(); ++h)
        spare += state.usable[h] ? state.free_gpu_count(h) : 0;
    double others = 0;
    bool own = false;
    for (const auto &w : state.wanted) {
        const bool mine = !own && w.gpus == own_gpus;
        own = own || mine;
        if (w.gpus <= spare)
            others += w.weight - (mine ? 1 : 0);
    }
    return others > 1e-9 ? std::max(kWaitingGpuWorth, min_gain) : min_gain;
}

SizedDecision place_sized(const JobDemand &base, std::uint32_t lo, std::uint32_t hi,
                          const std::function<Decision(const JobDemand &)> &place_at) {
    lo = std::max<std::uint32_t>(lo, 1);
    std::optional<Decision> held;
    Decision decision;
    for (std::uint32_t n = std::max(hi, lo);; --n) {
        JobDemand d = demand_at_size(base, n);
        decision = place_at(d);
        if (decision.placement)
            return {std::move(decision), n, std::move(d)};
        if (decision.wait && !held)
            held = decision;
        if (n <= lo)
            break;
    }
    return {held ? std::move(*held) : std::move(decision), 0, base};
}

Placement job_placement(const ClusterGraph &graph, const JobDemand &demand, std::vector<int> hosts,
                        const ClusterState *state) {
    Placement p;
    p.hosts = ring_host_order(graph, std::move(hosts));
    const auto per = demand.gpus_per_host();
    for (int h : p.hosts) {
        std::vector<int> gpus;
        const int count = static_cast<int>(graph.node(h).gpus.size());
        for (int g = 0; g < count && gpus.size() < per; ++g)
            if (!state || (state->free_gpus[h] >> g & 1))
                gpus.push_back(g);
        // A host the job already holds has its GPUs busy in the free view: the job's own.
        for (int g = 0; g < count && gpus.size() < per; ++g)
            if (std::find(gpus.begin(), gpus.end(), g) == gpus.end())
                gpus.push_back(g);
        std::sort(gpus.begin(), gpus.end());
        p.gpus.push_back(std::move(gpus));
    }
    return p;
}

ResizeChoice plan_grow(const PlacementEngine &engine, const JobDemand &demand,
                       std::span<const int> current, const ClusterState &free, int add,
                       int candidates) {
    const ClusterGraph &g = engine.graph();
    ResizeChoice out;
    std::vector<int> hosts(current.begin(), current.end());
    out.comm_before_s = comm_of(engine, demand, hosts, nullptr);
    const auto per = demand.gpus_per_host();
    std::vector<int> pool;
    for (int h = 0; h < g.host_count(); ++h)
        if (free.usable[h] && std::find(hosts.begin(), hosts.end(), h) == hosts.end() &&
            (per == 0 || free.free_gpu_count(h) >= static_cast<int>(per)))
            pool.push_back(h);
    if (static_cast<int>(pool.size()) < add) {
        out.reason = "needs " + std::to_string(add) +
                     " more host(s) that can take a node of the "
                     "job, " +
                     std::to_string(pool.size()) + " free";
        return out;
    }
    for (int step = 0; step < add; ++step) {
        // The nearest hosts first, then the admin's preference, then graph order.
        std::stable_sort(pool.begin(), pool.end(), [&](int a, int b) {
            return std::tuple(distance_to(g, a, hosts), free.weight[a]) <
                   std::tuple(distance_to(g, b, hosts), free.weight[b]);
        });
        const int limit = std::min<int>(static_cast<int>(pool.size()), std::max(candidates, 1));
        int best = -1;
        double best_s = std::numeric_limits<double>::infinity();
        for (int i = 0; i < limit; ++i) {
            auto trial = hosts;
            trial.push_back(pool[i]);
            double s = comm_of(engine, demand, std::move(trial), nullptr);
            if (s < best_s - 1e-12) {
                best_s = s;
                best = i;
            }
        }
        hosts.push_back(pool[best]);
        out.hosts.push_back(pool[best]);
        out.comm_after_s = best_s;
        pool.erase(pool.begin() + best);
    }
    return out;
}

ResizeChoice plan_shrink(const PlacementEngine &engine, const JobDemand &demand,
                         std::span<const int> current, int remove, std::span<const int> keep) {
    const ClusterGraph &g = engine.graph();
    ResizeChoice out;
    std::vector<int> hosts(current.begin(), current.end());
    out.comm_before_s = out.comm_after_s = comm_of(engine, demand, hosts, nullptr);
    auto kept = [&](int h) { return std::find(keep.begin(), keep.end(), h) != keep.end(); };
    const int removable = static_cast<int>(
        std::count_if(hosts.begin(), hosts.end(), [&](int h) { return !kept(h); }));
    if (remove >= static_cast<int>(hosts.size()) || remove > removable) {
        out.reason = "cannot release " + std::to_string(remove) + " of " +
                     std::to_string(hosts.size()) + " host(s) (" +
                     std::to_string(hosts.size() - removable) + " must stay)";
        return out;
    }
    // Among equally cheap releases: the host farthest from the rest, then the one whose
    // leaf holds the fewest of the job's hosts (emptying a leaf first lets a later step
    // take the job off a slow uplink altogether), then the later one in rank order.
    auto peers = [&](int h) {
        return std::count_if(hosts.begin(), hosts.end(),
                             [&](int o) { return g.host_leaf(o) == g.host_leaf(h); });
    };
    for (int step = 0; step < remove; ++step) {
        int best = -1;
        double best_s = std::numeric_limits<double>::infinity();
        std::tuple<int, long> best_tie{-1, 0};
        for (std::size_t i = 0; i < hosts.size(); ++i) {
            if (kept(hosts[i]))
                continue;
            auto trial = hosts;
            trial.erase(trial.begin() + static_cast<long>(i));
            double s = comm_of(engine, demand, trial, nullptr);
            std::tuple<int, long> tie{distance_to(g, hosts[i], trial), -peers(hosts[i])};
            if (s < best_s - 1e-12 || (s <= best_s + 1e-12 && tie >= best_tie)) {
                best_s = s;
                best = static_cast<int>(i);
                best_tie = tie;
            }
        }
        out.hosts.push_back(hosts[best]);
        out.comm_after_s = best_s;
        hosts.erase(hosts.begin() + best);
    }
    return out;
}

}  // namespace slurm_ai
