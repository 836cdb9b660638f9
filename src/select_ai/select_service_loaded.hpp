// Internal to SelectService (select_service.cpp, select_gangs.cpp, select_sizes.cpp): what
// a successful load holds.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "slurm_ai/config/plugin_config.hpp"
#include "slurm_ai/placement/learned_risk.hpp"
#include "slurm_ai/placement/placement_engine.hpp"
#include "slurm_ai/select_ai/select_service.hpp"
#include "slurm_ai/topology/cluster_graph.hpp"

namespace slurm_ai {

// A multi-GPU job tested and not started waits this long (a few backfill passes of 30 s).
constexpr double kStillWaiting_s = 300;

struct SelectService::Loaded {
    PluginConfig config;
    ClusterGraph graph;
    std::unique_ptr<PlacementEngine> engine;
    std::optional<PlacementPolicy> policy;  // config.policy, made once at load
    std::vector<int> host_of_node;          // Slurm node index -> host, -1 outside the fabric
    std::vector<int> node_of_host;          // host -> Slurm node index, -1 unknown to Slurm
    std::optional<LearnedRisk> learned;     // RiskModel=, when it beat the hand-written rates
};

}  // namespace slurm_ai
