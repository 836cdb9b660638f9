// Internal to the cost model: one function per communication algorithm, each returning
// the time per step of its pattern over the ranks of a FlowModel (see cost_model.hpp).
#pragma once

#include <string_view>
#include <vector>

#include "flow_model.hpp"
#include "slurm_ai/job/task_dag.hpp"
#include "slurm_ai/placement/cost_model.hpp"

namespace slurm_ai::detail {

// A ring over `ring` (ranks in ring order): reduce-scatter then all-gather, 2(p-1) steps
// of bytes/p. Several rings (groups) run at once and share what they cross.
double ring_allreduce_s(const FlowModel &m, const std::vector<std::vector<int>> &rings,
                        double bytes);
// Inside each host, then one ring per local GPU index across hosts, then inside again.
// Needs the same number of ranks on every host; returns a negative time otherwise.
double hierarchical_allreduce_s(const FlowModel &m, double bytes,
                                std::vector<std::pair<std::string, double>> *terms);
// Inside each host as hierarchical, across hosts NCCL's double binary tree.
double tree_allreduce_s(const FlowModel &m, double bytes,
                        std::vector<std::pair<std::string, double>> *terms);
CommEstimate allreduce(const FlowModel &m, double bytes, std::string_view algo);

CommEstimate pipeline(const FlowModel &m, std::uint32_t stages, double bytes,
                      std::uint32_t microbatches);
CommEstimate tensor_parallel(const FlowModel &m, std::uint32_t group, double bytes);
CommEstimate all_to_all(const FlowModel &m, double bytes);
CommEstimate parameter_server(const FlowModel &m, std::uint32_t servers, double bytes);
CommEstimate dag_critical_path(const FlowModel &m, const TaskDag &dag);

}  // namespace slurm_ai::detail
