// What ai-recover remembers of a checkpointing job's current run, in
// <StateSaveLocation>/ai_recover/runs/<job id>.json (state_paths::recover_run): Slurm drops
// a failed node from a --no-kill job's NodeList before the down trigger runs, and a job
// that grew holds nodes the select plugin's record does not name. One type, and its text
// parsed and written here without the file system; ai-recover reads and writes the file.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "slurm_ai/common/input_error.hpp"

namespace slurm_ai::checkpoint {

struct RecoverRun {
    std::int64_t run_start = 0;  // StartTime of the run
    std::set<std::string> nodes;  // every node it held
    bool signalled = false;       // the time-limit checkpoint request went out for this run
    bool operator==(const RecoverRun &) const = default;
};

// {"run_start": whole seconds, "nodes": [names], "signalled": bool}, each optional. Not
// JSON, or a field of another type, is an error naming `source` (ai-recover then starts
// the run's bookkeeping over). What dump_recover_run writes reads back the same.
Parsed<RecoverRun> parse_recover_run(std::string_view text, std::string_view source);
std::string dump_recover_run(const RecoverRun &r);

}  // namespace slurm_ai::checkpoint
