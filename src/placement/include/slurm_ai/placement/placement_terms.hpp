// The terms of the engine's choice beside the cost model and the risk model: what a
// placement takes from the jobs waiting, how much the failure history has earned the risk
// term, and how long a job is held for a better placement. Pure functions of the free
// view, the placement and the job.
#pragma once

#include "slurm_ai/placement/cluster_state.hpp"
#include "slurm_ai/placement/job_demand.hpp"
#include "slurm_ai/placement/placement.hpp"

namespace slurm_ai {

// The placeable capacity a placement takes away from the sizes waiting (ClusterState::
// wanted), in GPUs: for each host, and each NVLink domain (else leaf), it takes GPUs from,
// and each waiting size of w GPUs that fits there, w x weight x (the jobs of w GPUs the
// free GPUs there hold whole before - after). The engine prefers the smaller among
// placements its objective rates equal (FGD's idea, "Beware of Fragmentation", ATC'23, on
// the units a job wants whole). 0 with nothing waiting.
double destroyed_capacity(const ClusterState &state, const Placement &p);
// The same for other sizes than the queue's (ClusterState::recent).
double destroyed_capacity(const ClusterState &state, const Placement &p,
                          const std::vector<ClusterState::WantedSize> &sizes);

// How much of the risk term's weight the failure history has earned, in [0, 1]: the
// hosts' decayed failure counts (a host down or drained now counting one) over what the
// model's base host rate would leave in steady state (rate x 7 / ln 2 per host); 1 with a
// learned model (it weighs the history itself); 0 when nothing has failed (the term then
// costs placements nothing it could pay back).
double failure_evidence(const ClusterState &state, double host_per_day);

// How long the engine holds a job whose best placement now is `efficiency` efficient:
// its time limit x comm_share x (1/efficiency - 1), the run time that placement would
// cost it when communication is comm_share of a step on its ideal placement (the
// break-even rule of rent-or-buy: holding until then never loses more than twice the
// better of waiting and starting). 0 without a time limit.
double hold_for_s(const JobDemand &d, double efficiency, double comm_share);

}  // namespace slurm_ai
