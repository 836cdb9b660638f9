// The failure-risk model: how much of a job a failure is expected to take down under a
// placement. The job's execution graph (its hosts linked as its pattern links them: a
// ring, an all-to-all, a chain of pipeline stages, an aggregation tree, its task DAG)
// decides how far a failure propagates:
//   - in a graph with a sink (pipeline stages, aggregation trees, DAGs) a failure
//     cascades: every host that can no longer reach the sink is lost with it;
//   - in a dense cyclic graph (rings, all-to-all) it self-limits: the survivors stay
//     connected and only the failed hosts are lost.
// Failure domains are each host, each leaf switch the job uses (a switch takes all the
// job's hosts below it) and each multi-node NVLink domain (its NVSwitch trays and IMEX
// take all the job's hosts in it); hosts and switches that failed recently fail more
// often, and a degraded NVLink domain (a member down or drained) more often still.
// The score is the expected share of the job lost per day. Where the state carries a
// learned model (ClusterState::learned, learned_risk.hpp) the score is its rate instead:
// how often a failure stops a job placed so, from the placement's shape and history.
#pragma once

#include <string>

#include "slurm_ai/placement/cluster_state.hpp"
#include "slurm_ai/placement/job_demand.hpp"
#include "slurm_ai/placement/learned_risk.hpp"
#include "slurm_ai/placement/placement.hpp"
#include "slurm_ai/topology/cluster_graph.hpp"

namespace slurm_ai {

struct RiskConstants {
    double host_per_day = 1e-3;    // base failure rate of a host
    double switch_per_day = 5e-4;  // base failure rate of a leaf switch
    double domain_per_day = 5e-4;  // base failure rate of an NVLink domain
    double degraded_factor = 20;   // a degraded domain's rate is this many times higher
    // A host's rate is multiplied by 1 + recent_factor x its decayed failure count (and a
    // switch's by the count summed over the hosts below it).
    double recent_factor = 10.0;
};

struct RiskEstimate {
    double per_day = 0;        // expected share of the job lost per day
    std::string graph;         // "cyclic", "cascade" or "independent"
    // The hand-written model's: 0 and empty where a learned model rates the placement.
    double worst_impact = 0;   // largest share one domain's failure takes
    std::string worst_domain;  // host or switch name
};

// How a failure spreads through the job on `hosts` hosts: cascading where its graph has a
// sink (pipelines, aggregation trees, DAGs), cyclic where it is dense across hosts (rings,
// all-to-all), independent otherwise (one host, or no communication).
RiskGraph risk_graph(const JobDemand &demand, int hosts);

class RiskModel {
  public:
    explicit RiskModel(const ClusterGraph &graph, RiskConstants constants = {});
    RiskEstimate estimate(const JobDemand &demand, const Placement &placement,
                          const ClusterState *state = nullptr) const;
    const RiskConstants &constants() const { return c_; }

  private:
    const ClusterGraph *graph_;
    RiskConstants c_;
};

}  // namespace slurm_ai
