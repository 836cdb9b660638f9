// What ai-recover and ai-explain read back from files, without the file system: a job's
// restart log (parse_restart_log, a record per line) and checkpoint names (a checkpoint
// directory can hold anything a user's job wrote). What is written of the records read
// back must read back as many records, and write the same text again.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "slurm_ai/checkpoint/checkpoint.hpp"
#include "slurm_ai/checkpoint/checkpoint_recovery.hpp"
#include "slurm_ai/checkpoint/checkpoint_restart_log.hpp"

namespace {

std::string dump(const slurm_ai::checkpoint::RestartLog &log) {
    std::string out;
    for (const auto &r : log.records)
        out += slurm_ai::checkpoint::dump_restart_record(r);
    return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    std::string_view text(reinterpret_cast<const char *>(data), size);
    using namespace slurm_ai::checkpoint;
    (void)step_of(text);
    (void)expand_dir(text, "12");
    const RestartLog log = parse_restart_log(text);
    for (const auto &r : log.records)
        (void)describe(r);
    const std::string written = dump(log);
    const RestartLog again = parse_restart_log(written);
    if (again.bad_lines || again.records.size() != log.records.size() || dump(again) != written)
        __builtin_trap();
    return 0;
}
