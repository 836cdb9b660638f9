// A whole cluster from files: a fabric (topology.conf or ibnetdiscover output, with an
// optional GUID map) and node topologies (hwloc or NCCL XML) for every host or for
// hostlists of them. The tools and the select plugin describe clusters this way.
#pragma once

#include <string>
#include <vector>

#include "slurm_ai/cluster_graph.hpp"
#include "slurm_ai/input_error.hpp"

namespace slurm_ai {

struct ClusterFiles {
    std::string fabric;              // topology.conf or ibnetdiscover output
    std::string guid_map;            // optional, for ibnetdiscover
    std::vector<std::string> nodes;  // "FILE" (every host) or "HOSTLIST=FILE"; later wins
};

Parsed<ClusterGraph> load_cluster(const ClusterFiles &files, LatencyModel latency = {});

}  // namespace slurm_ai
