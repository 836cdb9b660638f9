// Job traces ai-sim replays, read from CSV files with a header:
//   - the Philly trace (../shared/data/comm-measurements/philly.csv): timestamp as
//     "YYYY-MM-DD HH:MM:SS" (UTC), duration in seconds, num_gpus;
//   - the Pollux workloads (workloads/workload-N.csv): name, time (seconds), application,
//     num_replicas, batch_size, and no duration;
//   - any CSV with a submit time (a date as above, or seconds), a GPU count and,
//     optionally, a duration: columns submit_s|submit|submit_time|time|timestamp,
//     gpus|num_gpus|num_replicas, duration_s|duration|run_time|runtime, and optionally
//     name|job, model|application, batch_size.
// Errors name the file, line, field and what was expected.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "slurm_ai/common/input_error.hpp"

namespace slurm_ai::sim {

struct TraceJob {
    std::string name;
    double submit_s = 0;  // seconds after the trace's first submission
    int gpus = 1;
    double duration_s = 0;  // recorded run time
    bool has_duration = false;
    std::string model;      // the application, when the trace names one
    double batch_size = 0;  // total batch over all replicas, 0 when not given
};

struct Trace {
    std::string source;          // the file
    std::string format;          // "philly", "pollux workload" or "csv"
    double epoch_unix = -1;      // Unix time of submit_s 0 when the trace has dates, else -1
    std::vector<TraceJob> jobs;  // by submit time, then file order
};

inline constexpr int kMaxTraceGpus = 1 << 16;

Parsed<Trace> load_trace(const std::string &path);

// The jobs submitted in [start_s, start_s + length_s), and with overlay k > 1 also those of
// the k - 1 windows that follow, each laid over the first at its offset in its window
// (k days of arrivals replayed on one day, each at its time of day). Then, with
// max_jobs > 0, only the first max_jobs. Submit times are relative to start_s.
struct SliceOptions {
    double start_s = 0;
    double length_s = 86400;
    int overlay = 1;
    int max_jobs = 0;
};
Trace slice(const Trace &trace, const SliceOptions &options);

// Gives every job without a duration the duration of a job of `pool` with the same GPU
// count (else the nearest count that `pool` has), drawn with the seed. Returns how many
// jobs got one, or an error naming the pool's file when it has no duration at all.
Parsed<int> draw_durations(Trace &trace, const Trace &pool, std::uint64_t seed);

// "2017-10-03 00:00:00" for Unix time t (UTC).
std::string format_date(double unix_time);
// Reads such a date (UTC) as Unix time; nothing on bad text.
bool parse_date(std::string_view text, double &unix_time);

}  // namespace slurm_ai::sim
