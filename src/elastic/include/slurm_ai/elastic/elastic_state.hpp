// ai-elasticd's own memory, kept in a small JSON file so that the daemon survives its own
// restarts and slurmctld's: the grows it has under way (each an expansion job it must
// merge or cancel), when each job last changed size (for the grow cooldown), and the gang
// events it has already acted on (so a restart never acts twice).
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "slurm_ai/common/input_error.hpp"

namespace slurm_ai {

// A grow under way: job_id grows by `add` nodes through the expansion job expansion_id,
// which must run before `deadline` or be cancelled.
struct GrowOp {
    std::uint32_t job_id = 0;
    std::uint32_t expansion_id = 0;
    std::uint32_t add = 0;
    std::uint32_t nodes_before = 0;  // the job's size when the grow began
    std::int64_t deadline = 0;
    std::string reason;
    bool operator==(const GrowOp &) const = default;
};

struct ElasticdState {
    std::vector<GrowOp> grows;
    std::map<std::uint32_t, std::int64_t> last_resize;  // job -> time of its last resize
    std::set<std::string> gangs_released;               // gang keys whose timeout was acted on
    std::set<std::uint32_t> failures_handled;           // gang members whose failure was acted on
    bool operator==(const ElasticdState &) const = default;
};

std::string dump_elasticd_state(const ElasticdState &s);
// A file of another version or a corrupt one is an error naming the file; the daemon
// then starts clean and reconciles with slurmctld, which is the truth anyway.
Parsed<ElasticdState> parse_elasticd_state(std::string_view text, std::string_view source);

// The name and comment an expansion job carries, so that anyone (ai-resize, ai-elasticd
// after a restart, the select plugin) can tell whose it is and until when it may wait.
// The name is this prefix and the id of the job it grows ("ai-expand:42").
inline constexpr std::string_view kExpansionJobPrefix = "ai-expand:";
std::string expansion_job_name(std::uint32_t job_id);
// The job an expansion job expands, from its name; 0 when the name is not one of ours.
std::uint32_t expanded_job_of(std::string_view job_name);
std::string expansion_comment(std::int64_t deadline);
// The deadline in a comment written by expansion_comment; 0 when there is none.
std::int64_t expansion_deadline(std::string_view comment);

}  // namespace slurm_ai
