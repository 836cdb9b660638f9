// Human-readable summaries of node topologies, fabrics and GPU fabric reports, as `ai-topo show` prints them.
#pragma once

#include <string>

#include "slurm_ai/topology/fabric.hpp"
#include "slurm_ai/topology/gpu_fabric.hpp"
#include "slurm_ai/topology/node_topology.hpp"

namespace slurm_ai::cli {

std::string summarize(const NodeTopology &t);
std::string summarize(const Fabric &f);
std::string summarize(const NodeGpuFabric &n);

}  // namespace slurm_ai::cli
