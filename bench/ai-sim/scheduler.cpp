// Slurm's main scheduler and backfill over the placement engine (see simulator.hpp).
// Counting tests (free GPUs per host) decide when a job could fit at all; only then is
// the engine asked, so that the simulation spends its time where Slurm's select plugin
// would.
#include <algorithm>
#include <bit>
#include <chrono>
#include <map>
#include <tuple>

#include "run_state.hpp"
#include "slurm_ai/elastic/elastic_plan.hpp"
#include "slurm_ai/elastic/elastic_policy.hpp"

namespace slurm_ai::sim::detail {
namespace {

// Slurm's backfill takes a job that runs past its time limit to end one resolution from
// now (bf_resolution, 60 s by default).
constexpr double kResolution = 60;

}  // namespace

ClusterState::WantedSize Run::size_of(int j) const {
    return ClusterState::size_of(jobs_[j].gpus, jobs_[j].demand);
}

void Run::refresh_wanted(double t) {
    // As many as a main scheduling pass looks at (default_queue_depth).
    constexpr int kDepth = 100;
    wanted_jobs_.clear();
    state_.wanted.clear();
    int seen = 0;
    for (const auto &[prio, j] : pending_) {
        if (++seen > kDepth)
            break;
        if (eligible(j, t) && jobs_[j].gpus > 1) {
            ClusterState::count_size(state_.wanted, size_of(j));
            wanted_jobs_.insert(j);
        }
    }
    // With a shape profile, the sizes asked lately: the select plugin sees a job first at
    // its submission (jobs_ is in that order).
    state_.recent.clear();
    if (engine_.options().shape_profile) {
        auto first = std::partition_point(jobs_.begin(), jobs_.end(), [&](const SimJob &job) {
            return job.submit_s < t - ClusterState::kRecentSizes_s;
        });
        for (; first != jobs_.end() && first->submit_s <= t; ++first)
            if (first->gpus > 1)
                ClusterState::count_size(state_.recent,
                                         ClusterState::size_of(first->gpus, first->demand));
    }
    view_.wanted = state_.wanted;
    view_.recent = state_.recent;
}

// A job that starts leaves the queue the engine keeps room for at once, as the select
// plugin forgets it when slurmctld starts it (SelectService::forget), not at the next
// pass's refresh_wanted.
void Run::unwant(int j) {
    if (wanted_jobs_.erase(j) == 0)
        return;
    const auto size = size_of(j);
    for (auto *w : {&state_.wanted, &view_.wanted}) {
        auto it = std::find_if(w->begin(), w->end(),
                               [&](const auto &x) { return x.same_size(size); });
        if (it != w->end() && (it->weight -= 1) <= 1e-9)
            w->erase(it);
    }
}

bool Run::fits_now(const Shape &s) const {
    if (s.per_host == 0)
        return free_up_ >= s.gpus;
    int hosts = 0;
    for (std::size_t k = static_cast<std::size_t>(s.per_host); k < hist_.size(); ++k)
        hosts += hist_[k];
    return hosts >= s.hosts;
}

JobDemand Run::at_test(int j, double t, const JobDemand &demand) const {
    JobDemand d = demand;
    d.pending_s = static_cast<std::uint32_t>(std::max(0.0, t - jobs_[j].submit_s));
    const double held_since = js_[j].held_since;
    d.held_s = static_cast<std::uint32_t>(held_since >= 0 ? std::max(0.0, t - held_since) : 0);
    d.time_limit_s = static_cast<std::uint32_t>(jobs_[j].limit_s);
    return d;
}

Decision Run::decide(int j, double t, const JobDemand &demand, const ClusterState &view,
                     const PlacementPolicy &policy) {
    const JobDemand d = at_test(j, t, demand);
    auto t0 = std::chrono::steady_clock::now();
    Decision decision = engine_.place(d, view, policy);
    result_.placement_ms +=
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    ++result_.placements_tried;
    // A run-now test that holds the job starts its hold (the plugin's held_since).
    if (decision.wait && &policy == &policy_ && js_[j].held_since < 0)
        js_[j].held_since = t;
    return decision;
}

std::optional<Placement> Run::place(int j, double t, const JobDemand &demand,
                                    const ClusterState &view, const PlacementPolicy &policy,
                                    bool *held) {
    Decision decision = decide(j, t, demand, view, policy);
    if (held)
        *held = decision.wait;
    return std::move(decision.placement);
}

std::optional<std::pair<Placement, JobDemand>> Run::place_now(int j, double t,
                                                              const ClusterState &view,
                                                              const PlacementPolicy &policy) {
    const SimJob &job = jobs_[j];
    if (!job.is_elastic()) {
        auto p = place(j, t, job.demand, view, policy);
        if (!p)
            return std::nullopt;
        return std::make_pair(std::move(*p), job.demand);
    }
    // The select plugin's ElasticStart=goodput (its bar: start_gain), on the engine's
    // policies.
    std::uint32_t hi = static_cast<std::uint32_t>(job.nodes);
    if (opt_.goodput_start && policy_.searches()) {
        JobState &s = js_[j];
        if (s.goodput.empty())
            s.goodput = goodput_curve(j);
        ElasticJob e;
        e.spec = job.elastic;
        e.goodput = s.goodput;
        e.gpus_per_node = static_cast<std::uint32_t>(std::max(job.gpus / job.nodes, 1));
        const int min_gpus = static_cast<int>(job.elastic.min_nodes) * e.gpus_per_node;
        const double bar = start_gain(view, job.gpus, min_gpus, opt_.suite.min_gain);
        hi = std::min(hi, goodput_size(std::move(e), bar));
    }
    // The plugin's choice of size (place_sized); a size the free GPUs cannot hold is not
    // worth the engine's time.
    auto sized = place_sized(job.demand, job.elastic.min_nodes, hi, [&](const JobDemand &d) {
        if (&view == &state_ && !fits_now(shape_of(d)))
            return Decision{};
        return decide(j, t, d, view, policy);
    });
    if (!sized.decision.placement)
        return std::nullopt;
    return std::make_pair(std::move(*sized.decision.placement), std::move(sized.demand));
}

void Run::main_schedule(double t) {
    changed_ = false;
    refresh_failures(t);
    refresh_wanted(t);
    // Priority order; a requeued job whose begin time has not come is not a candidate
    // (it does not hold the others back, as in Slurm).
    std::vector<int> order;
    for (const auto &[prio, j] : pending_)
        if (eligible(j, t))
            order.push_back(j);
    for (int j : order) {
        if (!fits_now(shapes_[j]))
            return;
        auto p = place_now(j, t, state_, policy_);
        if (!p)
            return;
        start(j, t, std::move(p->first), p->second);
    }
}

void Run::add_releases(int j) {
    const JobState &s = js_[j];
    for (std::size_t i = 0; i < s.placement.hosts.size(); ++i) {
        Release r{s.expected_end, s.placement.hosts[i], gpu_mask(s.placement.gpus[i])};
        auto at = std::upper_bound(releases_.begin(), releases_.end(), r,
                                   [](const Release &a, const Release &b) { return a.t < b.t; });
        releases_.insert(at, r);
    }
}

void Run::backfill(double t) {
    if (!bf_dirty_)
        return;
    bf_dirty_ = false;
    // A pass only matters through the jobs it starts now, and a job that does not fit the
    // free GPUs now (reservations aside) cannot start: the jobs after the last one that
    // fits need no reservation. Starting a job only takes GPUs, so this bound holds for
    // the whole pass.
    std::vector<int> order;
    std::size_t last_fit = 0;
    for (const auto &[prio, j] : pending_) {
        if (static_cast<int>(order.size()) >= opt_.backfill.max_job_test)
            break;
        if (!eligible(j, t))
            continue;
        order.push_back(j);
        if (fits_now(shapes_[j]))
            last_fit = order.size();
    }
    order.resize(last_fit);
    if (order.empty())
        return;
    ++result_.backfill_passes;
    refresh_failures(t);
    refresh_wanted(t);
    releases_.clear();
    for (int j : running_) {
        const Placement &p = js_[j].placement;
        for (std::size_t i = 0; i < p.hosts.size(); ++i)
            releases_.push_back(
                {std::max(js_[j].expected_end, t + kResolution), p.hosts[i], gpu_mask(p.gpus[i])});
    }
    std::sort(releases_.begin(), releases_.end(), [](const Release &a, const Release &b) {
        return std::tie(a.t, a.host) < std::tie(b.t, b.host);
    });
    by_start_.clear();
    by_end_.clear();
    for (int j : order) {
        auto found = earliest(j, t);
        if (!found)
            continue;
        auto &[when, placement] = *found;
        if (when <= t) {
            start(j, t, std::move(placement), jobs_[j].demand);
            add_releases(j);
            ++result_.backfill_starts;
            continue;
        }
        const double end = when + jobs_[j].limit_s;
        for (int h : placement.hosts) {
            std::pair<double, int> s{when, h}, e{end, h};
            by_start_.insert(std::upper_bound(by_start_.begin(), by_start_.end(), s), s);
            by_end_.insert(std::upper_bound(by_end_.begin(), by_end_.end(), e), e);
        }
    }
    // A job started here leaves bf_dirty_ set: the next pass plans again around it, as
    // Slurm's next backfill cycle would.
}

// The earliest time within the backfill window at which job j fits, with the placement
// it gets then (from the planning policy for a later start, see simulator.hpp): GPUs of running
// jobs come free at their expected ends, and a host reserved earlier in this pass over [s, e) is
// out of reach while the job's window [T, T + limit) overlaps it, for s - limit < T < e.
std::optional<std::pair<double, Placement>> Run::earliest(int j, double t) {
    const Shape &shape = shapes_[j];
    const double limit = jobs_[j].limit_s;
    const int hosts = graph_.host_count();
    view_.free_gpus = state_.free_gpus;
    view_.failures = state_.failures;
    blocked_.assign(static_cast<std::size_t>(hosts), 0);

    // What the job could use: hosts with per_host free GPUs, or free GPUs.
    auto counts = [&](int h) {
        if (!state_.usable[h] || blocked_[h])
            return 0;
        int n = std::popcount(view_.free_gpus[h]);
        return shape.per_host ? (n >= shape.per_host ? 1 : 0) : n;
    };
    std::size_t ri = 0, si = 0, ei = 0;
    for (; si < by_start_.size() && by_start_[si].first - limit < t; ++si)
        ++blocked_[by_start_[si].second];
    int have = 0;
    for (int h = 0; h < hosts; ++h)
        have += counts(h);
    const int need = shape.per_host ? shape.hosts : shape.gpus;

    double when = t;
    const double horizon = t + opt_.backfill.window_s;
    for (;;) {
        if (have >= need) {
            for (int h = 0; h < hosts; ++h)
                view_.usable[h] = state_.usable[h] && !blocked_[h] ? 1 : 0;
            bool held = false;
            if (auto p = place(j, t, jobs_[j].demand, view_, when > t ? plan_policy_ : policy_,
                               &held))
                return std::make_pair(when, std::move(*p));
            // As in Slurm: the plugin leaves will-run tests to cons_tres, which says the
            // job can start now; the run-now test holds it, so it gets no reservation.
            if (held && when <= t)
                return std::nullopt;
        }
        // The next time something comes free: a release, or the end of a reservation.
        double next = -1;
        if (ri < releases_.size())
            next = releases_[ri].t;
        if (ei < by_end_.size() && (next < 0 || by_end_[ei].first < next))
            next = by_end_[ei].first;
        if (next < 0 || next > horizon)
            return std::nullopt;
        when = next;
        auto update = [&](int h, auto &&change) {
            have -= counts(h);
            change();
            have += counts(h);
        };
        for (; ri < releases_.size() && releases_[ri].t <= when; ++ri) {
            const Release &r = releases_[ri];
            update(r.host, [&] { view_.free_gpus[r.host] |= r.gpus; });
        }
        for (; si < by_start_.size() && by_start_[si].first - limit < when; ++si) {
            const int h = by_start_[si].second;
            update(h, [&] { ++blocked_[h]; });
        }
        for (; ei < by_end_.size() && by_end_[ei].first <= when; ++ei) {
            const int h = by_end_[ei].second;
            update(h, [&] { --blocked_[h]; });
        }
    }
}

// Free GPUs (on hosts that are up) that no pending job could use now: a job could if the
// free GPUs hold it (enough hosts with per_host free GPUs, or enough free GPUs), and then
// it could use any of those GPUs.
int Run::fragmented_gpus() const {
    if (pending_.empty())
        return 0;
    std::set<Shape> shapes;
    for (const auto &[prio, j] : pending_)
        shapes.insert(shapes_[j]);
    const int hosts = graph_.host_count();
    std::vector<char> usable(static_cast<std::size_t>(hosts), 0);
    for (const auto &s : shapes) {
        if (s.per_host == 0) {
            if (free_up_ >= s.gpus)
                return 0;
            continue;
        }
        int eligible = 0;
        for (int h = 0; h < hosts; ++h)
            eligible += state_.usable[h] && state_.free_gpu_count(h) >= s.per_host;
        if (eligible < s.hosts)
            continue;
        for (int h = 0; h < hosts; ++h)
            if (state_.usable[h] && state_.free_gpu_count(h) >= s.per_host)
                usable[static_cast<std::size_t>(h)] = 1;
    }
    int used = 0;
    for (int h = 0; h < hosts; ++h)
        if (usable[static_cast<std::size_t>(h)])
            used += state_.free_gpu_count(h);
    return free_up_ - used;
}

}  // namespace slurm_ai::sim::detail
