// Automatic elasticity for jobs submitted with --ai-elastic=MIN:MAX: what ai-elasticd
// does on each look at the cluster.
//   shrink  a job waits for nodes (it cannot start: Slurm's reason Resources or Priority)
//           and outranks running elastic jobs whose nodes above their MIN, together
//           with the idle nodes, would let it start: those jobs give back just enough
//           nodes, the lowest-priority job first. Nothing shrinks for a job that would
//           still not fit, so no work is lost for nothing.
//   grow    an elastic job below its MAX grows into idle nodes of its partition while no
//           pending job of higher priority waits there; at most once per cooldown.
// Pure logic over counts; which nodes move is decided by elastic_plan.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "slurm_ai/job/job_hints.hpp"

namespace slurm_ai {

struct ElasticJob {
    std::uint32_t job_id = 0;
    std::uint32_t priority = 0;
    std::string partition;
    std::uint32_t nodes = 0;       // now
    ElasticSpec spec;              // MIN:MAX
    bool resizing = false;         // a grow of it is under way
    std::int64_t last_resize = 0;  // when it last changed size (0: never)
};

struct WaitingJob {
    std::uint32_t job_id = 0;
    std::uint32_t priority = 0;
    std::string partition;
    std::uint32_t nodes = 1;  // nodes it asks for (its minimum)
};

struct ElasticPolicyInput {
    std::vector<ElasticJob> elastic;
    std::vector<WaitingJob> waiting;            // pending jobs that could start if nodes were free
    std::map<std::string, std::uint32_t> idle;  // idle nodes per partition
    std::int64_t now = 0;
    std::uint32_t grow_cooldown_s = 60;
};

struct ElasticAction {
    enum class Kind { kShrink, kGrow } kind = Kind::kGrow;
    std::uint32_t job_id = 0;
    std::uint32_t nodes = 0;    // how many to add or release
    std::uint32_t for_job = 0;  // shrink: the job the nodes go to
    std::string reason;
};

// Shrinks first (highest-priority waiting job first), then grows (highest-priority
// elastic job first). A job gets at most one action per look.
std::vector<ElasticAction> plan_elastic(const ElasticPolicyInput &in);

}  // namespace slurm_ai
