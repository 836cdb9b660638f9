// What the SPANK plugin does in sbatch/srun and in slurmstepd, Slurm-free: its
// plugstack.conf arguments, the --ai-dag compaction at submit time, what one slurmstepd
// learns once for its step (the fabric, this node's topology, the NCCL topology file, where
// elastic jobs' views live), the --ai-* values Slurm handed the option callback, and each
// task's environment. spank_task_bridge.cpp holds one SpankStep and only translates C.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "slurm_ai/common/input_error.hpp"
#include "slurm_ai/spank_elastic/spank_config.hpp"
#include "slurm_ai/spank_elastic/task_env.hpp"
#include "slurm_ai/topology/cluster_graph.hpp"
#include "slurm_ai/topology/node_topology.hpp"

namespace slurm_ai {

// The compact DAG travels in the job's SPANK environment, which slurmctld keeps with the
// job record and copies into every launch message: it must stay small.
inline constexpr std::size_t kMaxCompactDag = 64 * 1024;

// The --ai-dag file read and checked, in its compact form; the error is the DAG's (naming
// the file and the field), or names the size when the compact form exceeds kMaxCompactDag.
Parsed<std::string> compact_dag_for_job(const std::string &path);

// A task's view of its environment, as slurmstepd gives it.
struct TaskIo {
    std::function<const char *(const char *)> get;       // null when unset
    std::function<bool(const char *, const char *)> set;  // false when it failed
    std::function<const char *(const char *)> resolve;   // a node's address; null: its name
};

class SpankStep {
  public:
    // The plugstack.conf arguments.
    std::optional<InputError> configure(std::span<const std::string_view> args);
    // Once per step: loads the fabric and this node's topology (the config beside
    // slurm_conf_path unless the arguments name one), finds the elastic view directory
    // and, where enabled, writes the NCCL topology file. Never fails the step: what went
    // wrong comes back as notes for the log ("" when all went well).
    std::string setup(const std::string &slurm_conf_path, const std::string &state_save_location,
                      const std::string &node_name, std::uint32_t job_id, std::uint32_t step_id);
    // An --ai-* value as Slurm handed it to the option callback (Slurm removes the options
    // from the tasks' environment before they start).
    void remember_option(std::string name, std::string value);
    // Removes what setup() wrote; the error when it could not.
    std::optional<std::string> cleanup();
    // One task's environment, exported through io.set, and its CPU affinity narrowed to
    // its GPUs' NUMA node. Notes of what was skipped; an error when the step's own
    // variables cannot be read.
    Parsed<std::string> task_setup(const TaskIo &io, std::uint32_t job_id, bool batch,
                                   std::uint32_t local_id);

    const std::string &nccl_topo_file() const { return nccl_topo_file_; }

  private:
    SpankConfig config_;
    std::optional<ClusterGraph> fabric_;
    std::optional<NodeTopology> node_;
    std::string nccl_topo_file_;
    bool wrote_nccl_topo_ = false;
    std::string elastic_view_dir_;  // where ai-resize/ai-elasticd publish resized jobs' views
    std::map<std::string, std::string, std::less<>> options_;  // by option name

    std::optional<NodeTopology> load_node(const std::string &node_name, std::string &notes);
    void prepare_nccl_topo(std::uint32_t job_id, std::uint32_t step_id,
                           const std::string &node_name, std::string &notes);
    std::optional<std::string> option_value(const TaskIo &io, std::string_view option) const;
    void checkpoint_env(const TaskIo &io, std::uint32_t job_id, EnvList &out,
                        std::string &notes) const;
    void elastic_env(const TaskIo &io, std::uint32_t job_id, EnvList &out,
                     std::string &notes) const;
};

}  // namespace slurm_ai
