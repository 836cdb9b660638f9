#include "slurm_ai/gang/gang_placement.hpp"

#include <algorithm>
#include <numeric>

namespace slurm_ai {
namespace {

GangPlacement sequential(const PlacementEngine &engine, std::span<const GangPart> parts,
                         const ClusterState &base, const PlacementPolicy &policy) {
    GangPlacement out;
    std::vector<std::size_t> order(parts.size());
    std::iota(order.begin(), order.end(), 0);
    // Largest first: the hardest part to fit chooses before the free view fragments.
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return parts[a].demand.ranks() > parts[b].demand.ranks();
    });
    ClusterState free = base;
    std::vector<Placement> placed(parts.size());
    for (std::size_t i : order) {
        ClusterState view = free;
        for (std::size_t h = 0; h < view.usable.size(); ++h)
            view.usable[h] = view.usable[h] && h < parts[i].usable.size() && parts[i].usable[h];
        auto d = engine.place(parts[i].demand, view, policy);
        if (!d.placement) {
            out.reason = "member " + std::to_string(parts[i].job_id) +
                         " does not fit beside the others: " + d.reason;
            return out;
        }
        free.allocate(*d.placement);
        placed[i] = std::move(*d.placement);
    }
    out.parts = std::move(placed);
    return out;
}

}  // namespace

GangPlacement place_gang(const PlacementEngine &engine, std::span<const GangPart> parts,
                         const ClusterState &base, const PlacementPolicy &policy) {
    GangPlacement out;
    if (parts.empty()) {
        out.reason = "no members to place";
        return out;
    }
    const auto shape = parts.front().demand.gpus_per_host();
    const bool uniform = std::all_of(parts.begin(), parts.end(), [&](const GangPart &p) {
        return p.demand.gpus_per_host() == shape && p.usable == parts.front().usable &&
               !p.demand.dag;
    });
    if (uniform && parts.size() > 1) {
        // One combined job: every part's hosts, talking as the first part does.
        JobDemand all = parts.front().demand;
        all.min_nodes = all.max_nodes = 0;
        all.total_gpus = 0;
        for (const auto &p : parts) {
            all.min_nodes += p.demand.min_nodes;
            all.total_gpus += p.demand.total_gpus;
        }
        all.max_nodes = all.min_nodes;
        all.gpus_per_node = shape;
        ClusterState view = base;
        for (std::size_t h = 0; h < view.usable.size(); ++h)
            view.usable[h] =
                view.usable[h] && h < parts.front().usable.size() && parts.front().usable[h];
        auto d = engine.place(all, view, policy);
        if (d.placement && d.placement->hosts.size() == all.min_nodes) {
            std::size_t next = 0;
            for (const auto &part : parts) {
                Placement p;
                p.policy = d.placement->policy;
                for (std::uint32_t i = 0; i < part.demand.min_nodes; ++i, ++next) {
                    p.hosts.push_back(d.placement->hosts[next]);
                    p.gpus.push_back(d.placement->gpus[next]);
                }
                engine.score(part.demand, &base, p);
                out.parts.push_back(std::move(p));
            }
            out.joint = true;
            return out;
        }
    }
    return sequential(engine, parts, base, policy);
}

}  // namespace slurm_ai
