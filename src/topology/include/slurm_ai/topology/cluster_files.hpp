// A whole cluster from files: a fabric (topology.conf or ibnetdiscover output, with an
// optional GUID map) and node topologies (hwloc or NCCL XML) for every host or for
// hostlists of them. The tools and the select plugin describe clusters this way.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "slurm_ai/common/input_error.hpp"
#include "slurm_ai/topology/cluster_graph.hpp"

namespace slurm_ai {

struct ClusterFiles {
    std::string fabric;              // topology.conf or ibnetdiscover output
    std::string guid_map;            // optional, for ibnetdiscover
    std::vector<std::string> nodes;  // "FILE" (every host) or "HOSTLIST=FILE"; later wins
    // Multi-node NVLink domains the fabric file does not describe: a hostlist each, or
    // "blocks" (each block of the fabric that names no domain is one).
    std::vector<std::string> nvlink_domains{};
    double nvlink_gpu_gbps = 0;  // their GPUs' NVLink to other hosts, Gb/s; 0: default
};

// Adds ClusterFiles::nvlink_domains to a fabric ("nvlink-N" or the block's name). A host
// in two domains, or not in the fabric, is an error naming NvlinkDomain and the value.
std::optional<InputError> add_nvlink_domains(Fabric &fabric, const std::vector<std::string> &specs,
                                             double gpu_gbps);

Parsed<ClusterGraph> load_cluster(const ClusterFiles &files, LatencyModel latency = {});

// The two halves of load_cluster. A fabric file (with its optional GUID map); `field`
// names the setting that gave the path in the error for a node topology file.
Parsed<Fabric> load_fabric(const std::string &path, const std::string &guid_map,
                           std::string_view field = "fabric");
// The graph of `fabric` with the node topologies `node_specs` name ("FILE" or
// "HOSTLIST=FILE", later wins; each file is parsed once).
Parsed<ClusterGraph> attach_nodes(Fabric fabric, const std::vector<std::string> &node_specs,
                                  LatencyModel latency = {});

}  // namespace slurm_ai
