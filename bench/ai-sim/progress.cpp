// A running job's step time, its progress and the contention between jobs (see
// simulator.hpp).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "run_state.hpp"
#include "slurm_ai/elastic/elastic_plan.hpp"

namespace slurm_ai::sim::detail {
namespace {

std::vector<int> gpus_per_host(const Placement &p) {
    std::vector<int> out;
    for (const auto &g : p.gpus)
        out.push_back(static_cast<int>(g.size()));
    return out;
}

// The shapes a demand allows, for the ideal of a measured job.
AskedShape asked_shape(const JobDemand &d) {
    return {static_cast<int>(d.min_nodes), static_cast<int>(d.max_nodes),
            static_cast<int>(d.gpus_per_node)};
}

// Relative change under which a recosted step counts as unchanged.
constexpr double kSettled = 1e-3;

}  // namespace

StepEstimate Run::estimate(int j, const Placement &p, const JobDemand &d) const {
    if (ideal_) {
        StepEstimate e = placed_estimate(j, p, d);
        e.step_s = e.ideal_step_s;
        e.comm_s = e.ideal_comm_s;
        return e;
    }
    return placed_estimate(j, p, d);
}

StepEstimate Run::placed_estimate(int j, const Placement &p, const JobDemand &d) const {
    const SimJob &job = jobs_[j];
    const auto per_host = gpus_per_host(p);
    const int gpus = std::accumulate(per_host.begin(), per_host.end(), 0);
    if (!job.model.empty()) {
        // Strong scaling: the global batch stays what the job asks, so each GPU takes its
        // share of it.
        const double local = gpus > 0 ? job.local_bsz * job.gpus / gpus : job.local_bsz;
        return steps_.from_measurements(job.model, local, per_host, asked_shape(d));
    }
    Placement q = p;
    q.comm_s = engine_.cost_model().estimate(d, p).seconds;
    q.lower_bound_s = engine_.lower_bound(d);
    if (!job.is_elastic())
        return steps_.from_cost_model(q);
    const JobDemand asked = demand_at_size(job.demand, static_cast<std::uint32_t>(job.nodes));
    return steps_.from_cost_model(q, engine_.lower_bound(asked),
                                  static_cast<double>(job.gpus) / std::max(gpus, 1));
}

double Run::base_step(int j) const {
    const SimJob &job = jobs_[j];
    const JobState &s = js_[j];
    if (!job.model.empty()) {
        if (!job.is_elastic())
            return steps_
                .from_measurements(job.model, job.local_bsz, gpus_per_host(s.placement),
                                   asked_shape(job.demand))
                .ideal_step_s;
        // At the size it asks: -N n --gpus-per-node=g, one shape.
        const JobDemand at_size = demand_at_size(job.demand, static_cast<std::uint32_t>(job.nodes));
        const std::vector<int> asked(static_cast<std::size_t>(job.nodes),
                                     static_cast<int>(at_size.gpus_per_host()));
        return steps_.from_measurements(job.model, job.local_bsz, asked, asked_shape(at_size))
            .ideal_step_s;
    }
    if (!job.is_elastic())
        return s.alone.ideal_step_s;
    const JobDemand asked = demand_at_size(job.demand, static_cast<std::uint32_t>(job.nodes));
    return steps_.asked_step_s(engine_.lower_bound(asked));
}

double Run::progress(const JobState &s, double t) const {
    // The last mark at or before t (a pause's end may lie ahead).
    auto it = std::upper_bound(s.marks.begin(), s.marks.end(), t,
                               [](double x, const RateMark &m) { return x < m.t; });
    if (it == s.marks.begin())
        return s.marks.empty() ? s.saved_s : s.marks.front().done_s;
    const RateMark &m = *std::prev(it);
    return m.done_s + (t - m.t) * m.rate;
}

std::pair<double, double> Run::checkpointed(const JobState &s, double t) const {
    if (s.marks.empty())
        return {s.saved_s, t};
    const double from = s.marks.front().t;
    const double cp = opt_.failures.checkpoint_s;
    const double at = cp > 0 && t > from ? from + std::floor((t - from) / cp) * cp : from;
    return {std::max(progress(s, at), s.marks.front().done_s), at};
}

void Run::restart_progress(int j, double t, double done_s, double pause_s) {
    JobState &s = js_[j];
    s.saved_s = done_s;
    s.marks.assign(1, RateMark{t, done_s, 0});
    if (pause_s > 0)
        s.marks.push_back({t + pause_s, done_s, 0});
}

void Run::note_running_time(int j, double t) {
    JobState &s = js_[j];
    if (s.marks.empty())
        return;
    // From the later of the last rate change and a pause's end.
    const double from = std::min(s.marks.back().t, t);
    const double ratio = s.alone.step_s > 0 ? s.step.step_s / s.alone.step_s : 1.0;
    s.loaded_s += t - from;
    s.loaded_weighted += (t - from) * ratio;
}

void Run::set_rate(int j, double t) {
    JobState &s = js_[j];
    const SimJob &job = jobs_[j];
    note_running_time(j, t);
    // The rate is ideal step / step; the remaining work is timed as remaining x step /
    // ideal step (the same arithmetic as a job's slowdown).
    const double per_work = s.step.step_s / s.base_step_s;
    const double rate = per_work > 0 ? 1 / per_work : 0;
    const double before = s.marks.empty() ? 0 : s.marks.back().rate;
    if (!s.marks.empty() && s.marks.back().t >= t) {
        s.marks.back().rate = rate;  // a fresh start, or a pause that has not ended
    } else {
        s.marks.push_back({t, progress(s, t), rate});
    }
    useful_ += job.gpus * (rate - before);
    const RateMark &m = s.marks.back();
    ++s.epoch;
    push(m.t + std::max(job.work_s - m.done_s, 0.0) * per_work, EventKind::kFinish, j, s.epoch);
}

void Run::retime(double t, int changed) {
    if (changed >= 0) {
        JobState &s = js_[changed];
        s.alone = estimate(changed, s.placement, s.demand);
        s.base_step_s = base_step(changed);
        s.uplinks.clear();
        if (opt_.contention && !ideal_ && s.placement.hosts.size() > 1)
            s.uplinks = engine_.cost_model().uplink_use(s.demand, s.placement, &s.uplink_comm_s);
        s.step = s.alone;
    }
    if (!opt_.contention || ideal_ || (changed >= 0 && js_[changed].uplinks.empty())) {
        if (changed >= 0)
            set_rate(changed, t);
        return;
    }
    // The jobs that cross uplinks, each with its communication alone as the cost model
    // gave it with its uplink use (measured jobs scale their measured sync time by what
    // the model says).
    std::vector<int> crossing;
    for (int j : running_)
        if (!js_[j].uplinks.empty())
            crossing.push_back(j);
    std::vector<double> step(crossing.size());
    for (std::size_t i = 0; i < crossing.size(); ++i)
        step[i] = js_[crossing[i]].step.step_s;
    // A fixed point of: each job's share of an uplink = its busy time there / its step;
    // each job costed with the others' shares as load (at most what leaves it its fair
    // share); steps damped by half to settle.
    std::vector<double> next(step);
    for (int round = 0; round < 12; ++round) {
        std::fill(uplink_share_.begin(), uplink_share_.end(), 0.0);
        std::fill(uplink_jobs_.begin(), uplink_jobs_.end(), 0);
        for (std::size_t i = 0; i < crossing.size(); ++i)
            for (const auto &u : js_[crossing[i]].uplinks) {
                uplink_share_[u.switch_node] += u.busy_s / step[i];
                ++uplink_jobs_[u.switch_node];
            }
        double moved = 0;
        for (std::size_t i = 0; i < crossing.size(); ++i) {
            const JobState &s = js_[crossing[i]];
            for (const auto &u : s.uplinks) {
                const int others = uplink_jobs_[u.switch_node] - 1;
                const double load = uplink_share_[u.switch_node] - u.busy_s / step[i];
                load_view_.uplink_load[u.switch_node] =
                    std::clamp(load, 0.0, others / (others + 1.0));
            }
            const double comm = engine_.cost_model().estimate(s.demand, s.placement, &load_view_).seconds;
            for (const auto &u : s.uplinks)
                load_view_.uplink_load[u.switch_node] = 0;
            const double scale = s.uplink_comm_s > 0 ? comm / s.uplink_comm_s : 1.0;
            const double target = s.alone.step_s + s.alone.comm_s * (scale - 1);
            next[i] = round == 0 ? target : (step[i] + target) / 2;
            moved = std::max(moved, std::abs(next[i] - step[i]) / step[i]);
        }
        step.swap(next);
        if (moved < kSettled)
            break;
    }
    // The engine sees what every running job puts on the uplinks (kept under 1: the
    // cost model divides by what is left).
    for (std::size_t l = 0; l < uplink_share_.size(); ++l)
        state_.uplink_load[l] = std::min(uplink_share_[l], 0.95);
    for (std::size_t i = 0; i < crossing.size(); ++i) {
        JobState &s = js_[crossing[i]];
        const double before = s.step.step_s;
        if (crossing[i] != changed && std::abs(step[i] - before) <= kSettled * before)
            continue;
        s.step.step_s = step[i];
        s.step.comm_s = s.alone.comm_s + (step[i] - s.alone.step_s);
        set_rate(crossing[i], t);
    }
}

}  // namespace slurm_ai::sim::detail
