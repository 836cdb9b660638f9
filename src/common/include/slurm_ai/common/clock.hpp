// The clocks a decision reads, passed in by the caller: by default the real ones. A caller
// that needs an input to take the same path at every run (the fuzz targets, tests) passes
// a fixed clock, so that no time reaches what it checks (a record's timestamp, how long
// a job has waited, a decision's duration).
#pragma once

#include <chrono>
#include <functional>

namespace slurm_ai {

struct Clock {
    // Seconds since the epoch: failure histories, records, how long jobs have waited.
    std::function<double()> wall_s = [] {
        return std::chrono::duration<double>(
                   std::chrono::system_clock::now().time_since_epoch())
            .count();
    };
    // A monotonic time in milliseconds: how long a decision took, time budgets.
    std::function<double()> steady_ms = [] {
        return std::chrono::duration<double, std::milli>(
                   std::chrono::steady_clock::now().time_since_epoch())
            .count();
    };
};

// A clock that stands still: wall_s() is `at_s` and steady_ms() 0 at every read.
inline Clock fixed_clock(double at_s) {
    return Clock{[at_s] { return at_s; }, [] { return 0.0; }};
}

}  // namespace slurm_ai
