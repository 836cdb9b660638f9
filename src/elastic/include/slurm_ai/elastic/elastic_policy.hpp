// Automatic elasticity for jobs submitted with --ai-elastic=MIN:MAX: what ai-elasticd
// does on each look at the cluster, by one of two rules (ai_select.conf ElasticPolicy=).
//
// priority (the first rule, kept as an option):
//   shrink  a job waits for nodes (it cannot start: Slurm's reason Resources or Priority)
//           and outranks running elastic jobs whose nodes above their MIN, together
//           with the idle nodes, would let it start: those jobs give back just enough
//           nodes, the lowest-priority job first. Nothing shrinks for a job that would
//           still not fit, so no work is lost for nothing.
//   grow    an elastic job below its MAX grows into idle nodes of its partition while no
//           pending job of higher priority waits there; at most once per cooldown.
//
// goodput (the default): nodes go where they add the most useful work, within each job's
// MIN:MAX. A job's goodput on n nodes is the useful work it does per second there, in
// GPUs' worth of work at full speed (measured or modelled scalability: the caller says).
// Fairness, in this order:
//   1. waiting jobs first: a job that waits for nodes, of whatever priority, gets them
//      from elastic jobs above their MIN when that lets it start (then it would run
//      instead of doing nothing: no node does more than that). The nodes come one at a
//      time from the job that loses least goodput per GPU; nobody shrinks below MIN, and
//      nothing shrinks for a job that would still not fit;
//   2. idle nodes that a waiting job of the partition needs are its, not growth's: a
//      waiting job is never held back by an elastic job's growth;
//   3. the other idle nodes go one at a time to the job whose next node adds the most
//      goodput per GPU (ties: higher priority), while that gain is at least min_gain
//      (a node's GPUs doing at least that share of a GPU's work at full speed); at most
//      one grow per job per look and per cooldown.
// Pure logic over counts; which nodes move is decided by elastic_plan.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
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
    // goodput rule: goodput[n] for n = 0..MAX nodes (see above), and the GPUs a node
    // gives it. A job without a curve (goodput shorter than MAX + 1) neither grows nor
    // is chosen to shrink before the jobs that have one.
    std::vector<double> goodput;
    std::uint32_t gpus_per_node = 1;
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
    double min_gain = 0.5;  // goodput rule: the least goodput per GPU a grow must add
    // false where Slurm cannot merge an expansion job (SlurmClient::grow_unsupported):
    // shrinks only.
    bool can_grow = true;
};

struct ElasticAction {
    enum class Kind { kShrink, kGrow } kind = Kind::kGrow;
    std::uint32_t job_id = 0;
    std::uint32_t nodes = 0;    // how many to add or release
    std::uint32_t for_job = 0;  // shrink: the job the nodes go to
    std::string reason;
};

enum class ElasticRule { kPriority, kGoodput };
// "priority" or "goodput"; nothing for any other name.
std::optional<ElasticRule> elastic_rule(std::string_view name);
std::string_view to_string(ElasticRule rule);

// Shrinks first (highest-priority waiting job first), then grows (none without can_grow).
// A job gets at most one action per look.
std::vector<ElasticAction> plan_elastic(const ElasticPolicyInput &in,
                                        ElasticRule rule = ElasticRule::kPriority);

// What one more node gives job j, per GPU of it: (goodput[n + 1] - goodput[n]) / GPUs;
// nothing without a curve or at MAX.
std::optional<double> gain_per_gpu(const ElasticJob &j);
// The size the goodput rule lets job j reach from its MIN: one node at a time while the
// next node adds at least min_gain per GPU (gain_per_gpu), at most MAX; MIN without a
// curve. j.nodes is not read. The select plugin starts an elastic job at no more than
// this (ElasticStart=goodput): a node that the rule would not grow a job into is not
// worth its keep at the start either.
std::uint32_t goodput_size(ElasticJob j, double min_gain);
// What its last node gives it, per GPU: nothing without a curve or at MIN.
std::optional<double> loss_per_gpu(const ElasticJob &j);

}  // namespace slurm_ai
