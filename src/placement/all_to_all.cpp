#include <algorithm>
#include <limits>
#include <map>

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

    // Islands: a domain's ranks (key: domain), else a host's (key: -1 - host), numbered
    // densely (flat arrays: this runs for every candidate of a decision in slurmctld).
    std::vector<int> island_key, island_of(static_cast<std::size_t>(p));
    std::vector<double> island_size;
    for (int r = 0; r < p; ++r) {
        const int key = m.domain_of(r) >= 0 ? m.domain_of(r) : -1 - m.host_of(r);
        auto it = std::find(island_key.begin(), island_key.end(), key);
        if (it == island_key.end()) {
            island_key.push_back(key);
            island_size.push_back(0);
            it = std::prev(island_key.end());
        }
        island_of[static_cast<std::size_t>(r)] = static_cast<int>(it - island_key.begin());
        ++island_size[static_cast<std::size_t>(island_of[static_cast<std::size_t>(r)])];
    }
    auto size_of = [&](int r) {
        return island_size[static_cast<std::size_t>(island_of[static_cast<std::size_t>(r)])];
    };

    double nic_s = 0, intra_s = 0, uplink_s = 0;
    for (std::size_t i = 0; i < hosts.size(); ++i) {
        const auto &rs = by_host[i];
        double gh = static_cast<double>(rs.size());
        double out = gh * per_pair * (p - size_of(rs[0]));
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
            intra_s = std::max(intra_s, (size_of(r) - 1) * per_pair / (m.domain_gbs(r) * 1e9));

    // Per leaf L (rail r): senders are the ranks on hosts with a port on L (on L itself
    // without PXN), receivers the ranks whose port is on another leaf of rail r (of any
    // rail where the fabric has none), pairs inside one island excepted.
    std::map<int, int> rail_of;  // leaf -> rail
    // The leaves each rank's traffic leaves by: sends[sent_from[r] .. sent_from[r + 1]).
    std::vector<int> sends, sent_from(static_cast<std::size_t>(p) + 1, 0);
    for (int r = 0; r < p; ++r) {
        const int leaf = m.leaf_of(r);
        if (leaf >= 0) {
            rail_of.emplace(leaf, g.fabric().rail_of_leaf(leaf));
            sends.push_back(leaf);
            if (m.pxn(r))
                for (const auto &port : g.ports(m.host_of(r)))
                    if (port.leaf != leaf)
                        sends.push_back(port.leaf);
        }
        sent_from[static_cast<std::size_t>(r) + 1] = static_cast<int>(sends.size());
    }
    std::vector<std::pair<double, double>> at(island_key.size());  // senders, receivers
    for (auto [leaf, rail] : rail_of) {
        if (m.uplink_gbs(leaf) <= 0)
            continue;
        std::fill(at.begin(), at.end(), std::pair<double, double>{0, 0});
        double receivers = 0, crossing = 0;
        for (int r = 0; r < p; ++r) {
            const auto island = static_cast<std::size_t>(island_of[static_cast<std::size_t>(r)]);
            int l = m.leaf_of(r);
            if (l >= 0 && l != leaf && (rail < 0 || rail_of.at(l) == rail)) {
                ++at[island].second;
                ++receivers;
            }
            const auto from = sends.begin() + sent_from[static_cast<std::size_t>(r)];
            const auto to = sends.begin() + sent_from[static_cast<std::size_t>(r) + 1];
            if (std::find(from, to, leaf) != to)
                ++at[island].first;
        }
        for (const auto &[senders, received] : at)
            crossing += senders * (receivers - received);
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
