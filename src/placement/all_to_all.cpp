#include <algorithm>
#include <limits>
#include <map>
#include <unordered_map>

#include "collectives.hpp"

namespace slurm_ai::detail {

// Every rank sends bytes/p to every other rank. Rather than p^2 flows, the time is the
// largest of what each bottleneck must carry divided by its capacity, plus one message
// latency per peer. Ranks of one host, or of one multi-node NVLink domain, form an
// island whose traffic stays on NVLink (or the host's GPU links); what leaves an island
// crosses each host's NICs and, between leaves, the leaves' uplinks. On a rail-optimized
// fabric a rank's traffic to a peer on rail r leaves its host by the host's rail-r port
// (PXN), so a leaf's uplinks carry, from the job's ranks on hosts cabled to it, what goes
// to ranks of its rail under other leaves (the bisection of each rail).
CommEstimate all_to_all(const FlowModel &m, double bytes) {
    const int p = m.ranks();
    if (p < 2)
        return CommEstimate{0, "alltoall", {}};
    const double per_pair = bytes / p;
    const auto &hosts = m.hosts();
    const auto &by_host = m.ranks_by_host();
    const ClusterGraph &g = m.graph();

    // Islands: a domain's ranks (key: domain), else a host's (key: -1 - host).
    auto island = [&](int r) { return m.domain_of(r) >= 0 ? m.domain_of(r) : -1 - m.host_of(r); };
    std::unordered_map<int, int> island_size;
    for (int r = 0; r < p; ++r)
        ++island_size[island(r)];

    double nic_s = 0, intra_s = 0, uplink_s = 0;
    for (std::size_t i = 0; i < hosts.size(); ++i) {
        const auto &rs = by_host[i];
        double gh = static_cast<double>(rs.size());
        double out = gh * per_pair * (p - island_size[island(rs[0])]);
        nic_s = std::max(nic_s, out / (m.nic_gbs(hosts[i]) * 1e9));
        if (m.domain_of(rs[0]) < 0 && gh > 1) {
            double slowest = std::numeric_limits<double>::infinity();
            for (std::size_t a = 0; a + 1 < rs.size(); ++a)
                slowest = std::min(slowest, m.intra_gbs(rs[a], rs[a + 1]));
            intra_s = std::max(intra_s, gh * (gh - 1) * per_pair / (slowest * 1e9));
        }
    }
    for (int r = 0; r < p; ++r)
        if (m.domain_of(r) >= 0)  // each GPU sends to the rest of its domain over NVLink
            intra_s = std::max(intra_s,
                               (island_size[island(r)] - 1) * per_pair / (m.domain_gbs(r) * 1e9));

    // Per leaf L (rail r): senders are the ranks on hosts with a port on L (on L itself
    // without PXN), receivers the ranks whose port is on another leaf of rail r (of any
    // rail where the fabric has none), pairs inside one island excepted.
    std::map<int, int> rail_of;                 // leaf -> rail
    std::vector<std::vector<int>> sends_on(p);  // rank -> leaves its traffic leaves by
    for (int r = 0; r < p; ++r) {
        int leaf = m.leaf_of(r);
        if (leaf < 0)
            continue;
        rail_of.emplace(leaf, g.fabric().rail_of_leaf(leaf));
        sends_on[r].push_back(leaf);
        if (m.pxn(r))
            for (const auto &port : g.ports(m.host_of(r)))
                if (port.leaf != leaf)
                    sends_on[r].push_back(port.leaf);
    }
    for (auto [leaf, rail] : rail_of) {
        if (m.uplink_gbs(leaf) <= 0)
            continue;
        std::unordered_map<int, std::pair<double, double>> at;  // island -> senders, receivers
        double receivers = 0, crossing = 0;
        for (int r = 0; r < p; ++r) {
            int l = m.leaf_of(r);
            if (l >= 0 && l != leaf && (rail < 0 || rail_of.at(l) == rail)) {
                ++at[island(r)].second;
                ++receivers;
            }
            if (std::find(sends_on[r].begin(), sends_on[r].end(), leaf) != sends_on[r].end())
                ++at[island(r)].first;
        }
        for (const auto &[key, sr] : at)
            crossing += sr.first * (receivers - sr.second);
        uplink_s = std::max(uplink_s, crossing * per_pair / (m.uplink_gbs(leaf) * 1e9));
        // What leaves by this leaf's uplinks comes back into other leaves alike: the
        // exchange is symmetric.
        LedgerScope scope(m.ledger(), "alltoall");
        m.record_uplink(leaf, crossing * per_pair, crossing * per_pair);
    }
    double alpha = hosts.size() > 1 ? m.alpha(by_host[0][0], by_host[1][0]) : m.alpha(0, 1);
    double latency = (p - 1) * alpha;
    double seconds = std::max({nic_s, uplink_s, intra_s}) + latency;
    return CommEstimate{seconds,
                        "alltoall",
                        {{"NIC", nic_s},
                         {"bisection (leaf uplinks)", uplink_s},
                         {"inside hosts and NVLink domains", intra_s},
                         {"latency", latency}}};
}

}  // namespace slurm_ai::detail
