// What a job needs from the placement engine: how many nodes and GPUs, and how it
// communicates. Built from what Slurm knows of the job (its request) and its --ai-* hints,
// with defaults where the user said nothing.
#pragma once

#include <cstdint>
#include <optional>

#include "slurm_ai/job/job_hints.hpp"
#include "slurm_ai/job/task_dag.hpp"

namespace slurm_ai {

// Defaults for communication the user did not describe.
inline constexpr std::uint64_t kDefaultAllreduceBytes = 1ull << 30;  // ~250M fp32 gradients
inline constexpr std::uint64_t kDefaultActivationBytes = 64ull << 20;
inline constexpr std::uint64_t kDefaultTensorParallelBytes = 256ull << 20;
inline constexpr std::uint64_t kDefaultAllToAllBytes = 256ull << 20;
inline constexpr std::uint32_t kDefaultMicrobatches = 8;

// The numbers of a Slurm job request.
struct JobRequest {
    std::uint32_t min_nodes = 1;
    std::uint32_t max_nodes = 1;
    std::uint32_t gpus_per_node = 0;  // --gpus-per-node; 0: not given
    std::uint32_t total_gpus = 0;     // --gpus, or gpus_per_node x nodes; 0: no GPUs
    std::uint32_t tasks = 1;
};

struct JobDemand {
    std::uint32_t min_nodes = 1;
    std::uint32_t max_nodes = 1;
    std::uint32_t gpus_per_node = 0;  // 0: any split of total_gpus over the nodes
    std::uint32_t total_gpus = 0;     // 0: a job without GPUs, placed by hosts
    std::uint32_t tasks = 1;
    CommSpec comm;                // with every size filled in
    std::optional<TaskDag> dag;   // replaces comm when present
    LocalitySpec locality;        // default: soft, no wait
    std::uint32_t pending_s = 0;  // how long the job has waited so far
    // How long it has been held for a better placement (PlacementHold): since the first
    // test that could have started it; the time it waited before, the queue's doing, buys
    // its placement nothing.
    std::uint32_t held_s = 0;
    std::uint32_t time_limit_s = 0;  // its time limit; 0: unknown (never held for placement)

    // Communication endpoints: GPUs, or hosts for a job without GPUs.
    std::uint32_t ranks() const;
    // GPUs the job takes on each of its hosts: --gpus-per-node, or --gpus split evenly
    // over its minimum node count, as Slurm does; 0 for a job without GPUs.
    std::uint32_t gpus_per_host() const;
};

// Fills the defaults: a multi-GPU or multi-node job without --ai-comm is data parallel
// (allreduce of kDefaultAllreduceBytes); a single-GPU single-node job communicates with
// nothing; a pipeline without stages has one stage per node (at least 2); a tp group is
// one node's GPUs; moe has one expert per GPU; ps has one server.
JobDemand make_demand(const JobRequest &request, const JobHints &hints,
                      std::optional<TaskDag> dag = {});

}  // namespace slurm_ai
