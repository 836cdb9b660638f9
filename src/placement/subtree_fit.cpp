#include <algorithm>
#include <map>

#include "gpu_select.hpp"
#include "policies.hpp"

namespace slurm_ai::detail {

std::optional<SearchContext> make_context(const PlacementEngine &engine, const JobDemand &d,
                                          const ClusterState &s, std::string *why) {
    const ClusterGraph &g = engine.graph();
    SearchContext c{engine, d, s, 0, 0, 0, static_cast<int>(d.max_nodes), {}};
    c.capacity.assign(g.host_count(), 0);
    if (d.total_gpus == 0) {
        c.hosts_needed = static_cast<int>(d.min_nodes);
        for (int h = 0; h < g.host_count(); ++h)
            c.capacity[h] = s.usable[h] ? 1 : 0;
    } else if (d.gpus_per_node > 0 || d.min_nodes > 1 || d.max_nodes == 1) {
        // --gpus over several nodes is split evenly, as Slurm does; on one node it must
        // all come from that node.
        c.per_host = static_cast<int>(d.gpus_per_host());
        c.gpus_needed = static_cast<int>(d.total_gpus);
        c.hosts_needed = std::max<int>(static_cast<int>(d.min_nodes),
                                       (c.gpus_needed + c.per_host - 1) / c.per_host);
        for (int h = 0; h < g.host_count(); ++h)
            c.capacity[h] = s.usable[h] && s.free_gpu_count(h) >= c.per_host ? 1 : 0;
    } else {
        c.gpus_needed = static_cast<int>(d.total_gpus);
        for (int h = 0; h < g.host_count(); ++h)
            c.capacity[h] = s.usable[h] ? s.free_gpu_count(h) : 0;
    }
    // The group an NVLink domain should hold: a tensor-parallel group, or every rank of
    // an all-to-all (its experts exchange tokens among all of them).
    std::uint32_t group = d.comm.pattern == CommPattern::kTensorParallel ? d.comm.tp_size
                          : d.comm.pattern == CommPattern::kMoE          ? d.ranks()
                                                                         : 1;
    if (c.per_host > 0 && group > 1)
        c.group_hosts = std::clamp(static_cast<int>((group + c.per_host - 1) / c.per_host), 1,
                                   std::max(1, c.hosts_needed));
    if (c.hosts_needed > c.max_hosts && c.max_hosts > 0) {
        if (why)
            *why = "needs " + std::to_string(c.hosts_needed) + " hosts, more than its maximum of " +
                   std::to_string(c.max_hosts);
        return std::nullopt;
    }
    return c;
}

namespace {

// How much of the job a set of capacities can hold: hosts (fixed shapes) or GPUs.
int need(const SearchContext &c) {
    return c.per_host || !c.gpus_needed ? c.hosts_needed : c.gpus_needed;
}

}  // namespace

// Picks hosts from one leaf or block: for fixed shapes the hosts with the fewest free GPUs (the
// tightest fit, keeping emptier hosts whole); for GPU counts the fullest-free first (the
// fewest hosts), each giving what is still needed; lower node Weight first among equals.
int take_hosts(const SearchContext &c, const std::vector<int> &hosts, int wanted,
               std::vector<int> &out) {
    std::vector<int> h = hosts;
    // Slurm's node Weight breaks ties: the admin's preference among equally good hosts.
    const auto &w = c.state.weight;
    if (c.per_host || !c.gpus_needed)
        std::stable_sort(h.begin(), h.end(), [&](int a, int b) {
            int fa = c.state.free_gpu_count(a), fb = c.state.free_gpu_count(b);
            return fa != fb ? fa < fb : w[a] < w[b];
        });
    else
        std::stable_sort(h.begin(), h.end(), [&](int a, int b) {
            return c.capacity[a] != c.capacity[b] ? c.capacity[a] > c.capacity[b] : w[a] < w[b];
        });
    int got = 0;
    if (c.keep_whole && c.gpus_needed && !c.per_host) {
        // Best fit host by host: the smallest host that finishes what is still wanted,
        // else the largest (h is sorted largest first, so the last that finishes it).
        std::vector<char> taken(h.size(), 0);
        while (got < wanted) {
            std::size_t pick = h.size();
            for (std::size_t i = 0; i < h.size(); ++i)
                if (!taken[i] && (pick == h.size() || c.capacity[h[i]] >= wanted - got))
                    pick = i;
            if (pick == h.size())
                break;
            taken[pick] = 1;
            out.push_back(h[pick]);
            got += c.capacity[h[pick]];
        }
        return got;
    }
    for (int host : h) {
        if (got >= wanted)
            break;
        out.push_back(host);
        got += c.capacity[host];
    }
    return got;
}

std::vector<SubtreeFit> fitting_subtrees(const SearchContext &c, int limit) {
    const ClusterGraph &g = c.engine.graph();
    const int wanted = need(c);
    // Capacity per leaf, and the eligible hosts of each.
    std::map<int, std::vector<int>> at_leaf;
    std::map<int, int> leaf_cap;
    for (int h = 0; h < g.host_count(); ++h)
        if (c.capacity[h] > 0 && g.host_leaf(h) >= 0) {
            at_leaf[g.host_leaf(h)].push_back(h);
            leaf_cap[g.host_leaf(h)] += c.capacity[h];
        }
    std::vector<SubtreeFit> fits;
    for (int sw : g.switch_nodes()) {
        int cap = 0;
        auto leaves = g.leaves_below(sw);
        for (int leaf : leaves)
            if (auto it = leaf_cap.find(leaf); it != leaf_cap.end())
                cap += it->second;
        if (cap >= wanted)
            fits.push_back({sw, g.switch_level(sw), cap, {}});
    }
    std::stable_sort(fits.begin(), fits.end(), [](const SubtreeFit &a, const SubtreeFit &b) {
        return a.level != b.level ? a.level < b.level : a.capacity < b.capacity;
    });

    // Hosts for the candidates in order, until `limit` of them work out.
    int found = 0;
    for (auto &fit : fits) {
        if (found >= limit)
            break;
        std::vector<int> leaves;
        for (int leaf : g.leaves_below(fit.switch_node))
            if (leaf_cap.count(leaf))
                leaves.push_back(leaf);
        int remaining = wanted;
        while (remaining > 0 && !leaves.empty()) {
            int pick = -1;
            for (int leaf : leaves)
                if (leaf_cap[leaf] >= remaining && (pick < 0 || leaf_cap[leaf] < leaf_cap[pick]))
                    pick = leaf;
            if (pick < 0)
                pick = *std::max_element(leaves.begin(), leaves.end(),
                                         [&](int a, int b) { return leaf_cap[a] < leaf_cap[b]; });
            remaining -= take_hosts(c, at_leaf[pick], remaining, fit.hosts);
            leaves.erase(std::find(leaves.begin(), leaves.end(), pick));
        }
        if (c.max_hosts > 0 && static_cast<int>(fit.hosts.size()) > c.max_hosts)
            fit.hosts.clear();  // would need more hosts than the job allows
        else
            ++found;
    }
    fits.erase(std::remove_if(fits.begin(), fits.end(),
                              [](const SubtreeFit &f) { return f.hosts.empty(); }),
               fits.end());
    return fits;
}

std::optional<SubtreeFit> fitting_unloaded(const SearchContext &c, const SubtreeFit &best_fit) {
    const ClusterGraph &g = c.engine.graph();
    std::map<int, std::vector<int>> at_leaf;
    std::map<int, int> leaf_cap;
    bool loaded = false;
    for (int leaf : g.leaves_below(best_fit.switch_node))
        for (int h : g.hosts_at_leaf(leaf))
            if (c.capacity[h] > 0) {
                at_leaf[leaf].push_back(h);
                leaf_cap[leaf] += c.capacity[h];
                loaded = loaded || c.state.uplink_load[leaf] > 0;
            }
    if (!loaded)
        return std::nullopt;
    std::vector<int> leaves;
    for (const auto &[leaf, cap] : leaf_cap)
        leaves.push_back(leaf);
    // Least loaded first; among equals the smallest leaf that finishes the job, else the
    // largest, as fitting_subtrees takes them.
    SubtreeFit fit{best_fit.switch_node, best_fit.level, best_fit.capacity, {}};
    int remaining = need(c);
    while (remaining > 0 && !leaves.empty()) {
        const double least = c.state.uplink_load[*std::min_element(
            leaves.begin(), leaves.end(),
            [&](int a, int b) { return c.state.uplink_load[a] < c.state.uplink_load[b]; })];
        int pick = -1;
        for (int leaf : leaves)
            if (c.state.uplink_load[leaf] <= least + 1e-12 && leaf_cap[leaf] >= remaining &&
                (pick < 0 || leaf_cap[leaf] < leaf_cap[pick]))
                pick = leaf;
        if (pick < 0)
            for (int leaf : leaves)
                if (c.state.uplink_load[leaf] <= least + 1e-12 &&
                    (pick < 0 || leaf_cap[leaf] > leaf_cap[pick]))
                    pick = leaf;
        remaining -= take_hosts(c, at_leaf[pick], remaining, fit.hosts);
        leaves.erase(std::find(leaves.begin(), leaves.end(), pick));
    }
    if (remaining > 0 || fit.hosts == best_fit.hosts ||
        (c.max_hosts > 0 && static_cast<int>(fit.hosts.size()) > c.max_hosts))
        return std::nullopt;
    return fit;
}

std::vector<SubtreeFit> fitting_domains(const SearchContext &c, int limit) {
    const ClusterGraph &g = c.engine.graph();
    const int domains = static_cast<int>(g.fabric().nvlink_domains.size());
    std::vector<SubtreeFit> fits;
    if (domains == 0 || (c.gpus_needed > 0 && c.per_host == 0))
        return fits;
    const int wanted = c.hosts_needed, group = std::max(1, c.group_hosts);
    struct Domain {
        bool degraded;
        std::vector<int> eligible;
    };
    std::vector<Domain> ds;
    for (int d = 0; d < domains; ++d) {
        Domain dom{c.state.domain_degraded(d), {}};
        for (int h : g.domain_hosts(d))
            if (c.capacity[h] > 0)
                dom.eligible.push_back(h);
        if (!dom.eligible.empty())
            ds.push_back(std::move(dom));
    }
    auto whole_groups = [&](const Domain &d) {
        return static_cast<int>(d.eligible.size()) / group * group;
    };
    // One domain for the whole job: healthy first, then the tightest fit.
    std::vector<const Domain *> single;
    for (const auto &d : ds)
        if (static_cast<int>(d.eligible.size()) >= wanted)
            single.push_back(&d);
    std::stable_sort(single.begin(), single.end(), [](const Domain *a, const Domain *b) {
        if (a->degraded != b->degraded)
            return !a->degraded;
        return a->eligible.size() < b->eligible.size();
    });
    for (const Domain *d : single) {
        if (static_cast<int>(fits.size()) >= limit)
            break;
        SubtreeFit f{-1, 0, static_cast<int>(d->eligible.size()), {}};
        take_hosts(c, d->eligible, wanted, f.hosts);
        fits.push_back(std::move(f));
    }
    // Over several domains, whole groups from each: healthy and fullest first.
    if (wanted > 1) {
        std::vector<const Domain *> order;
        for (const auto &d : ds)
            order.push_back(&d);
        std::stable_sort(order.begin(), order.end(), [&](const Domain *a, const Domain *b) {
            if (a->degraded != b->degraded)
                return !a->degraded;
            return whole_groups(*a) > whole_groups(*b);
        });
        SubtreeFit f{-1, 1, 0, {}};
        int remaining = wanted;
        for (const Domain *d : order) {
            if (remaining <= 0)
                break;
            int take = std::min(remaining, whole_groups(*d));
            if (take <= 0)
                continue;
            f.capacity += static_cast<int>(d->eligible.size());
            std::vector<int> got;
            take_hosts(c, d->eligible, take, got);
            f.hosts.insert(f.hosts.end(), got.begin(), got.end());
            remaining -= take;
        }
        if (remaining <= 0 && (c.max_hosts <= 0 || static_cast<int>(f.hosts.size()) <= c.max_hosts))
            fits.push_back(std::move(f));
    }
    return fits;
}

Placement assemble(const SearchContext &c, std::vector<int> hosts, bool best_linked,
                   const std::vector<int> *take) {
    const ClusterGraph &g = c.engine.graph();
    std::map<int, int> taken_from;  // host -> GPUs, where `take` says
    if (take)
        for (std::size_t i = 0; i < hosts.size() && i < take->size(); ++i)
            taken_from[hosts[i]] = (*take)[i];
    hosts = ring_host_order(g, std::move(hosts));
    Placement p;
    p.hosts = hosts;
    p.gpus.assign(hosts.size(), {});
    if (c.gpus_needed == 0)
        return p;
    int remaining = c.gpus_needed;
    bool multi = hosts.size() > 1;
    // Rank k of every host on one rail: the host with the fewest free GPUs chooses first,
    // and the others want the rails its GPUs use, in rank order.
    std::vector<std::size_t> turn(hosts.size());
    for (std::size_t i = 0; i < turn.size(); ++i)
        turn[i] = i;
    if (best_linked && c.per_host)
        std::stable_sort(turn.begin(), turn.end(), [&](std::size_t a, std::size_t b) {
            return c.state.free_gpu_count(hosts[a]) < c.state.free_gpu_count(hosts[b]);
        });
    std::vector<int> wanted;
    for (std::size_t i : turn) {
        int h = hosts[i];
        const auto told = taken_from.find(h);
        int k = told != taken_from.end() ? std::min(told->second, remaining)
                : c.per_host             ? std::min(c.per_host, remaining)
                                         : std::min(c.state.free_gpu_count(h), remaining);
        if (!best_linked) {
            p.gpus[i] = lowest_gpus(c.state.free_gpus[h], k);
        } else {
            RailWish wish{host_gpu_rails(g, h), wanted};
            p.gpus[i] = gpu_rank_order(
                g.node(h),
                best_linked_gpus(g.node(h), c.state.free_gpus[h], k, multi,
                                 wish.gpu_rail.empty() || wanted.empty() ? nullptr : &wish),
                wish.gpu_rail);
            if (wanted.empty() && !wish.gpu_rail.empty())
                for (int gpu : p.gpus[i])
                    wanted.push_back(wish.gpu_rail[gpu]);
        }
        remaining -= static_cast<int>(p.gpus[i].size());
    }
    // Hosts that ended up giving nothing (more hosts than GPUs needed) are dropped, but
    // never below the job's node count: -N16 --gpus=2 still gets 16 nodes, 14 without GPUs.
    for (std::size_t i = hosts.size(); i-- > 0 && std::ssize(p.hosts) > c.hosts_needed;)
        if (p.gpus[i].empty()) {
            p.hosts.erase(p.hosts.begin() + static_cast<long>(i));
            p.gpus.erase(p.gpus.begin() + static_cast<long>(i));
        }
    return p;
}

}  // namespace slurm_ai::detail
