#include <algorithm>
#include <limits>
#include <unordered_map>

#include "collectives.hpp"

namespace slurm_ai::detail {

// Every rank sends bytes/p to every other rank. Rather than p^2 flows, the time is the
// largest of what each bottleneck must carry divided by its capacity: each host's NICs,
// each leaf's uplinks (the bisection of the job across that leaf), and the GPU links
// inside each host; plus one message latency per peer.
CommEstimate all_to_all(const FlowModel &m, double bytes) {
    const int p = m.ranks();
    if (p < 2)
        return CommEstimate{0, "alltoall", {}};
    const double per_pair = bytes / p;
    double nic_s = 0, uplink_s = 0, intra_s = 0;
    std::unordered_map<int, int> at_leaf;
    const auto &hosts = m.hosts();
    const auto &by_host = m.ranks_by_host();
    for (std::size_t i = 0; i < hosts.size(); ++i) {
        double gh = static_cast<double>(by_host[i].size());
        double out = gh * per_pair * (p - gh);
        nic_s = std::max(nic_s, out / (m.nic_gbs(hosts[i]) * 1e9));
        if (gh > 1) {
            double slowest = std::numeric_limits<double>::infinity();
            for (std::size_t a = 0; a + 1 < by_host[i].size(); ++a)
                slowest = std::min(slowest, m.intra_gbs(by_host[i][a], by_host[i][a + 1]));
            intra_s = std::max(intra_s, gh * (gh - 1) * per_pair / (slowest * 1e9));
        }
    }
    for (int r = 0; r < p; ++r)
        ++at_leaf[m.leaf_of(r)];
    for (auto [leaf, k] : at_leaf) {
        if (leaf < 0 || k == p || m.uplink_gbs(leaf) <= 0)
            continue;
        double crossing = static_cast<double>(k) * per_pair * (p - k);
        uplink_s = std::max(uplink_s, crossing / (m.uplink_gbs(leaf) * 1e9));
    }
    double alpha = hosts.size() > 1 ? m.alpha(by_host[0][0], by_host[1][0]) : m.alpha(0, 1);
    double latency = (p - 1) * alpha;
    double seconds = std::max({nic_s, uplink_s, intra_s}) + latency;
    return CommEstimate{seconds,
                        "alltoall",
                        {{"NIC", nic_s},
                         {"bisection (leaf uplinks)", uplink_s},
                         {"inside hosts", intra_s},
                         {"latency", latency}}};
}

}  // namespace slurm_ai::detail
