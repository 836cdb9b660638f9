// Internal: which of a host's free GPUs a job gets, and in which order its ranks use them.
#pragma once

#include <vector>

#include "slurm_ai/placement/cluster_state.hpp"
#include "slurm_ai/topology/node_topology.hpp"

namespace slurm_ai::detail {

// Rails the job's GPUs use on the hosts chosen before (rail-optimized fabrics): another
// host's GPUs on the same rails keep every inter-host ring on one rail.
struct RailWish {
    std::vector<int> gpu_rail;  // this host's GPUs -> rail (-1 unknown)
    std::vector<int> wanted;    // the rails to match, one entry per GPU (a multiset)
};

// The k best-linked free GPUs: highest average bandwidth among them; for multi-host jobs
// then the most GPUs on the wanted rails (when `rails` is given), then the most distinct
// nearby NICs; then what stays free best linked (large free blocks kept whole); then the
// lowest indexes. Returned in ring order (each next GPU the best linked to the previous).
// Fewer than k free: empty.
std::vector<int> best_linked_gpus(const NodeTopology &t, GpuMask free, int k, bool multi_host,
                                  const RailWish *rails = nullptr);

// The k lowest-numbered free GPUs (what Slurm does without topology hints).
std::vector<int> lowest_gpus(GpuMask free, int k);

}  // namespace slurm_ai::detail
