// The processes of Slurm jobs on one node, as the node's ai-lease agent finds them in
// /proc (it runs as root): what it renews the lease for and what it fences. Read from
// each process' environment, which slurmstepd set and the job cannot take back from it:
// SLURM_JOB_ID, SLURMD_NODENAME (several slurmd on one host each run their own tasks) and
// AI_CHECKPOINT_DIR (the job asked --ai-checkpoint, so ai-recover brings it back).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace slurm_ai::lease {

struct NodeTask {
    pid_t pid = 0;
    std::uint32_t job = 0;
    bool checkpointing = false;  // AI_CHECKPOINT_DIR in its environment
    bool operator==(const NodeTask &) const = default;
};

// Every process under proc_root (normally /proc) with a SLURM_JOB_ID whose SLURMD_NODENAME
// is `node`, by pid. A process that ends while it is read is left out.
std::vector<NodeTask> node_tasks(const std::string &proc_root, const std::string &node);

// The jobs with a checkpointing process among `tasks`, sorted, each once.
std::vector<std::uint32_t> checkpointing_jobs(const std::vector<NodeTask> &tasks);

// Sends `signal` to every task of the listed jobs (sorted); the pids it reached.
std::vector<pid_t> signal_jobs(const std::vector<NodeTask> &tasks,
                               const std::vector<std::uint32_t> &jobs, int signal);

}  // namespace slurm_ai::lease
