// A job's checkpoints as the suite sees them (--ai-checkpoint=DIR): which one is the
// newest complete one, which ones keep=N lets go, and what each task is told at start.
//
// The convention a job follows (docs/checkpoint.md):
//   - a checkpoint is an entry of DIR, a directory or a file, whose name holds its step
//     number: the last run of digits counts ("step-000120", "ckpt_120.pt", "120");
//     names starting with '.' are work in progress and never looked at;
//   - it is complete once its marker exists, written last by the job: the file COMPLETE
//     inside a directory checkpoint, or a file NAME.complete beside it (files or
//     directories). Writing into a hidden name and renaming it into place also works.
// An entry without its marker is torn (a writer died or is still at it) and is never
// offered. Newer means a higher step; equal steps are ordered by when their marker was
// written.
//
// Everything here reads the file system but never Slurm.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "slurm_ai/common/input_error.hpp"
#include "slurm_ai/job/job_hints.hpp"

namespace slurm_ai::checkpoint {

inline constexpr std::string_view kMarkerInside = "COMPLETE";
inline constexpr std::string_view kMarkerSuffix = ".complete";

struct Checkpoint {
    std::string path;  // DIR/name
    std::string name;
    std::uint64_t step = 0;
    bool directory = false;
    bool complete = false;
    double completed_at = 0;  // the marker's modification time (s since the epoch)
    bool operator==(const Checkpoint &) const = default;
};

// The step number a name stands for: its last run of digits (at most 18 of them).
std::optional<std::uint64_t> step_of(std::string_view name);

// DIR with "%j" replaced by the job id (DIR may name a per-job directory that way).
std::string expand_dir(std::string_view dir, std::string_view job_id);

// Every checkpoint of `dir`, oldest first. A missing directory holds none (a first start);
// one that cannot be read is an error naming it.
Parsed<std::vector<Checkpoint>> scan(const std::string &dir);

std::optional<Checkpoint> newest_complete(const std::vector<Checkpoint> &all);

// True when `after` is a complete checkpoint newer than `before` (or there was none).
bool advanced(const std::optional<Checkpoint> &before, const std::optional<Checkpoint> &after);

// keep=N: the N newest complete checkpoints stay, older complete ones go, and so do torn
// entries older than the oldest one kept (a torn entry newer than that may be a write in
// progress). The newest complete checkpoint is never in the list, whatever N is; nothing
// goes while there is no complete checkpoint.
std::vector<Checkpoint> plan_prune(const std::vector<Checkpoint> &all, std::uint32_t keep);

// Removes what plan_prune chose, each checkpoint's markers first so that a removal cut
// short leaves a torn entry, never a complete-looking partial one. Nothing is followed
// through a symbolic link (remove_beneath): a checkpoint that is a link loses its marker
// and the link, not what the link names. With `owner` (the job's uid, where a daemon
// prunes for the job), an entry of another user is left and named in the messages.
// Returns one message per entry that could not be removed.
std::vector<std::string> apply_prune(const std::vector<Checkpoint> &doomed,
                                     std::optional<std::uint32_t> owner = std::nullopt);

// What each task of a job with --ai-checkpoint gets in its environment at every start:
//   AI_CHECKPOINT_DIR     DIR (with %j expanded)
//   AI_CHECKPOINT_RESUME  the newest complete checkpoint; unset when there is none
//   AI_CHECKPOINT_STEP    its step; unset with it
//   AI_CHECKPOINT_SIGNAL  the number of the checkpoint-request signal
//   AI_CHECKPOINT_KEEP    keep=N
//   AI_RESTART_COUNT      how often Slurm has restarted the job (SLURM_RESTART_COUNT)
// A job that finds AI_CHECKPOINT_DIR set and no AI_CHECKPOINT_RESUME starts fresh.
using EnvPairs = std::vector<std::pair<std::string, std::string>>;
EnvPairs checkpoint_task_env(const CheckpointSpec &spec, std::string_view job_id,
                             std::uint32_t restart_count, const std::optional<Checkpoint> &newest);
// The same, scanning the directory; an unreadable directory offers no checkpoint.
EnvPairs checkpoint_task_env(const CheckpointSpec &spec, std::string_view job_id,
                             std::uint32_t restart_count);

}  // namespace slurm_ai::checkpoint
