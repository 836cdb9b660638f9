// Where a job runs: its hosts and, on each, its GPUs, in rank order, with what the cost
// and risk models say of it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "slurm_ai/topology/cluster_graph.hpp"

namespace slurm_ai {

struct Placement {
    std::vector<int> hosts;              // host indexes in rank order, each host once
    std::vector<std::vector<int>> gpus;  // per entry of hosts: its GPU indexes in rank order;
                                         // empty for a job without GPUs (one rank per host)

    // Filled by the engine and the cost model.
    std::string policy;
    double comm_s = 0;         // predicted communication time per step
    double lower_bound_s = 0;  // the same job ideally placed on an empty cluster
    double efficiency = 1;     // lower_bound_s / comm_s, in [0, 1]
    double risk = 0;           // failure-risk score (expected share of the job lost per day)
    std::string algorithm;     // how the cost model says the job communicates here
    double decision_ms = 0;    // time the search took

    std::size_t rank_count() const;
    std::vector<GpuRef> ranks() const;  // rank -> (host, gpu); gpu -1 for host ranks
    bool empty() const { return hosts.empty(); }
};

// The rank order of a set of hosts: grouped by leaf switch (ring and pipeline neighbours
// on neighbouring links), graph order within a leaf. The engine lays out its placements
// this way, and the SPANK plugin recomputes it on every node to number the ranks: both
// must call this one function.
std::vector<int> ring_host_order(const ClusterGraph &graph, std::vector<int> hosts);

// The order in which a node's ranks use its GPUs: from the first, each next GPU the one
// best linked to the previous (ties: lower index). Also used by the SPANK plugin.
std::vector<int> gpu_ring_order(const NodeTopology &t, std::vector<int> gpus);

// The order in which a host's ranks use its GPUs: gpu_ring_order, then (stable) by the
// rail of each GPU's NIC where every one has a rail (gpu_rail, topology GPU index -> rail;
// empty: no rails), so that local rank k of every host sits on the same rail when the
// hosts give GPUs of the same rails. The engine and the SPANK plugin both call it.
std::vector<int> gpu_rank_order(const NodeTopology &t, std::vector<int> gpus,
                                const std::vector<int> &gpu_rail);
// The rail of each of a host's GPUs (ClusterGraph::gpu_rail); empty where the host's
// fabric has no rails.
std::vector<int> host_gpu_rails(const ClusterGraph &graph, int host);

// Host names compressed as a Slurm hostlist, and "n1:0,1 n2:2,3"-style GPU lists.
std::string host_list(const ClusterGraph &graph, const Placement &p);
std::string gpu_list(const ClusterGraph &graph, const Placement &p);
// The inverse of gpu_list, without a graph: each host's name and GPU indexes (none for a
// bare host name); nullopt for text of another shape.
using HostGpus = std::pair<std::string, std::vector<int>>;
std::optional<std::vector<HostGpus>> parse_gpu_list(std::string_view text);

void to_json(nlohmann::json &j, const Placement &p);

}  // namespace slurm_ai
