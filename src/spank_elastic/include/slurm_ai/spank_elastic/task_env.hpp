// The environment each task of a job step gets from the SPANK plugin (remote context):
// what PyTorch, DeepSpeed and NCCL read, computed from the step's nodes, the fabric and
// the node's topology.
//
// Every task computes the same rank layout on its own, from inputs that are identical on
// all nodes (the step's node list and task counts, and the fabric file that slurmctld's
// select plugin also reads), with the very function the placement engine uses to order
// hosts (ring_host_order). So ranks agree across nodes without any message between them.
//
// Pure logic: the SPANK adapter gathers the inputs and applies the result.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "slurm_ai/common/input_error.hpp"
#include "slurm_ai/spank_elastic/spank_config.hpp"
#include "slurm_ai/topology/cluster_graph.hpp"
#include "slurm_ai/topology/node_topology.hpp"

namespace slurm_ai {

// What every task of a step sees alike.
struct StepInfo {
    std::uint32_t job_id = 0;
    bool batch = false;                // the batch script's own step: job-level variables only
    std::vector<std::string> nodes;    // the step's nodes in Slurm's order
    std::vector<std::uint32_t> tasks;  // tasks on each of them, same order
};

// From SLURM_STEP_NODELIST ("n[1-3]") and SLURM_STEP_TASKS_PER_NODE ("2(x2),1").
Parsed<StepInfo> parse_step_info(std::uint32_t job_id, bool batch, std::string_view node_list,
                                 std::string_view tasks_per_node);

// Ranks: the nodes in rank order, and each node's first rank. Ranks of a node are
// contiguous; the node of rank 0 is the rendezvous (MASTER_ADDR) node.
struct RankLayout {
    std::vector<std::size_t> order;         // indexes into StepInfo::nodes, in rank order
    std::vector<std::uint32_t> first_rank;  // per StepInfo::nodes index
    std::uint32_t world_size = 0;
    bool by_topology = false;  // false: Slurm's order (no fabric, or a node not in it)
};
RankLayout rank_layout(const StepInfo &step, const ClusterGraph *fabric);

// Which of its node's GPUs, NICs and CPUs one task should use.
struct TaskBinding {
    std::vector<int> gpus;          // positions in the node's GPU list, in ring order
    std::vector<std::string> hcas;  // verbs devices nearest those GPUs (NCCL_IB_HCA)
    std::vector<int> cpus;          // PUs near those GPUs; empty: leave the affinity alone
    int numa_node = -1;
};

// node_gpus: the step's GPUs on this node as topology indexes (SLURM_STEP_GPUS), in
// Slurm's order. Tasks split them evenly along the ring (gpu_rank_order: by rail where
// gpu_rails gives every GPU's rail, as the engine ordered them); when they do not divide
// evenly the task gets all of them (and NICs/CPUs for all). topo may be null (nothing
// known).
TaskBinding bind_task(const NodeTopology *topo, const std::vector<int> &node_gpus,
                      std::uint32_t local_id, std::uint32_t local_count,
                      const std::vector<int> &gpu_rails = {});

// One task's place in the step, and what Slurm already put in its environment.
struct TaskPlace {
    std::string node;                   // this node's name (SLURMD_NODENAME)
    std::uint32_t local_id = 0;         // task index on this node (S_TASK_ID)
    std::vector<int> node_gpus;         // SLURM_STEP_GPUS: topology indexes
    std::vector<std::string> cuda_ids;  // CUDA_VISIBLE_DEVICES as Slurm set it
    std::vector<int> gpu_rails{};       // this node's GPUs -> rail (host_gpu_rails); empty:
                                        // the fabric has no rails here
};

using EnvList = std::vector<std::pair<std::string, std::string>>;

struct TaskEnv {
    EnvList set;                     // variables to export, in this order
    std::vector<int> cpus;           // CPU affinity to apply (intersected with the current)
    std::vector<std::string> notes;  // why a part was skipped (for the debug log)
};

// master_addr: the address of the first node in rank order (the adapter resolves it).
// nccl_topo_file: a file already written for this node, or empty.
TaskEnv task_environment(const SpankConfig &config, const StepInfo &step, const RankLayout &layout,
                         const TaskPlace &task, const NodeTopology *topo,
                         std::string_view master_addr, std::string_view nccl_topo_file);

// The port every task of a job agrees on: min + job id modulo the range.
std::uint32_t master_port(const SpankConfig &config, std::uint32_t job_id);

// Parses a comma-separated list of GPU indexes ("0,2,3"); empty text gives an empty list.
Parsed<std::vector<int>> parse_gpu_list(std::string_view field, std::string_view text);

}  // namespace slurm_ai
