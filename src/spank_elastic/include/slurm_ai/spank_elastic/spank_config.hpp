// The SPANK plugin's own arguments, from its plugstack.conf line:
//
//   required /usr/lib/.../spank_ai.so rank_env=on gpu_bind=on nic_bind=on cpu_bind=on
//            nccl_topo=off nccl_topo_dir=/tmp master_port=29500-30499
//            config=/etc/slurm/ai_select.conf node_topology=/etc/slurm/node.xml
// (one line in the file; wrapped here)
//
// Each part of the task environment can be switched off on its own. An unknown key or a
// bad value is an error naming the argument, so a typo never silently changes what jobs
// get.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "slurm_ai/common/input_error.hpp"

namespace slurm_ai {

struct SpankConfig {
    bool rank_env = true;    // MASTER_ADDR, MASTER_PORT, WORLD_SIZE, RANK, LOCAL_RANK, ...
    bool gpu_bind = true;    // CUDA_VISIBLE_DEVICES per task, in ring order
    bool nic_bind = true;    // NCCL_IB_HCA: the NICs nearest the task's GPUs
    bool cpu_bind = true;    // the task's CPU affinity narrowed to its GPUs' NUMA node
    bool nccl_topo = false;  // NCCL_TOPO_FILE written from the node's topology
    std::string nccl_topo_dir = "/tmp";
    std::uint32_t master_port_min = 29500;  // MASTER_PORT = min + job id mod range size
    std::uint32_t master_port_max = 30499;
    std::string config;         // ai_select.conf; empty: beside slurm.conf
    std::string node_topology;  // this node's topology file; empty: from config, else live
    std::string lease_program = default_lease_program();  // AI_REPORT_FAILURE's ai-lease

    static std::string default_lease_program();

    bool operator==(const SpankConfig &) const = default;
};

// Parses the arguments that follow the plugin's path on its plugstack.conf line.
Parsed<SpankConfig> parse_spank_args(std::span<const std::string_view> args);

}  // namespace slurm_ai
