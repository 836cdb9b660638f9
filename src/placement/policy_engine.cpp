// The suite's own policy: best-fit candidates, best-linked GPUs, then local search.
#include <algorithm>
#include <cmath>
#include <optional>
#include <unordered_set>

#include "policies.hpp"
#include "slurm_ai/placement/learned_placement.hpp"
#include "slurm_ai/placement/placement_terms.hpp"
#include "slurm_ai/placement/shape_profile.hpp"

namespace slurm_ai::detail {
namespace {

struct Scored {
    Placement p;
    double objective = 0;
    double model = 0;  // the cost model's comm / lower bound
    double speed = 1;  // what the efficiency floor compares: 1 / step ratio
    // Placeable capacity for the waiting sizes it takes away: computed when two objectives
    // tie (most comparisons in the local search are not ties), then kept.
    mutable std::optional<double> destroyed{};
    double destroyed_of(const ClusterState &state) const {
        if (!destroyed)
            destroyed = destroyed_capacity(state, p);
        return *destroyed;
    }
    // The same for other sizes: what a measured shape may take no more of than best fit
    // (place_engine's room_sizes).
    mutable std::optional<double> room{};
    double room_of(const ClusterState &state,
                   const std::vector<ClusterState::WantedSize> &sizes) const {
        if (!room)
            room = destroyed_capacity(state, p, sizes);
        return *room;
    }
};

// Two hosts of one kind: cabled alike, in the same NVLink domain, of one node topology,
// with the same free GPUs and the same record in Slurm and in the failure history. The
// local search tries one host of each kind. Swapped into a placement they score alike
// but for their place in the ring (by leaf, then host id), which on a rail fabric can
// move the rails a ring crosses: the search may then miss a swap the other host would
// have made (docs/placement.md measures what that changed).
bool interchangeable_hosts(const SearchContext &c, int a, int b) {
    if (a == b)
        return true;
    const ClusterState &s = c.state;
    const ClusterGraph &g = c.engine.graph();
    if (s.learned)  // it reads each host's own history
        return false;
    if (g.host_leaf(a) != g.host_leaf(b) || g.nvlink_domain(a) != g.nvlink_domain(b) ||
        &g.node(a) != &g.node(b) || c.capacity[a] != c.capacity[b])
        return false;
    if (s.free_gpus[a] != s.free_gpus[b] || s.usable[a] != s.usable[b] ||
        s.down[a] != s.down[b] || s.failures[a] != s.failures[b] || s.weight[a] != s.weight[b])
        return false;
    const auto &pa = g.ports(a), &pb = g.ports(b);
    return std::equal(pa.begin(), pa.end(), pb.begin(), pb.end(),
                      [](const HostPort &x, const HostPort &y) {
                          return x.leaf == y.leaf && x.rail == y.rail && x.gbs == y.gbs;
                      });
}

// The hosts of `hosts` not interchangeable with an earlier one.
std::vector<int> one_of_each_kind(const SearchContext &c, const std::vector<int> &hosts) {
    std::vector<int> out;
    for (int h : hosts)
        if (std::none_of(out.begin(), out.end(),
                         [&](int k) { return interchangeable_hosts(c, h, k); }))
            out.push_back(h);
    return out;
}

// The measured step ratio of a placement's shape (EngineOptions::shape_profile), for one
// whose hosts all have as many GPUs as a size the profile has; over more than one leaf
// switch, times the cost model's ratio `model` (the profile measured shapes under one).
std::optional<double> profiled_ratio(const SearchContext &c, const Placement &p, double model) {
    const ShapeProfile *profile = c.engine.options().shape_profile.get();
    if (!profile || c.gpus_needed == 0 || p.hosts.empty())
        return std::nullopt;
    const ClusterGraph &g = c.engine.graph();
    const auto size = std::ssize(g.node(p.hosts.front()).gpus);
    ShapeProfile::Shape shape;
    bool one_leaf = true;
    for (std::size_t i = 0; i < p.hosts.size(); ++i) {
        if (std::ssize(g.node(p.hosts[i]).gpus) != size)
            return std::nullopt;
        one_leaf = one_leaf && g.host_leaf(p.hosts[i]) == g.host_leaf(p.hosts.front());
        if (!p.gpus[i].empty())
            shape.push_back(static_cast<int>(p.gpus[i].size()));
    }
    const auto ratio = profile->ratio(static_cast<int>(size), std::move(shape));
    if (!ratio)
        return std::nullopt;
    return one_leaf ? *ratio : *ratio * model;
}

// What one decision's search may spend: time on the engine's clock, or with a work budget
// a number of placements scored (no clock read, so the same input takes the same path at
// every run).
class SearchBudget {
  public:
    explicit SearchBudget(const PlacementEngine &e)
        : clock_(e.clock()),
          work_(e.options().work_budget),
          deadline_ms_(work_ ? 0 : clock_.steady_ms() + e.options().time_budget_ms) {}
    void spend() { ++spent_; }
    bool exhausted() const { return work_ ? spent_ >= work_ : clock_.steady_ms() > deadline_ms_; }

  private:
    const Clock &clock_;
    std::uint32_t work_;
    double deadline_ms_;
    std::uint32_t spent_ = 0;
};

// The local search of place_engine: swaps one host of `best` for an eligible host under
// the same or a sibling leaf, first improvement, until nothing improves or the budget is
// spent.
template <class Evaluate, class Better>
void improve_locally(const SearchContext &c, Scored &best, const SearchBudget &budget,
                     Evaluate evaluate, Better better) {
    const ClusterGraph &g = c.engine.graph();
    bool improved = true;
    while (improved && !budget.exhausted()) {
        improved = false;
        std::unordered_set<int> chosen(best.p.hosts.begin(), best.p.hosts.end());
        std::vector<int> leaves;
        for (int h : best.p.hosts)
            if (std::find(leaves.begin(), leaves.end(), g.host_leaf(h)) == leaves.end())
                leaves.push_back(g.host_leaf(h));
        std::vector<int> spare;
        for (int leaf : leaves) {
            if (leaf < 0)
                continue;
            for (int h : g.hosts_at_leaf(leaf))
                if (!chosen.count(h) && c.capacity[h] > 0)
                    spare.push_back(h);
        }
        spare = one_of_each_kind(c, spare);
        const std::vector<int> kinds = one_of_each_kind(c, best.p.hosts);
        for (std::size_t i = 0; i < best.p.hosts.size() && !improved; ++i) {
            if (std::find(kinds.begin(), kinds.end(), best.p.hosts[i]) == kinds.end())
                continue;  // a host of the same kind came earlier: the same swaps
            for (int h : spare) {
                if (budget.exhausted())
                    break;
                if (interchangeable_hosts(c, best.p.hosts[i], h))
                    continue;  // the same placement but for the host's place in the ring
                auto hosts = best.p.hosts;
                hosts[i] = h;
                Scored s = evaluate(hosts);
                if (s.p.rank_count() == best.p.rank_count() && better(s, best)) {
                    best = std::move(s);
                    improved = true;
                    break;
                }
            }
        }
    }
}

// The learned scorer's pick among the engine's admissible candidates (each host set once),
// the objective's own pick among them `objective_pick`.
Placement learned_pick(const SearchContext &c, std::vector<Scored> pool,
                       std::size_t objective_pick, double ideal_s, double host_rate) {
    const PlacementEngine &e = c.engine;
    std::vector<PlaceCandidateFacts> facts;
    for (auto &s : pool) {
        e.score_risk(c.demand, &c.state, s.p);  // an input, whatever the risk weight
        facts.push_back({&s.p, s.objective, s.destroyed_of(c.state)});
    }
    auto inputs = placement_inputs(e.graph(), c.state, c.demand, ideal_s, host_rate, facts);
    inputs.objective_pick = objective_pick;
    const std::size_t pick = e.options().placement_model->choose(inputs);
    return std::move(pool[std::min(pick, pool.size() - 1)].p);
}

// The sizes a measured shape keeps room for: those waiting and those the recent history
// asked (ClusterState::recent), less the job being placed (counted in each when its
// caller has seen it).
std::vector<ClusterState::WantedSize> room_sizes(const SearchContext &c) {
    std::vector<ClusterState::WantedSize> out;
    const auto own = ClusterState::size_of(c.gpus_needed, c.demand);
    for (const auto *list : {&c.state.wanted, &c.state.recent})
        for (auto size : *list) {
            if (size.same_size(own))
                size.weight -= 1;
            if (size.weight > 1e-9)
                ClusterState::count_size(out, size);
        }
    return out;
}

// Whether a's objective beats b's. Equal objectives: by a profile, the cost model decides
// among one shape's placements; then the one that leaves more room for the sizes waiting.
bool ahead(const SearchContext &c, bool by_shape, const Scored &a, const Scored &b) {
    if (std::abs(a.objective - b.objective) <= 1e-9) {
        if (by_shape && std::abs(a.model - b.model) > 1e-9)
            return a.model < b.model;
        return a.destroyed_of(c.state) < b.destroyed_of(c.state) - 1e-9;
    }
    return a.objective < b.objective;
}

// The subtrees place_engine starts from: the best-fit one first (the efficiency floor),
// its rivals, the best fit on the least loaded leaves, and the NVLink domains that fit.
std::vector<SubtreeFit> candidate_subtrees(const SearchContext &c) {
    const int rivals = 1 + c.engine.options().rival_subtrees;
    auto fits = fitting_subtrees(c, rivals);
    if (fits.empty())
        return fits;
    if (auto unloaded = fitting_unloaded(c, fits.front()))
        fits.push_back(std::move(*unloaded));
    for (auto &fit : fitting_domains(c, rivals))
        fits.push_back(std::move(fit));
    return fits;
}

}  // namespace

std::optional<Placement> place_engine(const SearchContext &c, double risk_weight) {
    SearchBudget budget(c.engine);
    const PlacementEngine &e = c.engine;
    const double host_rate = e.risk_model().constants().host_per_day;
    risk_weight *= risk_weight > 0 ? failure_evidence(c.state, host_rate) : 0;
    const bool weigh_risk = risk_weight > 0;
    const double ideal_s = e.lower_bound(c.demand);
    // A measured profile rates shapes first and the cost model second.
    const bool by_shape = e.options().shape_profile && c.gpus_needed > 0;

    // A placement's hosts with their GPUs, not yet scored; then scored.
    auto assembled = [&](std::vector<int> hosts) {
        return Scored{assemble(c, std::move(hosts), true), 0};
    };
    auto score = [&](Scored &s) {
        budget.spend();
        e.score_comm(c.demand, &c.state, ideal_s, s.p);
        if (weigh_risk)  // else only the placement kept needs its risk
            e.score_risk(c.demand, &c.state, s.p);
        s.model = (s.p.comm_s + 1e-9) / (s.p.lower_bound_s + 1e-9);
        const auto measured = by_shape ? profiled_ratio(c, s.p, s.model) : std::nullopt;
        s.speed = measured ? 1 / *measured : s.p.efficiency;
        s.objective = (measured ? *measured : s.model) + risk_weight * s.p.risk / host_rate;
    };
    auto evaluate = [&](std::vector<int> hosts) {
        Scored s = assembled(std::move(hosts));
        score(s);
        return s;
    };

    auto fits = candidate_subtrees(c);
    if (fits.empty())
        return std::nullopt;
    // The tree best-fit candidate (with better GPUs) sets the efficiency floor: the
    // risk term may trade efficiency only down to it. By a profile, it also sets how much
    // room for the sizes waiting and lately asked a measured shape may take: no more.
    double floor = 0, floor_room = 0;
    const auto others = by_shape ? room_sizes(c) : std::vector<ClusterState::WantedSize>{};
    auto admissible = [&](const Scored &s) {
        return s.speed >= floor - 1e-12 &&
               (!by_shape || s.room_of(c.state, others) <= floor_room + 1e-9);
    };
    // An admissible placement beats one that is not; else the objective decides. b, the
    // best so far, is admissible (the first candidate sets the floors), so a's room, the
    // costliest test, is counted only where a would win.
    auto better = [&](const Scored &a, const Scored &b) {
        if (!admissible(b))
            return admissible(a) || ahead(c, by_shape, a, b);
        return ahead(c, by_shape, a, b) && admissible(a);
    };
    const CandidateChooser *model = e.options().placement_model.get();
    std::vector<Scored> pool;  // with a learned scorer: what it chooses among
    auto pooled = [&](const Scored &s) {
        if (model && admissible(s) &&
            std::none_of(pool.begin(), pool.end(),
                         [&](const Scored &o) { return o.p.hosts == s.p.hosts; }))
            pool.push_back(s);
    };
    // No objective is below 1 without a risk term (communication at best the ideal's): a
    // rival of a best at 1 can only tie it, and a tie goes to the placement that takes
    // less from the sizes waiting, so a rival that takes no less is not scored (but
    // for a learned scorer, which sees every candidate).
    auto cannot_win = [&](const Scored &s, const Scored &best) {
        return !model && !weigh_risk && best.objective < 1 + 1e-9 &&
               (!by_shape || best.model < 1 + 1e-9) &&
               s.destroyed_of(c.state) >= best.destroyed_of(c.state) - 1e-9;
    };
    std::optional<Scored> kept;
    auto consider = [&](Scored s) {
        if (kept && cannot_win(s, *kept))
            return;
        score(s);
        if (!kept) {
            floor = s.speed;
            floor_room = by_shape ? s.room_of(c.state, others) : 0;
        }
        pooled(s);
        if (!kept || better(s, *kept))
            kept = std::move(s);
    };
    std::vector<std::vector<int>> seen;  // host sets already met: rivals often repeat one
    for (auto &fit : fits) {
        std::sort(fit.hosts.begin(), fit.hosts.end());
        if (std::find(seen.begin(), seen.end(), fit.hosts) != seen.end())
            continue;
        seen.push_back(fit.hosts);
        consider(assembled(fit.hosts));
        if (budget.exhausted())
            break;
    }
    for (auto &fit : fitting_shapes(c, 1 + e.options().rival_subtrees)) {
        if (budget.exhausted())
            break;
        consider(Scored{assemble(c, fit.hosts, true, &fit.take), 0});
    }
    Scored best = std::move(*kept);

    if (!best.p.hosts.empty() && best.p.efficiency < 1.0 - 1e-9)
        improve_locally(c, best, budget, evaluate, better);
    pooled(best);
    if (pool.size() > 1) {
        // The index before the call: its arguments are evaluated in no set order, and
        // clang moves the pool into the parameter before reading pool.begin().
        const auto pick = static_cast<std::size_t>(
            std::find_if(pool.begin(), pool.end(),
                         [&](const Scored &s) { return s.p.hosts == best.p.hosts; }) -
            pool.begin());
        return learned_pick(c, std::move(pool), pick, ideal_s, host_rate);
    }
    if (!weigh_risk)
        e.score_risk(c.demand, &c.state, best.p);
    return best.p;
}

}  // namespace slurm_ai::detail
