// The cluster a simulation runs on, from real files: node topologies (hwloc or NCCL XML)
// under either a real fabric file, a fabric in the shape of a real one repeated to the
// size asked for (testbed::shaped_topology_conf), or one switch (the measurement testbed).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "slurm_ai/common/input_error.hpp"
#include "slurm_ai/placement/shape_profile.hpp"
#include "slurm_ai/topology/cluster_graph.hpp"

namespace slurm_ai::sim {

struct ClusterSpec {
    std::vector<std::string> nodes;  // "FILE" or "HOSTLIST=FILE", as ClusterFiles
    // One of:
    std::string fabric;     // a fabric file (topology.conf or ibnetdiscover), with
    std::string guid_map;   // its GUID map when needed
    std::string shape_of;   // a fabric file whose shape is repeated, with
    std::string shape_map;  // its GUID map
    // For shape_of and for neither (one switch):
    int hosts = 64;
    double host_gbps = 800;
    // Measured step times by shape for the engine (EngineOptions::shape_profile): a
    // ShapeProfile file; "measured", derived from the scenario's measurements for hosts of
    // the nodes' GPUs (testbed::measured_shapes); "measured-without:A,B", the same leaving
    // models A and B out; empty: none. prepare() reads it.
    std::string shape_profile;
};

struct SimCluster {
    ClusterGraph graph;
    std::string description;  // one line for the output
    int max_gpus_per_host = 0;
    int gpus = 0;
    std::shared_ptr<const ShapeProfile> shapes;  // ClusterSpec::shape_profile, read
};

Parsed<SimCluster> build_cluster(const ClusterSpec &spec);

}  // namespace slurm_ai::sim
