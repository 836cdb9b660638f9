// The restart log of a checkpointing job: one JSON object per line in
// <StateSaveLocation>/ai_recover/jobs/<job id>.jsonl, appended by ai-recover and shown by
// ai-explain. A record says what happened (a node failure and what was done about it, a
// checkpoint request, the job running again), why, and from which checkpoint.
//
// Appends are single write() calls on an O_APPEND descriptor, so concurrent writers never
// interleave inside a line; a reader skips a line it cannot parse (a writer that died
// mid-line) and counts it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "slurm_ai/common/input_error.hpp"

namespace slurm_ai::checkpoint {

struct RestartRecord {
    double at = 0;               // when it was written (s since the epoch)
    std::string event;           // "node_failure", "checkpoint_request", "running_again"
    std::string action;          // node_failure: "requeue", "shrink", "exclude", "none", "failed"
    std::string reason;          // in words, for people
    std::int64_t run_start = 0;  // StartTime of the run it concerns
    std::vector<std::string> failed;           // node_failure: the failed nodes the job held
    std::string nodes;                         // the job's nodes before (failure) or now (others)
    std::string survivors;                     // node_failure: nodes still held
    std::string excluded;                      // ExcNodeList after the action
    std::optional<std::uint64_t> step_before;  // newest complete checkpoint before asking
    std::optional<std::uint64_t> step_after;   // ... and when the action was taken
    std::string checkpoint;                    // the checkpoint the next start resumes from
    double waited_s = 0;                       // grace waited for the survivors' checkpoint
    double down_s = 0;           // running_again: since Slurm marked the failed node DOWN
    std::uint32_t restarts = 0;  // Slurm's restart count after the action
    bool operator==(const RestartRecord &) const = default;
};

void to_json(nlohmann::json &j, const RestartRecord &r);
// Throws nlohmann::json exceptions on a record without "at" or "event".
void from_json(const nlohmann::json &j, RestartRecord &r);

std::string restart_log_path(const std::string &state_dir, std::uint32_t job_id);

struct RestartLog {
    std::vector<RestartRecord> records;  // in file order
    std::size_t bad_lines = 0;           // lines that were not records
};

// The log's text, without the file system: a line that is not a record (a writer that
// died mid-line, a hand edit) is skipped and counted, so no text is an error.
RestartLog parse_restart_log(std::string_view text);
// One record as its line of the log, newline included; parse_restart_log reads it back.
std::string dump_restart_record(const RestartRecord &r);

// Appends one record (creating the directory and the file). Returns the error, if any.
std::optional<std::string> append_record(const std::string &path, const RestartRecord &r);
// A missing file is an empty log; an unreadable one an error naming it.
Parsed<RestartLog> read_restart_log(const std::string &path);

// One line for people: "2026-11-22 13:05:17 node failure (n2 DOWN: Not responding):
// requeued with n2 excluded, resumes from step 131 (asked the survivors: 120 -> 131 in
// 2.1 s)".
std::string describe(const RestartRecord &r);

}  // namespace slurm_ai::checkpoint
