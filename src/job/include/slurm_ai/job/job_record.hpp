// The per-job record the select plugin writes when a job starts, and that ai-explain,
// ai-resize, ai-elasticd and ai-recover read: <StateSaveLocation>/ai_select/jobs/<id>.json.
// One type, one path function, one parser and one printer of its text (used by the reader
// and the writer, and fuzzed without the file system); the JSON keys are the file format
// admins and tools already read (ai-explain --json prints it), so they stay.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "slurm_ai/common/input_error.hpp"
#include "slurm_ai/job/job_hints.hpp"

namespace slurm_ai {

// What the engine decided for a job it placed.
struct JobDecision {
    std::string policy;  // engine, tree-bestfit, ..., engine-grow, engine-gang
    std::string nodes;   // host list, in rank order
    std::string ranks;   // host:gpu per rank
    double comm_s = 0;   // modelled communication time per step
    double lower_bound_s = 0;
    double efficiency = 0;
    double risk_per_day = 0;
    std::string algorithm;  // the collective's algorithm the model chose
    double decision_ms = 0;
    std::string pattern;  // a CommPattern name, or "dag"
    std::uint64_t bytes = 0;
    bool operator==(const JobDecision &) const = default;
};

// Why the engine left a job it was asked to place to plain cons_tres, in the few words a
// metric label carries (ai-metrics counts them); the record's fallback_reason says it in
// full. Jobs that never asked (no hints, Policy=passthrough) have none.
enum class FallbackClass {
    kNoTopology,     // no valid ai_select.conf and fabric loaded
    kInvalidHint,    // an --ai-* option the plugin could not read
    kDemand,         // the job's request has no demand the model can place
    kOutsideFabric,  // none of the job's candidate nodes is a host of the fabric
    kExpansion,      // an expansion job (a grow) the engine could not plan
};
inline constexpr std::string_view kFallbackClassNames[] = {
    "no_topology", "invalid_hint", "demand", "outside_fabric", "expansion"};

struct JobRecord {
    std::uint32_t job_id = 0;
    std::string nodes;  // as Slurm allocated them
    std::string gpus;   // "n1:0,1 n2:2,3", or ""
    JobHints hints;     // as the job typed them (hints.dag is not kept: only its size)
    std::uint64_t dag_compact_bytes = 0;
    std::map<std::string, std::string> options;  // option name -> the text as typed
    std::vector<std::string> hint_errors;
    std::optional<JobDecision> decision;  // none: placed by plain cons_tres
    bool fell_back = false;
    std::string fallback_reason;         // why the engine left it to cons_tres
    std::optional<FallbackClass> fallback_class;  // the same, classed (none before 2026-11)
    std::string cons_tres_would_choose;  // with Debug=yes
    std::string elastic_start;           // how a clamped --ai-elastic job started
    // An --ai-elastic job's MAX within Slurm's node range at its start (elastic_within):
    // the size CommShare measures its computation at (job_goodput's `nodes`), which
    // slurmctld no longer gives once the job runs. 0: not elastic, or recorded before
    // 2026-11-29.
    std::uint32_t elastic_start_max = 0;
    std::int64_t recorded_at = 0;        // seconds since the epoch
};

// <state_dir>/ai_select/jobs/<job_id>.json
std::string job_record_path(const std::string &state_dir, std::uint32_t job_id);

void to_json(nlohmann::json &j, const JobDecision &d);
void from_json(const nlohmann::json &j, JobDecision &d);
void to_json(nlohmann::json &j, const JobRecord &r);
// Throws nlohmann::json::exception on a record of the wrong shape (parse_job_record turns
// that into an InputError).
void from_json(const nlohmann::json &j, JobRecord &r);

// The record's text, as the file holds it; an error naming `source` when it is not JSON
// or not a record. What dump_job_record writes reads back as the same record.
Parsed<JobRecord> parse_job_record(std::string_view text, std::string_view source);
std::string dump_job_record(const JobRecord &r);

// The job's record; an error naming the file when it is missing, unreadable or not a
// record (the job has not started, or was not placed by select/ai_cons_tres).
Parsed<JobRecord> read_job_record(const std::string &state_dir, std::uint32_t job_id);
// Writes it atomically (readers never see half a record). Throws on I/O errors.
void write_job_record(const std::string &state_dir, const JobRecord &r);

// What the plugin knows of a job that waits, for ai-explain and ai-metrics: its hints (a
// pending job's --ai-* options are in its SPANK environment, which slurmctld shows no
// client). <state_dir>/ai_select/pending/<id>.json, written once, the first time the
// engine does not start the job, and removed when it starts or ends. Why it waits is not
// kept: it changes with the cluster, and the readers ask the engine themselves.
struct PendingNote {
    std::uint32_t job_id = 0;
    JobHints hints;  // as the job typed them (hints.dag is not kept)
    std::map<std::string, std::string> options;
    bool operator==(const PendingNote &) const = default;
};

Parsed<PendingNote> parse_pending_note(std::string_view text, std::string_view source);
std::string dump_pending_note(const PendingNote &n);
// The job's note; an error naming the file when there is none or it is not a note.
Parsed<PendingNote> read_pending_note(const std::string &state_dir, std::uint32_t job_id);
// Written atomically; throws on I/O errors. Removing a note that is not there is no error.
void write_pending_note(const std::string &state_dir, const PendingNote &n);
void remove_pending_note(const std::string &state_dir, std::uint32_t job_id);

}  // namespace slurm_ai
