// What is free in the cluster when a job is placed, and what the engine remembers about
// it: free GPUs per host, hosts that can take the job at all, Slurm's node weights, recent
// failures, and how loaded each switch's uplinks already are.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "slurm_ai/topology/cluster_graph.hpp"

namespace slurm_ai {

struct JobDemand;
struct Placement;
struct LearnedRiskView;

// Up to 64 GPUs per host.
using GpuMask = std::uint64_t;

struct ClusterState {
    explicit ClusterState(const ClusterGraph &graph);  // everything free and usable

    const ClusterGraph *graph;
    std::vector<GpuMask> free_gpus;    // per host: bit i set = GPU i free
    std::vector<std::uint8_t> usable;  // per host: 1 if the job may run there at all
    std::vector<double> weight;        // per host: Slurm's node Weight (lower preferred)
    std::vector<double> failures;      // per host: decayed count of recent failures
    std::vector<double> uplink_load;   // per Fabric node (switches): share of uplink
                                       // capacity other jobs use, in [0, 1)
    std::vector<std::uint8_t> down;    // per host: down, drained or failing in Slurm
    // Sizes (GPUs) of the multi-GPU jobs waiting for room, with a weight each (how many):
    // the engine keeps room for them when placements are otherwise equal (the pending
    // queue as the caller sees it; empty: no such preference).
    struct WantedSize {
        int gpus = 0;
        double weight = 1;
        // GPUs it needs on each of its hosts, the job fixing them (--gpus-per-node): it
        // starts on `hosts` hosts with as many free each. 0: Slurm splits `gpus` freely.
        int per_host = 0;
        int hosts = 0;
        bool same_size(const WantedSize &o) const {
            return gpus == o.gpus && per_host == o.per_host && hosts == o.hosts;
        }
    };
    // A job of `gpus` GPUs asking `d`, weight 1.
    static WantedSize size_of(int gpus, const JobDemand &d);
    // Counts `size` (its weight) into `sizes`, kept in order of GPUs, then per_host, hosts.
    static void count_size(std::vector<WantedSize> &sizes, const WantedSize &size);
    std::vector<WantedSize> wanted;
    // The sizes the recent history asked: the multi-GPU jobs first seen in the last
    // kRecentSizes_s, started or not, a weight each. With a shape profile the engine
    // keeps their room too: what arrived lately is what will arrive next (FGD's workload).
    static constexpr double kRecentSizes_s = 86400;
    std::vector<WantedSize> recent;
    // The learned risk model and the failure history it reads (learned_risk.hpp); null:
    // the risk model's hand-written rates from `failures`.
    std::shared_ptr<const LearnedRiskView> learned;

    // An NVLink domain (ClusterGraph::nvlink_domain) with a member down or drained, or
    // that the fabric file marks degraded.
    bool domain_degraded(int domain) const;

    int free_gpu_count(int host) const;
    bool host_free(int host) const;  // usable with every GPU free
    // Takes a placement's GPUs (and, for GPU-less jobs, whole hosts) out of the free view.
    void allocate(const Placement &p);
    void release(const Placement &p);
};

GpuMask all_gpus(int count);

}  // namespace slurm_ai
