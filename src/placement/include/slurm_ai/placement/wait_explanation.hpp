// Why a pending job waits, in the cluster's own terms, and what would start it now: the
// constraint that holds it ("needs 9 nodes with 4 free GPUs each (36 GPUs) in one NVLink
// domain; the largest free is 6 nodes (24 GPUs), in nvl-1-2"), when it would fit from the
// running jobs' end times ("at 14:20, when job 812 ends"), and requests that fit now: a
// size within its --ai-elastic range, --ai-locality=soft, a --segment size. ai-explain
// prints it for a pending job and ai-metrics' map lists it beside the job.
//
// The units are the fabric's: NVLink domains where it has them, else leaf switches. A
// host fits when it is usable and has the job's GPUs per node free; the engine decides
// whether the job places on what fits (the same search the select plugin runs).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "slurm_ai/placement/placement_engine.hpp"

namespace slurm_ai {

// A running job as the explanation needs it: the hosts it holds and when it ends.
struct RunningJobEnd {
    std::uint32_t job_id = 0;
    std::vector<int> hosts;    // host indexes
    std::int64_t end_time = 0;  // seconds since the epoch; 0: unknown (no time limit)
};

struct WaitExplanation {
    std::string holds;  // the constraint, in one sentence
    std::string frees;  // "at 14:20 UTC, when job 812 ends"; "" when the ends do not say
    std::int64_t frees_at = 0;
    std::uint32_t frees_with_job = 0;
    std::vector<std::string> starts_now;  // requests that would start now, one each
    bool fits_now = false;  // the engine places it on what is free: Slurm's reason holds it
};

// `at_size` resizes the demand to another node count (elastic jobs; nullptr: none).
// `elastic_min` and `elastic_max` are its --ai-elastic range (0: not elastic).
struct WaitRequest {
    JobDemand demand;
    std::uint32_t elastic_min = 0, elastic_max = 0;
    std::function<JobDemand(const JobDemand &, std::uint32_t)> at_size;
};

WaitExplanation explain_wait(const PlacementEngine &engine, const WaitRequest &request,
                             const ClusterState &state, std::span<const RunningJobEnd> running);

}  // namespace slurm_ai
