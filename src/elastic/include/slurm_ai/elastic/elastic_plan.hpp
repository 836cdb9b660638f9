// Which nodes a running job gains or loses when it is resized, decided on the cost model
// the placement engine uses (never a cost of its own): growing adds the free hosts that
// keep the grown job's communication cheapest, which are the hosts next to the job's
// own; shrinking releases the hosts whose loss leaves the cheapest communication.
//
// Pure logic: the select plugin places expansion jobs with plan_grow, ai-resize and
// ai-elasticd choose what to release with plan_shrink.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "slurm_ai/placement/cluster_state.hpp"
#include "slurm_ai/placement/job_demand.hpp"
#include "slurm_ai/placement/placement.hpp"
#include "slurm_ai/placement/placement_engine.hpp"

namespace slurm_ai {

// The job's demand on `nodes` nodes: the same GPUs per node and pattern; counts that
// make_demand derives from the size (pipeline stages, experts) follow the new size.
JobDemand demand_at_size(const JobDemand &demand, std::uint32_t nodes);

// The job on `hosts` as the cost model sees it: hosts in rank order (ring_host_order, as
// the SPANK plugin numbers ranks), on each the demand's GPUs per node, lowest-numbered
// of those free in `state` (all of the host's GPUs count as free without a state).
Placement job_placement(const ClusterGraph &graph, const JobDemand &demand, std::vector<int> hosts,
                        const ClusterState *state = nullptr);

// A job's goodput on 0..max_nodes nodes, for ai-elasticd's goodput rule
// (elastic_policy.hpp): the GPUs' worth of computation it does per second, compute_gpu_s /
// step(n), with step(n) = compute_gpu_s / (its GPUs on n nodes) + its communication on the
// ideal placement of n nodes (PlacementEngine::lower_bound). compute_gpu_s is a step's
// computation on one GPU: strong scaling, the global batch stays what it is. Entry 0 is 0.
std::vector<double> goodput_curve(const PlacementEngine &engine, const JobDemand &demand,
                                  std::uint32_t max_nodes, double compute_gpu_s);
// The computation a step holds (on one GPU, seconds) when communication is `share` of it
// on the ideal placement of `nodes` nodes: for a job that does not say (--ai-comm compute=).
double compute_from_share(const PlacementEngine &engine, const JobDemand &demand,
                          std::uint32_t nodes, double share);

// The goodput curve of a job on 0..max_nodes nodes as the suite weighs it (ai-elasticd's
// goodput rule, the select plugin's ElasticStart=goodput): a step's computation from its
// --ai-comm compute= (demand.comm.compute_ms), else the computation that makes
// communication `share` of a step on the ideal placement of `nodes` nodes (CommShare).
std::vector<double> job_goodput(const PlacementEngine &engine, const JobDemand &demand,
                                std::uint32_t nodes, std::uint32_t max_nodes, double share);

// The size CommShare measures an elastic job's computation at (job_goodput's `nodes`), the
// same for the select plugin at the job's start and for ai-elasticd at every look since:
// its MAX within Slurm's node range at its start (`start_max`, the job record's
// elastic_start_max), or the fabric's hosts when they are fewer, the largest size with an
// ideal placement to measure on.
std::uint32_t comm_share_size(const PlacementEngine &engine, std::uint32_t start_max);

// ElasticStart=goodput: the most nodes an elastic job starts on, the size ai-elasticd's
// goodput rule would let it grow to from its MIN (goodput_size, elastic_policy.hpp), on
// the curve job_goodput draws with the job at comm_share_size(MAX), no further than `upto`
// (what the candidates can hold now): fewer free hosts cap the size, they do not change
// the curve. At most max(upto, MIN).
std::uint32_t goodput_start(const PlacementEngine &engine, const JobDemand &demand,
                            const ElasticSpec &spec, std::uint32_t upto, double share,
                            double min_gain);
// ElasticStart=goodput's bar for each node above MIN, in GPUs' worth per GPU it adds:
// while another job waits that the free GPUs left beside the job's MIN (`min_gpus`) could
// hold (state.wanted, which counts this one as a job of `own_gpus`), a whole GPU's worth
// (kWaitingGpuWorth), since that job would make that of the GPUs; else min_gain,
// ai-elasticd's bar for growing into idle nodes no waiting job needs.
inline constexpr double kWaitingGpuWorth = 1.0;
double start_gain(const ClusterState &state, int own_gpus, int min_gpus, double min_gain);

// Where an elastic job of `lo` to `hi` nodes starts now, and at which size: the largest
// that places (`place_at`: the policy's decision for the job at that size), as Slurm's
// node range does. A size the engine holds for a better placement does not stop a
// smaller one that places well; the job waits only when no size places, and then the
// first hold says why. The select plugin and ai-sim both choose with it.
struct SizedDecision {
    Decision decision;
    std::uint32_t nodes = 0;  // the size it starts at; 0 when it does not start
    JobDemand demand;         // the job's demand at that size (when it starts)
};
SizedDecision place_sized(const JobDemand &base, std::uint32_t lo, std::uint32_t hi,
                          const std::function<Decision(const JobDemand &)> &place_at);

struct ResizeChoice {
    std::vector<int> hosts;  // added (grow) or released (shrink), in the order chosen
    double comm_before_s = 0;
    double comm_after_s = 0;
    std::string reason;  // why nothing could be chosen (hosts empty)
};

// Grows the job on `current` by `add` hosts taken from the usable hosts of `free` that
// can hold one node of the job (its GPUs per node free; `usable` says the rest). One host at a
// time, the one that makes the grown job's communication cheapest; ties go to the host fewest
// switch hops from the job, then to Slurm's lower Weight. At most `candidates` hosts (the nearest)
// are scored per step, so a decision stays fast on large clusters.
ResizeChoice plan_grow(const PlacementEngine &engine, const JobDemand &demand,
                       std::span<const int> current, const ClusterState &free, int add,
                       int candidates = 64);

// Shrinks the job by `remove` hosts, never one of `keep` (the batch host): one host at a
// time, the one whose loss leaves the cheapest communication; ties go to the host
// farthest from the rest of the job, then to one on the leaf holding fewest of its hosts.
ResizeChoice plan_shrink(const PlacementEngine &engine, const JobDemand &demand,
                         std::span<const int> current, int remove, std::span<const int> keep);

}  // namespace slurm_ai
