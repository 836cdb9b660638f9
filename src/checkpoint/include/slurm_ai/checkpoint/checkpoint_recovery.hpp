// What to do with a checkpointing job when nodes fail, decided from what Slurm reports,
// without Slurm: ai-recover (daemons/ai-recover) gathers the facts through the suite's
// Slurm client (libslurm), asks plan_recovery, and carries the plan out with Slurm's own
// commands.
//
// The shape of a recovery (docs/checkpoint.md):
//   - a job that Slurm kept running on its surviving nodes (--no-kill) is asked to
//     checkpoint first, if it has a checkpoint directory;
//   - then an elastic job that still has at least MIN nodes, and its batch host, shrinks
//     around the failed nodes; any other job is requeued with them excluded;
//   - a job Slurm already requeued (no --no-kill) gets the exclusion, and the start delay
//     Slurm puts on every requeued job is lifted once the old run is cleaned up.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "slurm_ai/common/input_error.hpp"
#include "slurm_ai/job/job_hints.hpp"

namespace slurm_ai::checkpoint {

// One job as Slurm shows it (the fields recovery needs; names as scontrol prints them).
struct JobView {
    std::uint32_t job_id = 0;
    std::uint32_t user_id = 0;  // UserId
    std::string state;                  // JobState: RUNNING, PENDING, COMPLETING, CONFIGURING, ...
    std::string reason;                 // Reason
    std::vector<std::string> nodes;     // NodeList, expanded
    std::vector<std::string> excluded;  // ExcNodeList, expanded
    std::string batch_host;             // BatchHost ("" when none)
    std::string partition;
    bool requeue = false;  // Requeue=1: the job may be requeued
    std::uint32_t restarts = 0;
    std::uint32_t num_nodes = 0;  // NumNodes (the lower bound of a range)
    std::int64_t submit_time = 0, start_time = 0, end_time = 0;  // epoch s; 0: unknown

    bool running() const { return state == "RUNNING" || state == "CONFIGURING"; }
    bool pending() const { return state == "PENDING"; }
    // Between two states: cleaning up after its end or on its way back to the queue.
    bool settling() const { return state == "COMPLETING" || state == "REQUEUED"; }
};

enum class Action {
    kNone,     // the failure does not concern the job (or there is nothing left to do)
    kShrink,   // keep running on the survivors
    kRequeue,  // requeue it with the failed nodes excluded
    kExclude,  // already pending again: exclude the failed nodes, lift the start delay
};
std::string_view to_string(Action a);

struct RecoveryInput {
    JobView job;
    std::vector<std::string> run_nodes;  // every node this run of the job held
    std::vector<std::string> failed;     // nodes reported down
    JobHints hints;
    std::vector<std::string> partition_nodes;  // all nodes of the job's partition
    std::int64_t failed_at =
        0;  // the earliest DOWN stamp of the failed nodes (epoch s); 0: unknown
};

struct RecoveryPlan {
    Action action = Action::kNone;
    std::vector<std::string> lost;       // failed nodes the job held
    std::vector<std::string> survivors;  // nodes it still holds (running jobs)
    bool ask_checkpoint = false;         // signal the survivors first
    std::vector<std::string> exclude;    // the job's ExcNodeList after recovery
    std::string why;                     // one sentence for the restart record
};

RecoveryPlan plan_recovery(const RecoveryInput &in);

// True when a job that has ended may have ended because nodes failed at `failed_at`:
// it FAILED (or ended NODE_FAIL) within SlurmdTimeout's default of 300 s of that DOWN
// stamp, before it too (its own srun may see a dead node first). A restarted job that
// loses a node before its script's first step starts ends FAILED at once ("Only
// allocated 1 nodes asked for 2"); such a job is requeued like a running one.
bool ended_by_node_failure(const JobView &job, std::int64_t failed_at);

// The exclusions after losing `lost`: the old ones plus the lost nodes, unless that would
// leave the partition fewer nodes than the job needs; then the old ones only (a DOWN node
// is not picked anyway; an exclusion must not make the job unrunnable). `note` says why
// when nodes were left out.
std::vector<std::string> plan_exclusions(const std::vector<std::string> &existing,
                                         const std::vector<std::string> &lost,
                                         const std::vector<std::string> &partition_nodes,
                                         std::uint32_t needed, std::string *note = nullptr);

// True when a pending job waits only for the delay Slurm puts on a requeued job (its begin
// time is reset to the requeue plus the credential lifetime): it was restarted and its
// begin time lies within a few credential lifetimes of its new submit time. The reason
// is not looked at: a job requeued after it ended keeps its old one (NonZeroExitCode)
// until the scheduler next looks at it.
bool begin_delayed_by_requeue(const JobView &job, std::int64_t now);

// When the time-limit checkpoint request is due: signal_before_s before the job's end.
// nullopt for a job that is not running or whose end is not known.
std::optional<std::int64_t> checkpoint_signal_due(const JobView &job, const CheckpointSpec &spec);

}  // namespace slurm_ai::checkpoint
