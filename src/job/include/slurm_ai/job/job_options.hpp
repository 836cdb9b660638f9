// A job's --ai-* options read from its SPANK environment: the one type of that decoding,
// wherever it is made (slurmctld's select plugin; ai-resize and ai-elasticd inside the
// job). It holds the hints, the options that did not parse, and the compacted task DAG
// parsed into a TaskDag. JobOptionsCache keeps one decoding per job and decodes again only
// when the job's environment changes, so a pending job that slurmctld tests every
// scheduling pass is parsed once.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "slurm_ai/job/job_hints.hpp"
#include "slurm_ai/job/spank_env.hpp"
#include "slurm_ai/job/task_dag.hpp"

namespace slurm_ai {

struct JobOptions {
    JobHints hints;                            // what parsed; hints.dag keeps the compact text
    std::vector<InputError> errors;            // the options that did not parse, in env order
    std::map<std::string, std::string> typed;  // option name -> its text as typed
    std::optional<TaskDag> dag;                // hints.dag, parsed
    std::optional<InputError> dag_error;       // why hints.dag did not parse
};

// Decodes `env` (entries NAME=VALUE: a job's SPANK environment in any of the forms of
// spank_env.hpp, or a whole process environment; entries of others are ignored). An option
// given twice keeps its last good value. Never throws on bad input: bad options land in
// `errors`, a bad DAG in `dag_error`.
JobOptions decode_job_options(std::span<const char *const> env);

// Identifies an environment's content (order included): equal environments give equal
// fingerprints; a change to any entry gives another one but with negligible odds.
std::uint64_t env_fingerprint(std::span<const char *const> env);

class JobOptionsCache {
  public:
    // The job's options, decoded now if the job is new here or its environment changed.
    // The reference stays valid until the next call to get() or forget().
    const JobOptions &get(std::uint32_t job_id, std::span<const char *const> env);
    // A job that ended, or whose record is gone: its decoding is dropped.
    void forget(std::uint32_t job_id);
    // How many decodings were made (the plugin's debug statistics): a cache that works
    // decodes once per job and environment.
    std::uint64_t decodes() const { return decodes_; }
    std::size_t size() const { return entries_.size(); }

    // Jobs slurmctld stops testing without a job_fini (cancelled while pending) are
    // dropped once this many jobs are cached: those not used for the longest time go.
    static constexpr std::size_t kMaxJobs = 65536;

  private:
    struct Entry {
        std::uint64_t fingerprint = 0;
        std::uint64_t used = 0;  // use_clock_ at the last get()
        JobOptions options;
    };
    std::unordered_map<std::uint32_t, Entry> entries_;
    std::uint64_t decodes_ = 0;
    std::uint64_t use_clock_ = 0;
};

}  // namespace slurm_ai
