// Internal: which of a host's free GPUs a job gets, and in which order its ranks use them.
#pragma once

#include <vector>

#include "slurm_ai/placement/cluster_state.hpp"
#include "slurm_ai/topology/node_topology.hpp"

namespace slurm_ai::detail {

// The k best-linked free GPUs: highest average bandwidth among them; for multi-host jobs
// then the most distinct nearby NICs; then what stays free best linked (large free blocks
// kept whole); then the lowest indexes. Returned in ring order (each next GPU the best
// linked to the previous). Fewer than k free: empty.
std::vector<int> best_linked_gpus(const NodeTopology &t, GpuMask free, int k, bool multi_host);

// The k lowest-numbered free GPUs (what Slurm does without topology hints).
std::vector<int> lowest_gpus(GpuMask free, int k);

}  // namespace slurm_ai::detail
