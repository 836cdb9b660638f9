// The placement search: which hosts, and which GPUs on each, a job should get from what
// is free, with a rank order that puts ring and pipeline neighbours on neighbouring links.
//
// Policies, by name (make the same choice as Slurm where they say so, so the suite can be
// compared with Slurm on the same input):
//   engine         topology best-fit candidates (the smallest subtree that fits, and its
//                  nearest rivals), the best-linked GPUs on each host, then local search
//                  on the cost model and the failure-risk model within the time budget;
//                  with a measured shape profile, also the shapes it measured fastest.
//                  Never less efficient than its own tree-bestfit candidate.
//   engine-norisk  the same without the failure-risk term.
//   tree-bestfit   Slurm's topology/tree: the smallest subtree with enough free hosts,
//                  fewest leaves, lowest-numbered GPUs.
//   block-bestfit  Slurm's topology/block: the smallest aggregate of base blocks (the
//                  fabric's blocks, NVLink domains or leaves) that fits, best fit.
//   block-segment  the same with --segment: each TP/EP group (else each block's share of
//                  the job) inside one base block.
//   slurm-default  Slurm without topology: hosts by weight then node order.
//   random         eligible hosts and GPUs drawn at random (seeded).
// Hard locality only accepts a placement inside the smallest subtree the job could have
// on an empty cluster; soft locality with a wait W holds the job (up to W after its
// submission) while the best placement is less than min_efficiency efficient.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "slurm_ai/common/clock.hpp"
#include "slurm_ai/placement/cluster_state.hpp"
#include "slurm_ai/placement/cost_model.hpp"
#include "slurm_ai/placement/failure_risk.hpp"
#include "slurm_ai/placement/job_demand.hpp"
#include "slurm_ai/placement/placement.hpp"

namespace slurm_ai {

class CandidateChooser;
class ShapeProfile;

struct EngineOptions {
    double time_budget_ms = 5.0;  // hard bound on one decision's local search
    // > 0: the search's budget counted in work instead of time, that many placements
    // scored, and no clock read: an input takes the same path at every run, on any
    // machine and under any load (the fuzz targets). 0: time_budget_ms bounds it.
    std::uint32_t work_budget = 0;
    double risk_weight = 0.02;    // objective = comm/lower_bound + w * risk/host rate
    int rival_subtrees = 3;       // candidate subtrees besides the best fit
    double min_efficiency = 0.9;  // soft locality waits for this much
    // A job whose best placement now is less than min_efficiency efficient is held while it
    // has waited less than the run time that placement would cost it: its time limit x
    // hold_comm_share x (1/efficiency - 1) (the communication share of a step assumed for
    // a job that says nothing of it). 0: never held.
    double hold_comm_share = 0.5;
    std::uint64_t seed = 1;       // for the random policy
    // What picks among the engine's candidates in place of its objective (a learned
    // scorer, learned_placement.hpp); null: the objective decides.
    std::shared_ptr<const CandidateChooser> placement_model;
    // Measured step times by shape (shape_profile.hpp); null: the cost model alone. With
    // one, a GPU job's placement on hosts the profile covers is rated by its shape's
    // measured step first and the cost model second, and the search also builds the
    // shapes measured fastest (docs/placement.md, "Measured shapes").
    std::shared_ptr<const ShapeProfile> shape_profile;
};

// A placement policy, made once by make_policy (a string-keyed factory, as Fluxion makes
// its match policies) and handed to every place(): no name is compared per decision.
class PlacementPolicy {
  public:
    enum class Kind {
        kEngine,
        kEngineNoRisk,
        kTreeBestFit,
        kBlockBestFit,
        kBlockSegment,
        kSlurmDefault,
        kRandom,
        kPassthrough
    };

    const std::string &name() const { return name_; }
    Kind kind() const { return kind_; }
    // The suite's own search (engine, engine-norisk): it scores while it searches and
    // applies the job's locality.
    bool searches() const { return kind_ == Kind::kEngine || kind_ == Kind::kEngineNoRisk; }
    // passthrough places nothing: the job is left to Slurm's own selection.
    bool passthrough() const { return kind_ == Kind::kPassthrough; }

  private:
    friend std::optional<PlacementPolicy> make_policy(std::string_view name);
    PlacementPolicy(std::string name, Kind kind) : name_(std::move(name)), kind_(kind) {}
    std::string name_;
    Kind kind_;
};

// The policy of that name: engine, engine-norisk, tree-bestfit, block-bestfit,
// block-segment, slurm-default, random or passthrough; nullopt for any other name (unknown keys are
// rejected, never guessed).
std::optional<PlacementPolicy> make_policy(std::string_view name);
// The suite's own policy ("engine"), made once.
const PlacementPolicy &engine_policy();

struct Decision {
    std::optional<Placement> placement;  // empty: the job cannot start now
    bool wait = false;                   // true: it could, but locality says wait
    std::string reason;                  // why there is no placement
};

class PlacementEngine {
  public:
    // `clock` times each decision (Placement::decision_ms) and bounds its time budget.
    PlacementEngine(const ClusterGraph &graph, CostConstants cost = {}, RiskConstants risk = {},
                    EngineOptions options = {}, Clock clock = {});
    ~PlacementEngine();

    // The names of the policies that place (make_policy also knows passthrough).
    static const std::vector<std::string> &policies();
    static bool known_policy(std::string_view name);

    // Where `policy` puts the job now. passthrough gives no placement and says so.
    Decision place(const JobDemand &demand, const ClusterState &state,
                   const PlacementPolicy &policy = engine_policy()) const;

    // Fills comm_s, lower_bound_s, efficiency, risk and algorithm of a placement.
    void score(const JobDemand &demand, const ClusterState *state, Placement &p) const;
    // score() in its two parts, for a search that scores many placements of one job:
    // comm_s, lower_bound_s, efficiency and algorithm against the job's lower bound
    // (looked up once by the caller), and risk (which a search without a risk term needs
    // only for the placement it keeps).
    void score_comm(const JobDemand &demand, const ClusterState *state, double lower_bound_s,
                    Placement &p) const;
    void score_risk(const JobDemand &demand, const ClusterState *state, Placement &p) const;
    // The job's communication time ideally placed on an empty cluster (cached per shape).
    double lower_bound(const JobDemand &demand) const;
    // The switch level hard locality keeps the job under: that of the subtree holding its
    // ideal placement on an empty cluster (0: one leaf switch).
    int locality_level(const JobDemand &demand) const;

    const ClusterGraph &graph() const { return *graph_; }
    const CostModel &cost_model() const { return cost_; }
    const RiskModel &risk_model() const { return risk_; }
    const EngineOptions &options() const { return options_; }
    const Clock &clock() const { return clock_; }

  private:
    struct Cache;
    const ClusterGraph *graph_;
    CostModel cost_;
    RiskModel risk_;
    EngineOptions options_;
    Clock clock_;
    std::unique_ptr<Cache> cache_;
};

}  // namespace slurm_ai
