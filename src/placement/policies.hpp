// Internal to the placement engine: the shape of a job's allocation, the best-fit subtree
// search over free capacity, and one function per policy.
#pragma once

#include <optional>
#include <vector>

#include "slurm_ai/placement/placement_engine.hpp"

namespace slurm_ai::detail {

// What one decision searches over.
struct SearchContext {
    const PlacementEngine &engine;
    const JobDemand &demand;
    const ClusterState &state;
    int per_host = 0;      // GPUs each host must give (0: as many as it has)
    int hosts_needed = 0;  // with per_host or a job without GPUs: exactly this many
    int gpus_needed = 0;   // total GPUs (0: a job without GPUs)
    int max_hosts = 0;
    std::vector<int> capacity;  // per host: what it can give (slots of per_host GPUs,
                                // free GPUs, or 1 for a usable host); 0: ineligible
    int group_hosts = 1;        // hosts of one tensor- or expert-parallel group, which
                                // an NVLink domain should hold whole
    bool keep_whole = false;    // the engine's choice of hosts for a GPU count: the host
                                // that finishes the job most tightly, else the fullest,
                                // so that whole hosts stay whole (Slurm's policies take
                                // the fullest first)
};

// Builds the context; nullopt with a reason when the demand cannot fit this cluster.
std::optional<SearchContext> make_context(const PlacementEngine &engine, const JobDemand &demand,
                                          const ClusterState &state, std::string *why);

// A switch's subtree and the hosts taken from it.
struct SubtreeFit {
    int switch_node = -1;
    int level = 0;
    int capacity = 0;  // what the whole subtree could give
    std::vector<int> hosts;
};

// Takes hosts from one leaf or block until `wanted` (hosts, or GPUs for a GPU count) is
// met: for fixed shapes the hosts with the fewest free GPUs (the tightest fit, keeping
// emptier hosts whole), for GPU counts the fullest-free first (the fewest hosts); lower
// node Weight first among equals. Returns what the taken hosts give.
int take_hosts(const SearchContext &c, const std::vector<int> &hosts, int wanted,
               std::vector<int> &out);

// Switches whose subtree can hold the job, lowest level first, then tightest fit; at most
// `limit`. Hosts are taken leaf by leaf: the smallest leaf that finishes the job, else the
// largest; within a leaf the hosts that fit most tightly.
std::vector<SubtreeFit> fitting_subtrees(const SearchContext &c, int limit);

// The tightest subtree that holds the job again, its leaves taken least loaded first
// (ClusterState::uplink_load: other jobs' traffic on their uplinks), then as above: the
// rival that keeps a job off uplinks other jobs fill. Nothing when no eligible leaf
// carries any load, or when it would take the same hosts as best fit.
std::optional<SubtreeFit> fitting_unloaded(const SearchContext &c, const SubtreeFit &best_fit);

// Candidates by multi-node NVLink domain (fabrics that have them, jobs of whole hosts):
// the smallest domains that hold the whole job, healthy ones first, then the job over
// as few domains as hold it in whole groups of group_hosts, healthy and fullest first.
// At most `limit` single-domain candidates, and one spread over domains.
std::vector<SubtreeFit> fitting_domains(const SearchContext &c, int limit);

// Hosts with the GPUs to take from each: a candidate in a measured shape.
struct ShapedFit {
    std::vector<int> hosts;
    std::vector<int> take;  // per entry of hosts
};

// Candidates in the shapes the engine's ShapeProfile measured fastest for the job's GPU
// count, one per shape, fastest first, at most `limit`: each under the leaf switch that
// holds it most tightly, else over the leaves. None for a job that fixes its GPUs per
// node, or without a profile.
std::vector<ShapedFit> fitting_shapes(const SearchContext &c, int limit);

// Turns hosts into a placement: hosts ordered by leaf then index, GPUs per host from
// best_linked (true) or lowest-numbered (false); as many from each as `take` says (per
// entry of hosts) where given, else what the job's shape or the host's free GPUs allow.
Placement assemble(const SearchContext &c, std::vector<int> hosts, bool best_linked,
                   const std::vector<int> *take = nullptr);

std::optional<Placement> place_slurm_default(const SearchContext &c);
std::optional<Placement> place_tree_bestfit(const SearchContext &c);
// Slurm's topology/block: base blocks (the fabric's blocks, else its NVLink domains, else
// its leaves) in aligned groups of 2^k; the smallest level with a group that holds the
// job, the group with the least room, its fullest base blocks first, lowest hosts first.
// segment: as with --segment=S, S hosts from one base block each, S being the job's
// TP/EP group in hosts, else as much of a base block as the job needs.
std::optional<Placement> place_block(const SearchContext &c, bool segment);
std::optional<Placement> place_random(const SearchContext &c, std::uint64_t seed);
// The engine's search, within the engine's budget (EngineOptions: time or work).
std::optional<Placement> place_engine(const SearchContext &c, double risk_weight);

}  // namespace slurm_ai::detail
