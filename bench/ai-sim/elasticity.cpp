// ai-elasticd in the simulation (the suite's elastic jobs, see simulator.hpp): its looks,
// its plan (elastic_policy.hpp, the daemon's own code), and the resizes, whether
// ai-elasticd or ai-recover asks for them.
#include <algorithm>
#include <cmath>

#include "run_state.hpp"
#include "slurm_ai/elastic/elastic_plan.hpp"

namespace slurm_ai::sim::detail {

void Run::elastic_tick(double t) {
    if (!suite_ || !opt_.suite.elastic)
        return;
    const double every = opt_.suite.elastic_interval_s;
    if (t - elastic_last_ >= every) {
        elastic_look(t);
        return;
    }
    if (!elastic_queued_) {
        push(elastic_last_ + every, EventKind::kElastic, 0);
        elastic_queued_ = true;
    }
}

// The goodput curve ai-elasticd plans with (elastic_plan.hpp's unit: GPUs' worth of
// computation per second): the cost model's, from elastic_plan's goodput_curve, for a job
// of no measured model; the measured steps at each size for one of a measured model.
std::vector<double> Run::goodput_curve(int j) const {
    const SimJob &job = jobs_[j];
    const auto nodes = static_cast<std::uint32_t>(job.nodes);
    if (job.model.empty())
        return slurm_ai::goodput_curve(
            engine_, job.demand, job.elastic.max_nodes,
            compute_from_share(engine_, job.demand, nodes, steps_.comm_share()));
    const int g = job.gpus / job.nodes;
    auto measured = [&](int n) {
        const std::vector<int> per_host(static_cast<std::size_t>(n), g);
        return steps_.from_measurements(job.model, job.local_bsz * job.nodes / n, per_host);
    };
    const StepEstimate asked = measured(job.nodes);
    const double compute = (asked.step_s - asked.comm_s) * job.gpus;
    std::vector<double> out(job.elastic.max_nodes + 1, 0.0);
    for (int n = 1; n < static_cast<int>(out.size()); ++n) {
        const double step = measured(n).step_s;
        out[static_cast<std::size_t>(n)] = step > 0 ? compute / step : 0;
    }
    return out;
}

void Run::elastic_look(double t) {
    elastic_last_ = t;
    ElasticPolicyInput in;
    in.now = std::llround(t);
    in.grow_cooldown_s = static_cast<std::uint32_t>(opt_.suite.grow_cooldown_s);
    in.min_gain = opt_.suite.min_gain;
    // Priority: Slurm's order here is submission order, and jobs_ is sorted by it.
    auto priority = [&](int j) { return static_cast<std::uint32_t>(jobs_.size() - j); };
    for (int j : running_) {
        const SimJob &job = jobs_[j];
        if (!job.is_elastic())
            continue;
        JobState &s = js_[j];
        if (s.goodput.empty())
            s.goodput = goodput_curve(j);
        ElasticJob e;
        e.job_id = static_cast<std::uint32_t>(j);
        e.priority = priority(j);
        e.nodes = static_cast<std::uint32_t>(s.nodes);
        e.spec = job.elastic;
        e.last_resize = s.last_resize >= 0 ? std::max<std::int64_t>(std::llround(s.last_resize), 1) : 0;
        e.goodput = s.goodput;
        e.gpus_per_node = static_cast<std::uint32_t>(job.gpus / job.nodes);
        in.elastic.push_back(std::move(e));
    }
    if (in.elastic.empty())
        return;
    // Idle nodes are Slurm's: hosts that are up with every GPU free. A waiting job needs
    // the nodes it cannot find on the hosts in use.
    const int hosts = graph_.host_count();
    std::uint32_t idle = 0;
    for (int h = 0; h < hosts; ++h)
        idle += state_.usable[h] && state_.host_free(h);
    for (const auto &[prio, j] : pending_) {
        if (!eligible(j, t))
            continue;
        const Shape &sh = shapes_[j];
        const int max_gpus = std::max(cluster_.max_gpus_per_host, 1);
        int partial = 0, partial_gpus = 0;
        for (int h = 0; h < hosts; ++h)
            if (state_.usable[h] && !state_.host_free(h)) {
                const int f = state_.free_gpu_count(h);
                partial += sh.per_host > 0 && f >= sh.per_host;
                partial_gpus += f;
            }
        const int need = sh.per_host > 0 ? sh.hosts - partial
                                         : (sh.gpus - partial_gpus + max_gpus - 1) / max_gpus;
        if (need > 0)
            in.waiting.push_back({static_cast<std::uint32_t>(j), priority(j), "",
                                  static_cast<std::uint32_t>(need)});
    }
    in.idle[""] = idle;
    const auto actions = plan_elastic(in, *opt_.suite.elastic);
    double next_look = -1;
    for (const auto &a : actions) {
        const int j = static_cast<int>(a.job_id);
        JobState &s = js_[j];
        std::vector<int> now = s.placement.hosts;
        if (a.kind == ElasticAction::Kind::kShrink) {
            const std::vector<int> keep{now.front()};  // the batch host
            auto choice = plan_shrink(engine_, s.demand, now, static_cast<int>(a.nodes), keep);
            if (choice.hosts.empty())
                continue;
            for (int h : choice.hosts)
                now.erase(std::find(now.begin(), now.end(), h));
            ++result_.shrinks;
        } else {
            auto choice = plan_grow(engine_, s.demand, now, state_, static_cast<int>(a.nodes));
            if (choice.hosts.empty())
                continue;
            now.insert(now.end(), choice.hosts.begin(), choice.hosts.end());
            ++result_.grows;
        }
        resize(j, t, now, opt_.recovery.resize_s);
        s.last_resize = t;
        ++result_.jobs[j].resizes;
    }
    // A job the cooldown held back is looked at again when it ends.
    for (const auto &e : in.elastic) {
        auto gain = gain_per_gpu(e);
        const double until = static_cast<double>(e.last_resize) + in.grow_cooldown_s;
        if (gain && *gain >= in.min_gain && e.last_resize > 0 && until > t &&
            (next_look < 0 || until < next_look))
            next_look = until;
    }
    if (next_look > 0 && !elastic_queued_) {
        push(next_look, EventKind::kElastic, 0);
        elastic_queued_ = true;
    }
}

void Run::resize(int j, double t, const std::vector<int> &hosts, double pause_s) {
    JobState &s = js_[j];
    const SimJob &job = jobs_[j];
    // The job checkpoints where it is, stops and starts again on the new hosts.
    const double done = std::min(job.work_s, progress(s, t));
    const bool crossed = release(j, t);
    ++s.epoch;
    const JobDemand d = demand_at_size(job.demand, static_cast<std::uint32_t>(hosts.size()));
    Placement p = job_placement(graph_, d, hosts, &state_);
    for (std::size_t i = 0; i < p.hosts.size(); ++i) {
        take(p.hosts[i], gpu_mask(p.gpus[i]));
        host_jobs_[p.hosts[i]].push_back(j);
    }
    s.placement = std::move(p);
    s.demand = d;
    s.nodes = static_cast<int>(hosts.size());
    running_.insert(j);
    restart_progress(j, t, done, pause_s);
    result_.jobs[j].hosts = s.nodes;
    retime(t, j);
    if (crossed && s.uplinks.empty())  // it no longer loads the uplinks the others share
        retime(t, -1);
    result_.jobs[j].step = s.alone;
    changed_ = bf_dirty_ = true;
}

bool Run::shrink_around(int j, int failed_host, double t) {
    const SimJob &job = jobs_[j];
    JobState &s = js_[j];
    if (!job.is_elastic() || s.nodes - 1 < static_cast<int>(job.elastic.min_nodes))
        return false;
    std::vector<int> rest;
    for (int h : s.placement.hosts)
        if (h != failed_host)
            rest.push_back(h);
    resize(j, t, rest, opt_.recovery.suite_s);
    ++result_.shrinks;
    return true;
}

}  // namespace slurm_ai::sim::detail
