// Slurm's own choices, reproduced on the suite's model so that both can be scored alike.
#include <algorithm>
#include <numeric>
#include <random>

#include "policies.hpp"

namespace slurm_ai::detail {
namespace {

// Takes hosts in the given order until the job is covered.
std::optional<Placement> first_fit(const SearchContext &c, const std::vector<int> &order,
                                   bool best_linked) {
    std::vector<int> hosts;
    int got = 0;
    const bool by_hosts = c.per_host || !c.gpus_needed;
    const int wanted = by_hosts ? c.hosts_needed : c.gpus_needed;
    for (int h : order) {
        if (got >= wanted)
            break;
        if (c.capacity[h] <= 0)
            continue;
        hosts.push_back(h);
        got += by_hosts ? 1 : c.capacity[h];
    }
    if (got < wanted || (c.max_hosts > 0 && static_cast<int>(hosts.size()) > c.max_hosts))
        return std::nullopt;
    return assemble(c, hosts, best_linked);
}

}  // namespace

// Slurm without topology: nodes by Weight, then in node order; lowest GPUs first.
std::optional<Placement> place_slurm_default(const SearchContext &c) {
    std::vector<int> order(c.capacity.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return c.state.weight[a] < c.state.weight[b]; });
    auto p = first_fit(c, order, false);
    if (p) {
        // Slurm keeps node order, not leaf order, for task layout.
        std::vector<std::size_t> idx(p->hosts.size());
        std::iota(idx.begin(), idx.end(), 0);
        std::sort(idx.begin(), idx.end(),
                  [&](auto a, auto b) { return p->hosts[a] < p->hosts[b]; });
        Placement q;
        for (auto i : idx) {
            q.hosts.push_back(p->hosts[i]);
            q.gpus.push_back(p->gpus[i]);
        }
        return q;
    }
    return p;
}

// Slurm's topology/tree: the lowest switch that fits, tightest first, fewest leaves.
std::optional<Placement> place_tree_bestfit(const SearchContext &c) {
    auto fits = fitting_subtrees(c, 1);
    if (fits.empty())
        return std::nullopt;
    return assemble(c, fits.front().hosts, false);
}

namespace {

// Slurm's base blocks on the suite's model: the fabric's blocks (topology.conf BlockName=,
// topograph), else its NVLink domains, else its leaf switches; host indexes, in order.
std::vector<std::vector<int>> base_blocks(const ClusterGraph &g) {
    std::vector<std::vector<int>> out;
    const Fabric &f = g.fabric();
    for (const auto &b : f.blocks) {
        out.emplace_back();
        for (int node : b.hosts)
            if (int h = g.host_index(f.nodes[node].name); h >= 0)
                out.back().push_back(h);
    }
    if (out.empty())
        for (int d = 0; d < static_cast<int>(f.nvlink_domains.size()); ++d)
            if (!g.domain_hosts(d).empty())
                out.push_back(g.domain_hosts(d));
    if (out.empty())
        for (int sw : g.switch_nodes())
            if (!g.hosts_at_leaf(sw).empty())
                out.push_back(g.hosts_at_leaf(sw));
    for (auto &b : out)
        std::sort(b.begin(), b.end());
    return out;
}

}  // namespace

std::optional<Placement> place_block(const SearchContext &c, bool segment) {
    const auto blocks = base_blocks(c.engine.graph());
    if (blocks.empty())
        return std::nullopt;
    const bool by_hosts = c.per_host || !c.gpus_needed;
    const int wanted = by_hosts ? c.hosts_needed : c.gpus_needed;
    std::size_t base_size = 0;
    for (const auto &b : blocks)
        base_size = std::max(base_size, b.size());
    // --segment: the job's TP/EP group, else as much of a base block as the job needs.
    const int seg = !segment || !by_hosts ? 1
                    : c.group_hosts > 1   ? c.group_hosts
                                          : std::min(wanted, static_cast<int>(base_size));
    // What each base block can give: capacity, in whole segments.
    std::vector<std::vector<int>> eligible(blocks.size());
    std::vector<int> cap(blocks.size(), 0);
    for (std::size_t b = 0; b < blocks.size(); ++b) {
        for (int h : blocks[b])
            if (c.capacity[h] > 0) {
                eligible[b].push_back(h);
                cap[b] += by_hosts ? 1 : c.capacity[h];
            }
        cap[b] = cap[b] / seg * seg;
    }
    // The smallest level of aligned groups of 2^k base blocks that holds the job; in it
    // the group with the least room (best fit).
    const std::size_t n = blocks.size();
    for (std::size_t group = 1;; group *= 2) {
        std::size_t best = n;
        int best_cap = 0;
        for (std::size_t first = 0; first < n; first += group) {
            int room = 0;
            for (std::size_t b = first; b < std::min(n, first + group); ++b)
                room += cap[b];
            if (room >= wanted && (best == n || room < best_cap)) {
                best = first;
                best_cap = room;
            }
        }
        if (best < n) {
            // As few base blocks as possible: the fullest first.
            std::vector<std::size_t> order;
            for (std::size_t b = best; b < std::min(n, best + group); ++b)
                order.push_back(b);
            std::stable_sort(order.begin(), order.end(),
                             [&](std::size_t a, std::size_t b) { return cap[a] > cap[b]; });
            std::vector<int> hosts;
            int got = 0;
            for (std::size_t b : order)
                if (got < wanted)  // whole segments only: never more than cap[b]
                    got += take_hosts(c, eligible[b], std::min(wanted - got, cap[b]), hosts);
            if (c.max_hosts > 0 && static_cast<int>(hosts.size()) > c.max_hosts)
                return std::nullopt;
            return assemble(c, hosts, false);
        }
        if (group >= n)
            return std::nullopt;
    }
}

std::optional<Placement> place_random(const SearchContext &c, std::uint64_t seed) {
    std::vector<int> order(c.capacity.size());
    std::iota(order.begin(), order.end(), 0);
    std::mt19937_64 rng(seed);
    std::shuffle(order.begin(), order.end(), rng);
    auto p = first_fit(c, order, false);
    if (p)
        for (std::size_t i = 0; i < p->hosts.size(); ++i) {
            // Random GPUs among the free ones.
            std::vector<int> free;
            for (int g = 0; g < 64; ++g)
                if (c.state.free_gpus[p->hosts[i]] & (GpuMask{1} << g))
                    free.push_back(g);
            std::shuffle(free.begin(), free.end(), rng);
            free.resize(p->gpus[i].size());
            p->gpus[i] = free;
        }
    return p;
}

}  // namespace slurm_ai::detail
