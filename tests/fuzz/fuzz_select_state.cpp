// The select plugin's state file (ai_select_state.json, the failure history) on arbitrary
// bytes, parsed as slurmctld's start-up reads it (SelectService::restore_state reads the
// file and hands its text to parse_failure_history), without the file system. A text that
// is accepted must give a usable history (finite, non-negative counts at any later time),
// and what is dumped of it must read back the same; a rejected one names a field.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "slurm_ai/placement/failure_history.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char *>(data), size);
    auto history = slurm_ai::parse_failure_history(text, "ai_select_state.json");
    if (!history) {
        if (history.error().field.empty())
            __builtin_trap();
        (void)history.error().message();
        return 0;
    }
    for (const auto &[name, h] : history.value())
        for (double t : {0.0, 1.7e9, 1e12}) {
            const slurm_ai::HostFailures now = h.as_of(t);
            if (!std::isfinite(now.week) || now.week < 0 || !std::isfinite(now.month) ||
                now.month < 0)
                __builtin_trap();
        }
    auto again = slurm_ai::parse_failure_history(slurm_ai::dump_failure_history(history.value()),
                                                 "again");
    if (!again || again.value() != history.value())
        __builtin_trap();
    return 0;
}
