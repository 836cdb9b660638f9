// The gangs' state the select plugin keeps for ai-elasticd:
// <StateSaveLocation>/ai_select/gangs.json, one entry per gang (named per user) with the
// last verdict of its barrier. The plugin writes it; ai-elasticd reads it to release gangs
// that timed out and to end the rest of a gang whose member failed. One type, one path
// function, a pure parser and printer of the text and the file functions around them; the
// JSON keys are the file's format.
#pragma once

#include <cstdint>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "slurm_ai/common/input_error.hpp"
#include "slurm_ai/gang/gang.hpp"
#include "slurm_ai/job/job_hints.hpp"

namespace slurm_ai {

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

// The file's text and back. parse_gang_file names `source` (the path) in its errors and
// never throws on bad input.
std::string dump_gang_file(std::span<const GangRecord> gangs);
Parsed<std::vector<GangRecord>> parse_gang_file(std::string_view text, const std::string &source);

// Every gang in the file; none when there is no file yet (no gang has been seen). An error
// names the file when it is unreadable or not a gang file.
Parsed<std::vector<GangRecord>> read_gang_file(const std::string &state_dir);
// Writes it atomically (ai-elasticd never reads half a file). Throws on I/O errors.
void write_gang_file(const std::string &state_dir, std::span<const GangRecord> gangs);

}  // namespace slurm_ai
