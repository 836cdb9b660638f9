#include "slurm_ai/placement/wait_explanation.hpp"

#include <algorithm>
#include <set>

#include <fmt/chrono.h>
#include <fmt/format.h>

namespace slurm_ai {
namespace {

// A place hard locality keeps a job within: the subtree of a switch of the engine's
// locality level (PlacementEngine::locality_level).
struct Unit {
    std::string name;
    std::vector<int> hosts;
};

struct Units {
    std::string kind, kinds;  // "leaf switch(es)", "level-N switch(es)", "NVLink domain(s)"
    std::vector<Unit> all;
};

// The subtrees of the switches of `level`, named as NVLink domains where each is exactly
// one domain's hosts (a GB200 NVL72 rack under its own leaf), else as switches.
Units units_of(const ClusterGraph &g, int level) {
    Units u;
    const Fabric &f = g.fabric();
    bool domains = true;
    std::vector<std::string> domain_names;
    for (int sw : g.switch_nodes()) {
        if (g.switch_level(sw) != level)
            continue;
        Unit unit{f.nodes[static_cast<std::size_t>(sw)].name, {}};
        for (int leaf : g.leaves_below(sw))
            for (int h : g.hosts_at_leaf(leaf))
                unit.hosts.push_back(h);
        if (unit.hosts.empty())
            continue;
        const int d = g.nvlink_domain(unit.hosts.front());
        domains = domains && d >= 0 && g.domain_hosts(d).size() == unit.hosts.size() &&
                  std::all_of(unit.hosts.begin(), unit.hosts.end(),
                              [&](int h) { return g.nvlink_domain(h) == d; });
        domain_names.push_back(d >= 0 ? f.nvlink_domains[static_cast<std::size_t>(d)].name : "");
        u.all.push_back(std::move(unit));
    }
    if (domains && !u.all.empty()) {
        u.kind = "NVLink domain";
        u.kinds = "NVLink domains";
        for (std::size_t i = 0; i < u.all.size(); ++i)
            u.all[i].name = domain_names[i];
    } else if (level == 0) {
        u.kind = "leaf switch";
        u.kinds = "leaf switches";
    } else {
        u.kind = fmt::format("level-{} switch", level);
        u.kinds = fmt::format("level-{} switches", level);
    }
    return u;
}

// Whether a host can take one node of the job now.
bool fits(const ClusterState &s, int host, std::uint32_t gpus) {
    if (!s.usable[static_cast<std::size_t>(host)])
        return false;
    return gpus == 0 ? s.host_free(host) : s.free_gpu_count(host) >= static_cast<int>(gpus);
}

struct Count {
    std::uint32_t total = 0;     // hosts that fit, anywhere
    std::uint32_t best = 0;      // the most in one unit
    std::string best_unit;       // its name
    std::vector<std::uint32_t> per_unit;
};

Count count_fits(const ClusterState &s, const Units &u, std::uint32_t gpus) {
    Count c;
    for (int h = 0; h < s.graph->host_count(); ++h)
        c.total += fits(s, h, gpus) ? 1 : 0;
    for (const auto &unit : u.all) {
        std::uint32_t n = 0;
        for (int h : unit.hosts)
            n += fits(s, h, gpus) ? 1 : 0;
        c.per_unit.push_back(n);
        if (n > c.best || c.best_unit.empty()) {
            c.best = n;
            c.best_unit = unit.name;
        }
    }
    return c;
}

std::string nodes_text(std::uint32_t nodes, std::uint32_t gpus) {
    if (gpus == 0)
        return fmt::format("{} free node{}", nodes, nodes == 1 ? "" : "s");
    return fmt::format("{} node{} with {} free GPU{} each ({} GPUs)", nodes, nodes == 1 ? "" : "s",
                       gpus, gpus == 1 ? "" : "s", nodes * gpus);
}

// When the job would fit, releasing the running jobs' hosts in the order they end (a host
// frees when every job on it has ended).
void add_frees(WaitExplanation &w, const JobDemand &d, const ClusterState &state,
               const Units &u, bool one_unit, std::span<const RunningJobEnd> running) {
    std::vector<const RunningJobEnd *> order;
    std::vector<int> jobs_on(static_cast<std::size_t>(state.graph->host_count()), 0);
    for (const auto &r : running) {
        for (int h : r.hosts)
            if (h >= 0 && h < state.graph->host_count())
                ++jobs_on[static_cast<std::size_t>(h)];
        if (r.end_time > 0)
            order.push_back(&r);
    }
    std::stable_sort(order.begin(), order.end(),
                     [](const auto *a, const auto *b) { return a->end_time < b->end_time; });
    ClusterState s = state;
    const std::uint32_t gpus = d.gpus_per_host();
    for (const auto *r : order) {
        for (int h : r->hosts)
            if (h >= 0 && h < s.graph->host_count() && --jobs_on[static_cast<std::size_t>(h)] == 0)
                s.free_gpus[static_cast<std::size_t>(h)] =
                    all_gpus(static_cast<int>(s.graph->node(h).gpus.size()));
        const Count c = count_fits(s, u, gpus);
        if ((one_unit ? c.best : c.total) >= d.min_nodes) {
            w.frees_at = r->end_time;
            w.frees_with_job = r->job_id;
            w.frees = fmt::format("at {:%Y-%m-%d %H:%M} UTC, when job {} ends",
                                  fmt::gmtime(static_cast<std::time_t>(r->end_time)), r->job_id);
            return;
        }
    }
}

void add_starts_now(WaitExplanation &w, const PlacementEngine &engine, const WaitRequest &req,
                    const ClusterState &state, const Units &u, const Count &c, bool one_unit) {
    const JobDemand &d = req.demand;
    if (req.elastic_min > 0 && req.at_size) {
        const std::uint32_t top = std::min(d.min_nodes - 1, req.elastic_max);
        for (std::uint32_t n = top; n >= req.elastic_min && n > 0; --n)
            if (engine.place(req.at_size(d, n), state).placement) {
                w.starts_now.push_back(fmt::format("{} nodes, within its --ai-elastic={}:{}", n,
                                                   req.elastic_min, req.elastic_max));
                break;
            }
    }
    if (d.locality.hard) {
        JobDemand soft = d;
        soft.locality = {};
        if (auto p = engine.place(soft, state).placement) {
            std::set<std::string> spans;
            for (int h : p->hosts)
                for (const auto &unit : u.all)
                    if (std::find(unit.hosts.begin(), unit.hosts.end(), h) != unit.hosts.end())
                        spans.insert(unit.name);
            w.starts_now.push_back(fmt::format(
                "--ai-locality=soft: over {} {}, placement efficiency {:.2f}", spans.size(),
                spans.size() == 1 ? u.kind : u.kinds, p->efficiency));
        }
    }
    // Groups of s nodes, each inside one unit (Slurm's --segment under topology/block);
    // groups of one node are what soft locality already says.
    if (one_unit && c.total >= d.min_nodes)
        for (std::uint32_t s = d.min_nodes - 1; s >= 2; --s) {
            if (d.min_nodes % s != 0)
                continue;
            std::uint32_t groups = 0;
            for (auto n : c.per_unit)
                groups += n / s;
            if (groups >= d.min_nodes / s) {
                w.starts_now.push_back(fmt::format(
                    "--segment={}: {} groups of {} nodes, each in one {} (topology/block)", s,
                    d.min_nodes / s, s, u.kind));
                break;
            }
        }
}

}  // namespace

WaitExplanation explain_wait(const PlacementEngine &engine, const WaitRequest &request,
                             const ClusterState &state, std::span<const RunningJobEnd> running) {
    WaitExplanation w;
    const JobDemand &d = request.demand;
    const ClusterGraph &g = *state.graph;
    // Hard locality: the engine's level; else leaves, for where the free nodes are.
    const bool hard = d.locality.hard && d.min_nodes >= 2;
    const Units u = units_of(g, hard ? engine.locality_level(d) : 0);
    const std::uint32_t gpus = d.gpus_per_host();
    const Count c = count_fits(state, u, gpus);
    const bool one_unit = hard && !u.all.empty();
    const std::string where =
        c.best_unit.empty() ? "" : fmt::format(", in {}", c.best_unit);
    if (one_unit && c.best < d.min_nodes) {
        w.holds = fmt::format("needs {} in one {} (--ai-locality=hard); the largest free is {}{}",
                              nodes_text(d.min_nodes, gpus), u.kind, nodes_text(c.best, gpus),
                              where);
    } else if (c.total < d.min_nodes) {
        w.holds = fmt::format("needs {}; {} now{}", nodes_text(d.min_nodes, gpus),
                              c.total == 1 ? std::string("1 node has that")
                                           : fmt::format("{} nodes have that", c.total),
                              u.all.empty() ? ""
                                            : fmt::format(" (the most in one {}: {}{})", u.kind,
                                                          c.best, where));
    } else {
        const Decision decision = engine.place(d, state);
        if (decision.placement) {
            w.fits_now = true;
            w.holds = fmt::format(
                "it fits now ({} nodes, placement efficiency {:.2f}): what holds it is Slurm's "
                "own reason (priority, limits, a dependency, a reservation)",
                decision.placement->hosts.size(), decision.placement->efficiency);
            return w;
        }
        w.holds = (decision.wait ? "the engine holds it for a better placement: "
                                 : "the engine finds no placement: ") +
                  decision.reason;
    }
    add_frees(w, d, state, u, one_unit, running);
    add_starts_now(w, engine, request, state, u, c, one_unit);
    return w;
}

}  // namespace slurm_ai
