// What a job tells the suite about itself through the --ai-* options: its communication
// pattern, a task DAG file, elasticity, gang membership, checkpointing and how strictly it
// wants locality. The same parser serves the SPANK plugin (where the user types the
// value, so a bad one stops sbatch before any job exists) and the select plugin (which
// reads the values back from the job's SPANK environment inside slurmctld).
//
// Every parse_* function is pure: it returns the value or an InputError naming the option,
// the offending text and what was expected. None of them throws on bad input.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "slurm_ai/common/input_error.hpp"
#include "slurm_ai/job/comm_spec.hpp"

namespace slurm_ai {

// --ai-elastic=MIN:MAX[:signal=SIG] (nodes; SIG tells the job of every resize).
struct ElasticSpec {
    std::uint32_t min_nodes = 0;
    std::uint32_t max_nodes = 0;
    int signal = 0;  // 0: no signal, the job reads its resize file
    bool operator==(const ElasticSpec &) const = default;
};

// The node counts slurmctld accepts for a job: from its --nodes (or what its tasks imply),
// its partition and its limits. max 0 means no upper bound.
struct NodeRange {
    std::uint32_t min = 1;
    std::uint32_t max = 0;
};

// The one rule for an elastic job's start beside Slurm's node request: Slurm's range is
// the contract for a start (limits, accounting, reservations and cons_tres rely on it), so
// each end of MIN:MAX is clamped into it: `-N14 --ai-elastic=2:2` starts on 14 nodes,
// `-N2-4 --ai-elastic=1:8` on 2 to 4, and with no --nodes the range stands as typed.
// Resizes after the start keep to MIN:MAX as typed: Slurm accepts a running job's shrink
// (scontrol update NumNodes) and growth (expansion jobs) whatever its --nodes said.
ElasticSpec elastic_within(const ElasticSpec &asked, NodeRange slurm);
// "14", "2-4", or "2 or more" (no upper bound, or Slurm's own cap of 500000).
std::string to_string(NodeRange r);

// --ai-gang=NAME:SIZE[:TIMEOUT][:onfail=kill|keep].
struct GangSpec {
    std::string name;
    std::uint32_t size = 0;
    std::uint32_t timeout_s = 0;   // 0: wait forever
    bool keep_on_failure = false;  // onfail=keep: a failed member leaves the others running
    bool operator==(const GangSpec &) const = default;
};

// --ai-checkpoint=DIR[,signal=SIG@SECS][,keep=N].
struct CheckpointSpec {
    std::string dir;
    int signal = 10;                      // SIGUSR1 on Linux
    std::uint32_t signal_before_s = 300;  // seconds before the time limit
    std::uint32_t keep = 3;               // complete checkpoints kept
    bool operator==(const CheckpointSpec &) const = default;
};

// --ai-locality=hard|soft[:WAIT].
struct LocalitySpec {
    bool hard = false;
    std::uint32_t wait_s = 0;  // soft: how long to wait for a better placement
    bool operator==(const LocalitySpec &) const = default;
};

struct JobHints {
    std::optional<CommSpec> comm;
    std::optional<std::string> dag_file;
    std::optional<std::string> dag;  // the DAG itself, compacted at submit (see spank_env.hpp)
    std::optional<ElasticSpec> elastic;
    std::optional<GangSpec> gang;
    std::optional<CheckpointSpec> checkpoint;
    std::optional<LocalitySpec> locality;

    bool empty() const {
        return !comm && !dag_file && !dag && !elastic && !gang && !checkpoint && !locality;
    }
    bool operator==(const JobHints &) const = default;
};

// One row of the option table that the SPANK plugin registers in a loop.
struct HintOption {
    const char *name;     // without the leading "--"
    const char *arginfo;  // one word describing the argument
    const char *usage;    // help text, starting with the plugin's tag
};
std::span<const HintOption> hint_options();

// The DAG path must be absolute (sbatch may run in another directory than the job).
Parsed<std::string> parse_dag_path(std::string_view text);
Parsed<ElasticSpec> parse_elastic(std::string_view text);
Parsed<GangSpec> parse_gang(std::string_view text);
Parsed<CheckpointSpec> parse_checkpoint(std::string_view text);
Parsed<LocalitySpec> parse_locality(std::string_view text);

// Parses `value` as the option `name` (with or without "--", "-" or "_" separators) and
// stores it in `hints`. Returns the error, or nothing on success.
std::optional<InputError> apply_hint(JobHints &hints, std::string_view name,
                                     std::string_view value);

void to_json(nlohmann::json &j, const JobHints &h);
// The inverse of to_json, for records written by to_json (a job's record): the compact DAG
// is not in that form (only its size), so hints.dag stays empty. Throws
// nlohmann::json::exception on a value of the wrong shape.
void from_json(const nlohmann::json &j, JobHints &h);

// Sizes: "4096", "512K", "1.5G", "2GiB", "100MB" (K/M/G/T are powers of 1024, as Slurm's
// --mem). Durations: "90", "90s", "15m", "2h", "1d".
Parsed<std::uint64_t> parse_size(std::string_view field, std::string_view text);
// The inverse for messages: "1 GiB", "64 MiB", "1.5 KiB", "300 B".
std::string format_size(std::uint64_t bytes);
Parsed<std::uint32_t> parse_duration(std::string_view field, std::string_view text);
// A short time in milliseconds, from 1 ms to 1 h: "250ms", "1.5s", "2" (seconds), "1m".
Parsed<std::uint32_t> parse_millis(std::string_view field, std::string_view text);
// An integer from min to max.
Parsed<std::uint32_t> parse_count(std::string_view field, std::string_view text, std::uint32_t min,
                                  std::uint32_t max);
// A signal as the --ai-* options take it: "USR1", "SIGUSR1", "usr1" or a number 1-64.
Parsed<int> parse_signal(std::string_view field, std::string_view text);

}  // namespace slurm_ai
