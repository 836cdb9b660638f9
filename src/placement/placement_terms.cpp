// The engine's terms beside the cost and risk models (placement_terms.hpp).
#include "slurm_ai/placement/placement_terms.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

namespace slurm_ai {

namespace {

// How many jobs of `hosts` distinct hosts, one part on each, hosts holding `parts` parts
// each hold: the most J with sum(min(parts, J)) >= J x hosts.
int jobs_held(const std::vector<int> &parts, int hosts) {
    int total = 0;
    for (int p : parts)
        total += p;
    int held = 0;
    for (int j = 1; j <= total / hosts; ++j) {
        int usable = 0;
        for (int p : parts)
            usable += std::min(p, j);
        if (usable < j * hosts)
            break;
        held = j;
    }
    return held;
}

}  // namespace

double destroyed_capacity(const ClusterState &state, const Placement &p,
                          const std::vector<ClusterState::WantedSize> &sizes) {
    if (sizes.empty())
        return 0;
    const ClusterGraph &g = *state.graph;
    // GPUs of placeable capacity lost for the waiting sizes Slurm may split that fit in a
    // group of `capacity` GPUs with `free` free, when the placement takes `taken` of them.
    auto lost = [&](int free, int taken, int capacity) {
        double c = 0;
        for (const auto &w : sizes)
            if (w.per_host == 0 && w.gpus > 0 && w.gpus <= capacity)
                c += w.weight * w.gpus * (free / w.gpus - (free - taken) / w.gpus);
        return c;
    };
    // A job runs whole on one host, else in one NVLink domain, else under one leaf: the
    // hosts of the domain or leaf of each host taken, with what the placement takes there.
    std::map<int, int> taken_on;  // host: GPUs the placement takes there
    std::map<const std::vector<int> *, int> taken_in;
    double cost = 0;
    for (std::size_t i = 0; i < p.hosts.size(); ++i) {
        const int h = p.hosts[i], taken = static_cast<int>(p.gpus[i].size());
        taken_on[h] += taken;
        cost += lost(state.free_gpu_count(h), taken, static_cast<int>(g.node(h).gpus.size()));
        const int d = g.nvlink_domain(h), leaf = g.host_leaf(h);
        if (d >= 0)
            taken_in[&g.domain_hosts(d)] += taken;
        else if (leaf >= 0)
            taken_in[&g.hosts_at_leaf(leaf)] += taken;
    }
    for (const auto &[members, taken] : taken_in) {
        int free = 0, capacity = 0;
        for (int h : *members) {
            capacity += static_cast<int>(g.node(h).gpus.size());
            free += state.usable[h] ? state.free_gpu_count(h) : 0;
        }
        cost += lost(free, std::min(taken, free), capacity);
        // A size that fixes its GPUs per host: its jobs the group's hosts hold, before and
        // after.
        for (const auto &w : sizes) {
            if (w.per_host <= 0 || w.hosts <= 0)
                continue;
            std::vector<int> before, after;  // per host: how many jobs' parts it holds
            for (int h : *members) {
                const int f = state.usable[h] ? state.free_gpu_count(h) : 0;
                const auto t = taken_on.find(h);
                before.push_back(f / w.per_host);
                after.push_back((f - (t == taken_on.end() ? 0 : std::min(t->second, f))) /
                                w.per_host);
            }
            cost += w.weight * w.gpus * (jobs_held(before, w.hosts) - jobs_held(after, w.hosts));
        }
    }
    return cost;
}

double destroyed_capacity(const ClusterState &state, const Placement &p) {
    return destroyed_capacity(state, p, state.wanted);
}

double failure_evidence(const ClusterState &state, double host_per_day) {
    if (state.learned)
        return 1;  // the learned model weighs the history itself
    // A host down, drained or failing in Slurm now counts as one failure.
    double seen = 0;
    for (double f : state.failures)
        seen += f;
    for (auto d : state.down)
        seen += d ? 1 : 0;
    // A host failing at the model's base rate carries a weekly decayed count of
    // rate x 7 / ln 2 in steady state.
    const double expected =
        host_per_day * 7 / std::log(2.0) * static_cast<double>(state.failures.size());
    return expected > 0 ? std::min(1.0, seen / expected) : 0;
}

double hold_for_s(const JobDemand &d, double efficiency, double comm_share) {
    if (d.time_limit_s == 0 || comm_share <= 0)
        return 0;
    return static_cast<double>(d.time_limit_s) * comm_share *
           (1 / std::max(efficiency, 1e-3) - 1);
}

}  // namespace slurm_ai
