// The engine's candidates from a measured shape profile (ShapeProfile): a job whose GPUs
// Slurm may split over its hosts as it likes, placed in the shapes the site measured fastest.
#include <algorithm>
#include <map>

#include "policies.hpp"
#include "slurm_ai/placement/shape_profile.hpp"

namespace slurm_ai::detail {
namespace {

// Hosts of `pool` (all of host_size GPUs) giving `shape`, largest part first, each from the
// host with the fewest free GPUs that still gives it (the tightest fit keeps emptier hosts
// whole), lower node Weight then lower index first among equals. Empty when they cannot.
ShapedFit realize(const SearchContext &c, const std::vector<int> &pool,
                  const ShapeProfile::Shape &shape) {
    ShapedFit fit;
    std::vector<char> used(pool.size(), 0);
    for (int part : shape) {
        std::size_t pick = pool.size();
        for (std::size_t i = 0; i < pool.size(); ++i) {
            const int h = pool[i];
            if (used[i] || c.capacity[h] < part)
                continue;
            if (pick == pool.size())
                pick = i;
            const int p = pool[pick];
            if (c.capacity[h] < c.capacity[p] ||
                (c.capacity[h] == c.capacity[p] && c.state.weight[h] < c.state.weight[p]))
                pick = i;
        }
        if (pick == pool.size())
            return {};
        used[pick] = 1;
        fit.hosts.push_back(pool[pick]);
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
        // The eligible hosts of this size, by leaf, and all of them.
        std::map<int, std::vector<int>> at_leaf;
        std::vector<int> all;
        for (int h = 0; h < g.host_count(); ++h)
            if (c.capacity[h] > 0 && std::ssize(g.node(h).gpus) == size) {
                at_leaf[g.host_leaf(h)].push_back(h);
                all.push_back(h);
            }
        for (const auto &[shape, ratio] : profile->fastest(size, c.gpus_needed)) {
            if (std::ssize(out) >= limit)
                return out;
            if (c.max_hosts > 0 && std::ssize(shape) > c.max_hosts)
                continue;
            // Under one leaf where one holds it (the leaf it fits most tightly), else over
            // the leaves.
            ShapedFit best;
            int best_free = 0;
            for (const auto &[leaf, hosts] : at_leaf) {
                ShapedFit fit = realize(c, hosts, shape);
                int free = 0;
                for (int h : hosts)
                    free += c.capacity[h];
                if (!fit.hosts.empty() && (best.hosts.empty() || free < best_free)) {
                    best = std::move(fit);
                    best_free = free;
                }
            }
            if (best.hosts.empty() && at_leaf.size() > 1)
                best = realize(c, all, shape);
            if (!best.hosts.empty())
                out.push_back(std::move(best));
        }
    }
    return out;
}

}  // namespace slurm_ai::detail
