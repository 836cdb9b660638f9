// Human-readable summaries of node topologies and fabrics, as `ai-topo show` prints them.
#pragma once

#include <string>

#include "slurm_ai/fabric.hpp"
#include "slurm_ai/node_topology.hpp"

namespace slurm_ai::cli {

std::string summarize(const NodeTopology &t);
std::string summarize(const Fabric &f);

// "0-3,8-11" for {0,1,2,3,8,9,10,11}.
std::string cpu_ranges(const std::vector<int> &cpus);

}  // namespace slurm_ai::cli
