#include "slurm_ai/placement/placement_engine.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "policies.hpp"
#include "slurm_ai/placement/placement_terms.hpp"

namespace slurm_ai {
namespace {

// The level of the lowest switch whose subtree holds every host of a placement.
int span_level(const ClusterGraph &g, const std::vector<int> &hosts) {
    std::set<int> leaves;
    for (int h : hosts)
        leaves.insert(g.host_leaf(h));
    if (leaves.size() <= 1)
        return 0;
    int best = -1;
    for (int sw : g.switch_nodes()) {
        auto below = g.leaves_below(sw);
        bool all = std::all_of(leaves.begin(), leaves.end(), [&](int l) {
            return std::find(below.begin(), below.end(), l) != below.end();
        });
        if (all && (best < 0 || g.switch_level(sw) < best))
            best = g.switch_level(sw);
    }
    return best < 0 ? 1 << 20 : best;
}

std::string shape_key(const JobDemand &d) {
    std::string k = std::to_string(d.min_nodes) + "/" + std::to_string(d.max_nodes) + "/" +
                    std::to_string(d.gpus_per_node) + "/" + std::to_string(d.total_gpus) + "/" +
                    to_string(d.comm);
    if (d.dag)
        k += "/dag" + compact_task_dag(*d.dag);
    return k;
}

}  // namespace

struct PlacementEngine::Cache {
    struct Ideal {
        double comm_s = 0;
        int level = 0;
    };
    std::map<std::string, Ideal> ideal;
};

PlacementEngine::PlacementEngine(const ClusterGraph &graph, CostConstants cost, RiskConstants risk,
                                 EngineOptions options, Clock clock)
    : graph_(&graph),
      cost_(graph, cost),
      risk_(graph, risk),
      options_(options),
      clock_(std::move(clock)),
      cache_(std::make_unique<Cache>()) {}

PlacementEngine::~PlacementEngine() = default;

const std::vector<std::string> &PlacementEngine::policies() {
    static const std::vector<std::string> names{"engine",        "engine-norisk", "tree-bestfit",
                                                "block-bestfit", "block-segment", "slurm-default",
                                                "random"};
    return names;
}

bool PlacementEngine::known_policy(std::string_view name) {
    const auto &p = policies();
    return std::find(p.begin(), p.end(), name) != p.end();
}

std::optional<PlacementPolicy> make_policy(std::string_view name) {
    using K = PlacementPolicy::Kind;
    static const std::map<std::string, K, std::less<>> kinds{{"engine", K::kEngine},
                                                             {"engine-norisk", K::kEngineNoRisk},
                                                             {"tree-bestfit", K::kTreeBestFit},
                                                             {"block-bestfit", K::kBlockBestFit},
                                                             {"block-segment", K::kBlockSegment},
                                                             {"slurm-default", K::kSlurmDefault},
                                                             {"random", K::kRandom},
                                                             {"passthrough", K::kPassthrough}};
    auto it = kinds.find(name);
    if (it == kinds.end())
        return std::nullopt;
    return PlacementPolicy(it->first, it->second);
}

const PlacementPolicy &engine_policy() {
    static const PlacementPolicy engine = *make_policy("engine");
    return engine;
}

double PlacementEngine::lower_bound(const JobDemand &d) const {
    auto key = shape_key(d);
    if (auto it = cache_->ideal.find(key); it != cache_->ideal.end())
        return it->second.comm_s;
    // The job on an empty cluster: the best of the best-fit candidates, best-linked GPUs.
    ClusterState empty(*graph_);
    Cache::Ideal ideal{0, 0};
    auto ctx = detail::make_context(*this, d, empty, nullptr);
    if (ctx) {
        bool first = true;
        auto fits = detail::fitting_subtrees(*ctx, 1 + options_.rival_subtrees);
        for (auto &fit : detail::fitting_domains(*ctx, 1 + options_.rival_subtrees))
            fits.push_back(std::move(fit));
        for (auto &fit : fits) {
            auto p = detail::assemble(*ctx, fit.hosts, true);
            double s = cost_.estimate(d, p, nullptr).seconds;
            if (first || s < ideal.comm_s) {
                ideal = {s, span_level(*graph_, p.hosts)};
                first = false;
            }
        }
    }
    cache_->ideal[key] = ideal;
    return ideal.comm_s;
}

void PlacementEngine::score(const JobDemand &d, const ClusterState *state, Placement &p) const {
    score_comm(d, state, lower_bound(d), p);
    score_risk(d, state, p);
}

void PlacementEngine::score_comm(const JobDemand &d, const ClusterState *state,
                                 double lower_bound_s, Placement &p) const {
    auto est = cost_.estimate(d, p, state);
    p.comm_s = est.seconds;
    p.algorithm = std::move(est.algorithm);
    p.lower_bound_s = std::min(lower_bound_s, p.comm_s);
    p.efficiency = p.comm_s > 0 ? p.lower_bound_s / p.comm_s : 1.0;
}

void PlacementEngine::score_risk(const JobDemand &d, const ClusterState *state,
                                 Placement &p) const {
    p.risk = risk_.estimate(d, p, state).per_day;
}

Decision PlacementEngine::place(const JobDemand &d, const ClusterState &state,
                                const PlacementPolicy &policy) const {
    using K = PlacementPolicy::Kind;
    Decision out;
    if (policy.passthrough()) {
        out.reason = "Policy=passthrough";
        return out;
    }
    const double start_ms = clock_.steady_ms();
    auto ctx = detail::make_context(*this, d, state, &out.reason);
    if (!ctx)
        return out;
    ctx->keep_whole = policy.searches();
    std::optional<Placement> p;
    switch (policy.kind()) {
        case K::kEngine:
            p = detail::place_engine(*ctx, options_.risk_weight);
            break;
        case K::kEngineNoRisk:
            p = detail::place_engine(*ctx, 0.0);
            break;
        case K::kTreeBestFit:
            p = detail::place_tree_bestfit(*ctx);
            break;
        case K::kSlurmDefault:
            p = detail::place_slurm_default(*ctx);
            break;
        case K::kBlockBestFit:
        case K::kBlockSegment:
            p = detail::place_block(*ctx, policy.kind() == K::kBlockSegment);
            break;
        case K::kRandom:
        case K::kPassthrough:
            p = detail::place_random(*ctx, options_.seed);
            break;
    }
    if (!p || p->empty()) {
        out.reason = d.total_gpus
                         ? "not enough free GPUs: needs " + std::to_string(d.total_gpus) +
                               (ctx->per_host ? " as " + std::to_string(ctx->hosts_needed) +
                                                    " hosts x " + std::to_string(ctx->per_host)
                                              : std::string())
                         : "not enough free hosts: needs " + std::to_string(ctx->hosts_needed);
        return out;
    }
    const bool engine = policy.searches();
    if (!engine)  // the engine scored its placement while searching
        score(d, &state, *p);
    p->policy = policy.name();
    p->decision_ms = clock_.steady_ms() - start_ms;

    if (engine) {
        if (d.locality.hard) {
            const int level = locality_level(d);
            if (span_level(*graph_, p->hosts) > level) {
                out.wait = true;
                out.reason = "hard locality: waits for hosts under one level-" +
                             std::to_string(level) + " switch";
                return out;
            }
        }
        // Under min_efficiency the job waits: for its soft locality's WAIT, else (held for
        // placement) while waiting has cost it less than this placement would.
        if (!d.locality.hard && p->efficiency < options_.min_efficiency) {
            const bool soft = d.locality.wait_s > 0;
            const double limit = soft ? d.locality.wait_s
                                      : hold_for_s(d, p->efficiency, options_.hold_comm_share);
            if (static_cast<double>(soft ? d.pending_s : d.held_s) < limit) {
                out.wait = true;
                out.reason = std::string(soft ? "soft locality" : "held for placement") +
                             ": best placement now is " +
                             std::to_string(static_cast<int>(p->efficiency * 100)) +
                             "% efficient; waits up to " +
                             std::to_string(static_cast<long>(limit)) + " s";
                return out;
            }
        }
    }
    out.placement = std::move(p);
    return out;
}

int PlacementEngine::locality_level(const JobDemand &demand) const {
    lower_bound(demand);
    return cache_->ideal.at(shape_key(demand)).level;
}

}  // namespace slurm_ai
