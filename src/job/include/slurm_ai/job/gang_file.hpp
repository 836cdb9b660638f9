// The gangs' state the select plugin keeps for ai-elasticd:
// <StateSaveLocation>/ai_select/gangs.json, one entry per gang (named per user) with the
// last verdict of its barrier. The plugin writes it; ai-elasticd reads it to release gangs
// that timed out and to end the rest of a gang whose member failed. One type, one path
// function, one reader and one writer; the JSON keys are the file's format.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "slurm_ai/common/input_error.hpp"
#include "slurm_ai/job/job_hints.hpp"

namespace slurm_ai {

// Where a gang's barrier stands.
enum class GangState {
    kWaiting,   // not all SIZE members are pending and eligible yet
    kTimedOut,  // TIMEOUT passed before the gang could start
    kStarting,  // every member is there: the plugin places them all now
    kStarted,   // some members run: the pending rest start as soon as they fit
};
std::string_view to_string(GangState s);
// "waiting", "timed_out", "starting" or "started"; nothing for any other text.
std::optional<GangState> gang_state_from(std::string_view text);

struct GangRecord {
    std::string key;  // gang_key(user_id, name)
    std::uint32_t user_id = 0;
    GangSpec spec;
    std::set<std::uint32_t> members;  // every job that was ever a live member
    GangState state = GangState::kWaiting;
    std::string reason;
    std::int64_t deadline = 0;  // first submission + TIMEOUT; 0: none
    std::int64_t updated = 0;   // when the plugin last looked at the gang
    bool operator==(const GangRecord &) const = default;
};

// <state_dir>/ai_select/gangs.json
std::string gang_file_path(const std::string &state_dir);

void to_json(nlohmann::json &j, const GangRecord &g);
// Throws nlohmann::json::exception on an entry of the wrong shape or an unknown status.
void from_json(const nlohmann::json &j, GangRecord &g);

// Every gang in the file; none when there is no file yet (no gang has been seen). An error
// names the file when it is unreadable or not a gang file.
Parsed<std::vector<GangRecord>> read_gang_file(const std::string &state_dir);
// Writes it atomically (ai-elasticd never reads half a file). Throws on I/O errors.
void write_gang_file(const std::string &state_dir, std::span<const GangRecord> gangs);

}  // namespace slurm_ai
