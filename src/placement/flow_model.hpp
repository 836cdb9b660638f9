// Internal to the cost model: the ranks of one placement, and the time of a phase in
// which a set of flows runs at once. A flow between GPUs of one host uses its own GPU
// link. A flow between hosts goes as ClusterGraph::route() sends it: inside one NVLink
// domain it crosses the sender's and the receiver's NVLink; otherwise the sending NIC
// (the PXN proxy's on another rail), the receiving NIC, and, between different leaf
// switches, both leaves' uplinks. Each of those resources splits its capacity equally
// among the flows crossing it, and a flow runs at the smallest share it gets (and never
// faster than its path's widest link or its GPU's PCIe path to the NIC).
#pragma once

#include <map>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "slurm_ai/placement/cluster_state.hpp"
#include "slurm_ai/placement/cost_model.hpp"
#include "slurm_ai/topology/cluster_graph.hpp"

namespace slurm_ai::detail {

struct Flow {
    int src = 0, dst = 0;  // ranks
    double bytes = 0;
};

// What a job's traffic puts on the leaves' uplinks per step, for CostModel::uplink_use:
// the bytes going up out of and down into each leaf switch (Fabric node), recorded by the
// algorithm functions under the name of the algorithm being costed (allreduce and the
// parameter server cost several to pick the fastest; only the chosen one's bytes count).
struct UplinkLedger {
    std::string algorithm;  // the one being costed; empty: record nothing
    std::map<std::string, std::unordered_map<int, std::pair<double, double>>> bytes;
};

// Sets the ledger's algorithm for the life of the scope (no-op without a ledger).
class LedgerScope {
  public:
    LedgerScope(UplinkLedger *ledger, std::string algorithm);
    ~LedgerScope();
    LedgerScope(const LedgerScope &) = delete;
    LedgerScope &operator=(const LedgerScope &) = delete;

  private:
    UplinkLedger *ledger_;
    std::string previous_;
};

class FlowModel {
  public:
    FlowModel(const ClusterGraph &graph, const CostConstants &c, std::vector<GpuRef> ranks,
              const ClusterState *state, UplinkLedger *ledger = nullptr);

    const ClusterGraph &graph() const { return *graph_; }
    int ranks() const { return static_cast<int>(ranks_.size()); }
    int host_of(int rank) const { return ranks_[rank].host; }
    // The leaf switch of the rank's port (its rail's leaf), or -1.
    int leaf_of(int rank) const { return leaf_[rank]; }
    const std::vector<GpuRef> &rank_refs() const { return ranks_; }
    // Hosts in rank order and the ranks on each (contiguous in a well-formed placement).
    const std::vector<int> &hosts() const { return hosts_; }
    const std::vector<std::vector<int>> &ranks_by_host() const { return by_host_; }
    // The number of ranks every host has, or 0 when hosts differ (hierarchical and tree
    // algorithms need it even).
    int ranks_per_host() const { return even_; }

    // Each flow's alpha + bytes / rate when all of them run at once.
    std::vector<double> flow_times(std::span<const Flow> flows) const;
    // Time of one phase: the slowest of flow_times.
    double phase_time(std::span<const Flow> flows) const;
    // One flow alone.
    double pair_time(int src, int dst, double bytes) const;
    // The ledger (nullptr when none is attached), for a LedgerScope.
    UplinkLedger *ledger() const { return ledger_; }
    // Notes that `flows` run `times` times per step: the bytes of those that cross from
    // one leaf to another go on the ledger under its current algorithm.
    void record(std::span<const Flow> flows, double times) const;
    // The same for bytes an algorithm counts itself (the all-to-all's bisection).
    void record_uplink(int leaf, double up_bytes, double down_bytes) const;
    double alpha(int src, int dst) const;
    // A host's share of NIC bandwidth for this job (GB/s, after efficiency).
    double nic_gbs(int host) const;
    // Capacity of a leaf switch's uplinks left for this job (GB/s, after efficiency).
    double uplink_gbs(int leaf) const;
    double intra_gbs(int src, int dst) const;  // same host only
    // The NVLink domain of a rank's host (-1: none) and its NVLink bandwidth to other
    // hosts of the domain (GB/s, after efficiency).
    int domain_of(int rank) const;
    double domain_gbs(int rank) const;
    // Whether a rank's host can forward through NVLink to its other ports (PXN).
    bool pxn(int rank) const;

  private:
    double nic_cap_gbs(int host, int nic) const;  // one NIC of a host, after efficiency
    // alpha_inter or alpha_intra plus the path's latency.
    double alpha(const GpuRef &a, const GpuRef &b, const PathMetrics &path) const;

    const ClusterGraph *graph_;
    CostConstants c_;
    std::vector<GpuRef> ranks_;
    const ClusterState *state_;
    UplinkLedger *ledger_;
    std::vector<int> hosts_;
    std::vector<std::vector<int>> by_host_;
    int even_ = 0;
    std::vector<int> leaf_;                    // rank -> leaf of its port
    std::unordered_map<int, double> nic_gbs_;  // host -> capacity of the NICs it uses
};

}  // namespace slurm_ai::detail
