// The communication cost model: alpha-beta time per transfer over the cluster graph,
// with flows that share a NIC or a leaf switch's uplinks splitting its bandwidth, and the
// usual algorithm per pattern:
//   allreduce  ring (flat, in rank order), hierarchical (inside each node, then one ring
//              per local GPU across nodes), double binary tree; "auto" takes the fastest;
//   pipeline   stage-to-stage point-to-point of activations, forward and backward, for
//              every micro-batch;
//   tp         a ring all-reduce inside every tensor-parallel group, all groups at once;
//   moe        all-to-all, bounded by each NIC and by the bisection of each leaf's uplinks;
//   ps         parameter-server upload and broadcast, over an aggregation tree (a minimum
//              spanning tree of the hosts by link time) and, for comparison, straight to
//              one fixed server;
//   DAG        the critical path of the task DAG with transfer times on its edges.
// Every estimate is per training step, in seconds.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "slurm_ai/placement/cluster_state.hpp"
#include "slurm_ai/placement/job_demand.hpp"
#include "slurm_ai/placement/placement.hpp"
#include "slurm_ai/topology/cluster_graph.hpp"

namespace slurm_ai {

// The few hardware constants the model needs; fitted to measurements by ai-fit (see
// docs/cost-model.md), defaults otherwise.
struct CostConstants {
    double alpha_intra_s = 5e-6;    // per message between GPUs of one host
    double alpha_inter_s = 20e-6;   // per message between hosts
    double intra_efficiency = 0.8;  // share of a GPU link's bandwidth a collective achieves
    double inter_efficiency = 0.8;  // share of a NIC's or uplink's bandwidth it achieves
};

struct CommEstimate {
    double seconds = 0;
    std::string algorithm;  // e.g. "ring", "hierarchical", "tree", "pipeline", "ps:mst"
    std::vector<std::pair<std::string, double>> terms;  // named parts of the estimate
};

// How long one step of a job keeps a switch's uplinks busy: the larger of the bytes the
// job sends up out of the switch and down into it, over the uplinks' capacity (after
// efficiency), for the algorithm the estimate chose. Divided by the job's step time it is
// the share of those uplinks the job takes from everyone else (ClusterState::uplink_load).
struct UplinkUse {
    int switch_node = -1;  // a Fabric::nodes index
    double busy_s = 0;
};

class CostModel {
  public:
    explicit CostModel(const ClusterGraph &graph, CostConstants constants = {});

    // The job's communication time per step on this placement. state (optional) supplies
    // the uplink load of other jobs.
    CommEstimate estimate(const JobDemand &demand, const Placement &placement,
                          const ClusterState *state = nullptr) const;
    // The uplinks the job's communication crosses on this placement, one entry per
    // switch (in switch order), on an otherwise idle fabric. comm_s (optional) gets the
    // estimate they come from: estimate(demand, placement).seconds, not computed twice.
    std::vector<UplinkUse> uplink_use(const JobDemand &demand, const Placement &placement,
                                      double *comm_s = nullptr) const;

    const ClusterGraph &graph() const { return *graph_; }
    const CostConstants &constants() const { return constants_; }

  private:
    const ClusterGraph *graph_;
    CostConstants constants_;
};

}  // namespace slurm_ai
