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
