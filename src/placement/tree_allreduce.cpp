#include <cmath>

#include "collectives.hpp"

namespace slurm_ai::detail {

// NCCL's double binary tree across hosts: two complementary binary trees, each carrying
// half of the data, pipelined in chunks, so that a step costs the tree's depth in
// latency and one pass of half the data over the busiest link.
double tree_allreduce_s(const FlowModel &m, double bytes,
                        std::vector<std::pair<std::string, double>> *terms) {
    if (m.ranks_per_host() == 0)
        return -1;
    const auto &by_host = m.ranks_by_host();
    const std::size_t g = static_cast<std::size_t>(m.ranks_per_host()), n = by_host.size();
    double intra = ring_allreduce_s(m, by_host, bytes);
    double inter = 0;
    if (n > 1) {
        std::vector<Flow> flows;
        double half = bytes / static_cast<double>(g) / 2;
        for (std::size_t k = 0; k < g; ++k) {
            for (std::size_t i = 1; i < n; ++i) {
                std::size_t parent = (i - 1) / 2;
                // Tree one in host order, tree two mirrored, so leaves of one are inner
                // nodes of the other.
                flows.push_back({by_host[i][k], by_host[parent][k], half});
                flows.push_back({by_host[n - 1 - i][k], by_host[n - 1 - parent][k], half});
            }
        }
        double depth = std::floor(std::log2(static_cast<double>(n)));
        double one_pass = m.phase_time(flows);
        m.record(flows, 2);
        double hop_alpha = m.alpha(by_host[0][0], by_host[1][0]);
        // Reduce up, broadcast down.
        inter = 2 * (one_pass + depth * hop_alpha);
    }
    if (terms) {
        terms->emplace_back("intra-host", intra);
        terms->emplace_back("inter-host trees", inter);
    }
    return intra + inter;
}

}  // namespace slurm_ai::detail
