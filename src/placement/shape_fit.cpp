// The engine's candidates from a measured shape profile (ShapeProfile): a job whose GPUs
// Slurm may split over its hosts as it likes, placed in the shapes the site measured fastest.
#include <algorithm>
#include <map>

#include "policies.hpp"
#include "slurm_ai/placement/shape_profile.hpp"

namespace slurm_ai::detail {
namespace {

// Eligible hosts of one size, tightest first: fewest free GPUs, then lower node Weight,
// then lower index; and what they give.
struct Pool {
    std::vector<int> hosts;
    int free = 0;
};

void tightest_first(const SearchContext &c, Pool &pool) {
    const auto &w = c.state.weight;
    std::stable_sort(pool.hosts.begin(), pool.hosts.end(), [&](int a, int b) {
        return c.capacity[a] != c.capacity[b] ? c.capacity[a] < c.capacity[b] : w[a] < w[b];
    });
}

// Hosts of `pool` giving `shape`, largest part first, each from the tightest host that
// still gives it (the tightest fit keeps emptier hosts whole). Empty when they cannot.
ShapedFit realize(const SearchContext &c, const Pool &pool, const ShapeProfile::Shape &shape) {
    ShapedFit fit;
    std::vector<char> used(pool.hosts.size(), 0);
    for (int part : shape) {
        std::size_t i = 0;
        while (i < pool.hosts.size() && (used[i] || c.capacity[pool.hosts[i]] < part))
            ++i;
        if (i == pool.hosts.size())
            return {};
        used[i] = 1;
        fit.hosts.push_back(pool.hosts[i]);
        fit.take.push_back(part);
    }
    return fit;
}

}  // namespace

std::vector<ShapedFit> fitting_shapes(const SearchContext &c, int limit) {
    const ShapeProfile *profile = c.engine.options().shape_profile.get();
    std::vector<ShapedFit> out;
    if (!profile || c.gpus_needed == 0 || c.per_host > 0)
        return out;  // nothing profiled, or the job fixes its shape itself
    const ClusterGraph &g = c.engine.graph();
    for (int size : profile->host_sizes()) {
        const auto shapes = profile->fastest(size, c.gpus_needed);
        if (shapes.empty())
            continue;
        // The eligible hosts of this size, by leaf (tightest leaf first), and all of them.
        std::map<int, Pool> at_leaf;
        Pool all;
        for (int h = 0; h < g.host_count(); ++h)
            if (c.capacity[h] > 0 && std::ssize(g.node(h).gpus) == size) {
                Pool &leaf = at_leaf[g.host_leaf(h)];
                leaf.hosts.push_back(h);
                leaf.free += c.capacity[h];
                all.hosts.push_back(h);
                all.free += c.capacity[h];
            }
        if (all.free < c.gpus_needed)
            continue;
        std::vector<Pool *> leaves;
        for (auto &[leaf, pool] : at_leaf)
            if (pool.free >= c.gpus_needed) {
                tightest_first(c, pool);
                leaves.push_back(&pool);
            }
        std::stable_sort(leaves.begin(), leaves.end(),
                         [](const Pool *a, const Pool *b) { return a->free < b->free; });
        tightest_first(c, all);
        for (const auto &[shape, ratio] : shapes) {
            if (std::ssize(out) >= limit)
                return out;
            if (c.max_hosts > 0 && std::ssize(shape) > c.max_hosts)
                continue;
            // Under the tightest leaf that holds it, else over the leaves.
            ShapedFit fit;
            for (const Pool *leaf : leaves)
                if (std::ssize(leaf->hosts) >= std::ssize(shape) &&
                    !(fit = realize(c, *leaf, shape)).hosts.empty())
                    break;
            if (fit.hosts.empty() && at_leaf.size() > 1)
                fit = realize(c, all, shape);
            if (!fit.hosts.empty())
                out.push_back(std::move(fit));
        }
    }
    return out;
}

}  // namespace slurm_ai::detail
