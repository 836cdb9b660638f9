#include <algorithm>
#include <numeric>
#include <string>

#include "collectives.hpp"

namespace slurm_ai::detail {

double ring_allreduce_s(const FlowModel &m, const std::vector<std::vector<int>> &rings,
                        double bytes) {
    std::vector<Flow> flows;
    std::size_t steps = 0;
    for (const auto &ring : rings) {
        std::size_t p = ring.size();
        if (p < 2)
            continue;
        steps = std::max(steps, 2 * (p - 1));
        for (std::size_t i = 0; i < p; ++i)
            flows.push_back({ring[i], ring[(i + 1) % p], bytes / static_cast<double>(p)});
    }
    if (!steps)
        return 0.0;
    m.record(flows, static_cast<double>(steps));
    return static_cast<double>(steps) * m.phase_time(flows);
}

double hierarchical_allreduce_s(const FlowModel &m, double bytes,
                                std::vector<std::pair<std::string, double>> *terms) {
    if (m.ranks_per_host() == 0)
        return -1;
    const auto &by_host = m.ranks_by_host();
    const std::size_t g = static_cast<std::size_t>(m.ranks_per_host()), n = by_host.size();
    // Inside every host at once: reduce-scatter and all-gather of bytes.
    double intra = ring_allreduce_s(m, by_host, bytes);
    // Across hosts: ring k links the k-th rank of every host and carries bytes / g.
    std::vector<std::vector<int>> rings(g);
    for (std::size_t k = 0; k < g; ++k)
        for (const auto &h : by_host)
            rings[k].push_back(h[k]);
    double inter = n > 1 ? ring_allreduce_s(m, rings, bytes / static_cast<double>(g)) : 0.0;
    if (terms) {
        terms->emplace_back("intra-host", intra);
        terms->emplace_back("inter-host rings", inter);
    }
    return intra + inter;
}

CommEstimate allreduce(const FlowModel &m, double bytes, std::string_view algo) {
    CommEstimate best;
    best.seconds = -1;
    auto consider = [&](std::string name, double s, std::vector<std::pair<std::string, double>> t) {
        if (s < 0)
            return;
        if (best.seconds < 0 || s < best.seconds)
            best = CommEstimate{s, std::move(name), std::move(t)};
    };
    if (m.ranks() < 2)
        return CommEstimate{0, "none", {}};
    std::vector<int> ring(m.ranks());  // the flat ring: every rank, in rank order
    std::iota(ring.begin(), ring.end(), 0);
    if (algo.empty() || algo == "ring") {
        LedgerScope scope(m.ledger(), "ring");
        double s = ring_allreduce_s(m, {ring}, bytes);
        consider("ring", s, {{"ring", s}});
    }
    if (algo.empty() || algo == "hierarchical") {
        // The time first: an argument's copy of t may be taken before the call fills it.
        std::vector<std::pair<std::string, double>> t;
        LedgerScope scope(m.ledger(), "hierarchical");
        double s = hierarchical_allreduce_s(m, bytes, &t);
        consider("hierarchical", s, std::move(t));
    }
    if (algo.empty() || algo == "tree") {
        std::vector<std::pair<std::string, double>> t;
        LedgerScope scope(m.ledger(), "tree");
        double s = tree_allreduce_s(m, bytes, &t);
        consider("tree", s, std::move(t));
    }
    if (best.seconds < 0) {  // uneven hosts and a named algorithm that needs them even
        LedgerScope scope(m.ledger(), "ring");
        double s = ring_allreduce_s(m, {ring}, bytes);
        best = CommEstimate{s, "ring", {{"ring (uneven hosts)", s}}};
    }
    return best;
}

CommEstimate tensor_parallel(const FlowModel &m, std::uint32_t group, double bytes) {
    std::vector<std::vector<int>> groups;
    for (int r = 0; r < m.ranks(); r += static_cast<int>(group)) {
        groups.emplace_back();
        for (int k = r; k < std::min(m.ranks(), r + static_cast<int>(group)); ++k)
            groups.back().push_back(k);
    }
    LedgerScope scope(m.ledger(), "tp:ring");
    double s = ring_allreduce_s(m, groups, bytes);
    return CommEstimate{s, "tp:ring", {{"groups of " + std::to_string(group), s}}};
}

}  // namespace slurm_ai::detail
