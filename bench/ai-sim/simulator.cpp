// The event loop, the life of a job (submitted, started, finished, stopped by a failure and
// requeued) and the failures of nodes.
#include "simulator.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "run_state.hpp"

namespace slurm_ai::sim {
namespace detail {
namespace {


// splitmix64: independent, reproducible seeds for the hosts' failure streams.
std::uint64_t mix(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

}  // namespace

Shape shape_of(const JobDemand &d) {
    Shape s;
    const int total = static_cast<int>(d.total_gpus);
    if (d.gpus_per_node > 0 || d.min_nodes > 1 || d.max_nodes == 1) {
        s.per_host = d.gpus_per_node > 0 ? static_cast<int>(d.gpus_per_node)
                                         : (total + static_cast<int>(d.min_nodes) - 1) /
                                               static_cast<int>(d.min_nodes);
        s.hosts = std::max(static_cast<int>(d.min_nodes), (total + s.per_host - 1) / s.per_host);
    }
    s.gpus = total;
    return s;
}

namespace {

constexpr std::string_view kSuite = "suite";
constexpr std::string_view kLearned = "engine-learned";
constexpr std::string_view kIdeal = "ideal";

// The placement policy of that name ("suite" and "engine-learned" place with the engine),
// made once per run; a name the engine does not know is the caller's error (ai-sim checks
// --policies first).
PlacementPolicy known_policy(std::string_view name) {
    auto p = make_policy(name == kSuite || name == kLearned ? "engine"
                         : name == kIdeal                    ? "tree-bestfit"
                                                             : name);
    if (!p)
        throw std::invalid_argument("unknown policy '" + std::string(name) + "'");
    return *p;
}

// As in the select plugin, which places run-now tests with the engine and leaves
// will-run tests (backfill's planning) to cons_tres, the engine's reservations are
// planned with Slurm's topology best fit, unless the suite is told to plan them too.
PlacementPolicy planning_policy(std::string_view name, const SimOptions &o) {
    PlacementPolicy p = known_policy(name);
    if (!p.searches() || (name == kSuite && o.suite.plan_with_engine))
        return p;
    return known_policy("tree-bestfit");
}

// The engine's options with the cluster's measured shapes, unless they bring their own.
EngineOptions with_shapes(EngineOptions o, const SimCluster &c) {
    if (!o.shape_profile)
        o.shape_profile = c.shapes;
    return o;
}

}  // namespace

Run::Run(const SimCluster &cluster, const std::vector<SimJob> &jobs, const StepTimes &steps,
         const SimOptions &options, std::string_view policy)
    : cluster_(cluster),
      graph_(cluster.graph),
      jobs_(jobs),
      steps_(steps),
      opt_(options),
      suite_(policy == kSuite),
      ideal_(policy == kIdeal),
      learned_(policy == kLearned ? options.learned : nullptr),
      policy_(known_policy(policy)),
      plan_policy_(planning_policy(policy, options)),
      blind_policy_(known_policy("engine-norisk")),
      engine_(cluster.graph, options.cost, options.risk, with_shapes(options.engine, cluster)),
      state_(cluster.graph),
      load_view_(cluster.graph),
      view_(cluster.graph) {
    const int hosts = graph_.host_count();
    hist_.assign(65, 0);
    host_jobs_.assign(static_cast<std::size_t>(hosts), {});
    for (int h = 0; h < hosts; ++h) {
        int n = state_.free_gpu_count(h);
        ++hist_[static_cast<std::size_t>(n)];
        free_up_ += n;
    }
    js_.assign(jobs.size(), {});
    for (const auto &j : jobs)
        shapes_.push_back(shape_of(j.demand));
    remaining_ = static_cast<int>(jobs.size());
    uplink_share_.assign(graph_.fabric().nodes.size(), 0.0);
    uplink_jobs_.assign(graph_.fabric().nodes.size(), 0);

    // Failure rates: a seeded choice of flaky hosts, then one random stream per host.
    const auto &f = opt_.failures;
    host_rate_.assign(static_cast<std::size_t>(hosts), f.node_rate_per_day / 86400.0);
    std::vector<int> order(static_cast<std::size_t>(hosts));
    std::iota(order.begin(), order.end(), 0);
    std::mt19937_64 pick(mix(opt_.seed ^ 0x666c616b79ull));
    std::shuffle(order.begin(), order.end(), pick);
    const auto flaky = static_cast<std::size_t>(std::lround(f.flaky_share * hosts));
    for (std::size_t i = 0; i < flaky && i < order.size(); ++i)
        host_rate_[static_cast<std::size_t>(order[i])] *= f.flaky_factor;
    natural_pending_.assign(static_cast<std::size_t>(hosts), 0);
    history_.assign(static_cast<std::size_t>(hosts), {});
    down_until_.assign(static_cast<std::size_t>(hosts), -1e300);
    link_only_.assign(static_cast<std::size_t>(hosts), 0);
    // What the select plugin would remember of the failures before the simulation.
    for (const auto &before : opt_.failures.history)
        if (before.host >= 0 && before.host < hosts && before.t < 0)
            note_failure(before.host, before.t, before.kind);
    for (int h = 0; h < hosts; ++h)
        host_rng_.emplace_back(mix(opt_.seed * 1000003ull + static_cast<std::uint64_t>(h)));

    result_.policy = std::string(policy);
    result_.cluster_gpus = cluster.gpus;
    result_.jobs.resize(jobs.size());
}

void Run::push(double t, EventKind kind, int subject, long tag) {
    if (kind == EventKind::kFinish || kind == EventKind::kRepair || kind == EventKind::kSubmit ||
        kind == EventKind::kEligible)
        ++productive_;
    events_.push({t, kind, seq_++, subject, tag});
}

void Run::take(int h, GpuMask gpus) {
    const auto before = state_.free_gpus[h];
    state_.free_gpus[h] &= ~gpus;
    const int n = std::popcount(before) - std::popcount(state_.free_gpus[h]);
    busy_ += n;
    if (state_.usable[h]) {
        --hist_[std::popcount(before)];
        ++hist_[std::popcount(state_.free_gpus[h])];
        free_up_ -= n;
    }
}

void Run::give(int h, GpuMask gpus) {
    const auto before = state_.free_gpus[h];
    state_.free_gpus[h] |= gpus;
    const int n = std::popcount(state_.free_gpus[h]) - std::popcount(before);
    busy_ -= n;
    if (state_.usable[h]) {
        --hist_[std::popcount(before)];
        ++hist_[std::popcount(state_.free_gpus[h])];
        free_up_ += n;
    }
}

void Run::set_up(int h, bool up) {
    if (static_cast<bool>(state_.usable[h]) == up)
        return;
    const int n = std::popcount(state_.free_gpus[h]);
    const int gpus = static_cast<int>(graph_.node(h).gpus.size());
    state_.usable[h] = up ? 1 : 0;
    hist_[n] += up ? 1 : -1;
    free_up_ += up ? n : -n;
    down_gpus_ += up ? -gpus : gpus;
}

void Run::refresh_failures(double t) {
    for (int h : failed_hosts_)
        state_.failures[h] = history_[static_cast<std::size_t>(h)].as_of(t).week;
    if (!learned_ || (t - learned_at_ < 60 && !history_changed_))
        return;
    // The learned model's view: the hosts with a failure, brought to now.
    learned_at_ = t;
    history_changed_ = false;
    auto view = std::make_shared<LearnedRiskView>(LearnedRiskView{learned_, RiskHistory(graph_, t)});
    for (int h : failed_hosts_)
        view->history.add(h, history_[static_cast<std::size_t>(h)]);
    state_.learned = std::move(view);
}

void Run::submit(int j, double t) {
    js_[j].status = JobState::Status::kPending;
    pending_.insert({jobs_[j].submit_s, j});
    result_.jobs[j].submit_s = jobs_[j].submit_s;
    result_.jobs[j].gpus = jobs_[j].gpus;
    result_.jobs[j].regime = jobs_[j].regime;
    result_.jobs[j].elastic = jobs_[j].is_elastic();
    changed_ = bf_dirty_ = true;
    ensure_backfill_tick(t);
}

bool Run::eligible(int j, double t) const {
    return js_[j].eligible_at <= t;
}

void Run::start(int j, double t, Placement p, const JobDemand &demand) {
    const SimJob &job = jobs_[j];
    JobState &s = js_[j];
    s.held_since = -1;  // a requeued job's next hold starts afresh
    // Where the geometry-blind engine would have put it, on the same free view.
    std::optional<PairedDecision> pair;
    if (opt_.paired && policy_.kind() == PlacementPolicy::Kind::kEngine) {
        pair.emplace();
        pair->t = t;
        pair->job = j;
        pair->regime = job.regime;
        pair->gpus = job.gpus;
        pair->aware = p.hosts;
        if (auto blind = engine_.place(at_test(j, t, demand), state_, blind_policy_).placement)
            pair->blind = blind->hosts;
    }
    for (std::size_t i = 0; i < p.hosts.size(); ++i) {
        take(p.hosts[i], gpu_mask(p.gpus[i]));
        host_jobs_[p.hosts[i]].push_back(j);
    }
    s.placement = std::move(p);
    s.demand = demand;
    s.nodes = static_cast<int>(s.placement.hosts.size());
    s.run_start = t;
    s.expected_end = t + job.limit_s;
    s.status = JobState::Status::kRunning;
    pending_.erase({job.submit_s, j});
    unwant(j);
    running_.insert(j);
    restart_progress(j, t, s.saved_s);

    JobResult &r = result_.jobs[j];
    if (r.start_s < 0) {
        r.start_s = t;
        r.first_nodes = host_list(graph_, s.placement);
    }
    r.hosts = static_cast<int>(s.placement.hosts.size());
    retime(t, j);
    r.step = s.alone;
    if (pair) {
        pair->run_s = std::max(job.work_s - s.saved_s, 0.0) * s.step.step_s / s.base_step_s;
        result_.paired.push_back(std::move(*pair));
    }
    changed_ = bf_dirty_ = true;
}

bool Run::release(int j, double t) {
    JobState &s = js_[j];
    const bool crossed = !s.uplinks.empty();
    note_running_time(j, t);
    for (std::size_t i = 0; i < s.placement.hosts.size(); ++i) {
        int h = s.placement.hosts[i];
        give(h, gpu_mask(s.placement.gpus[i]));
        auto &on = host_jobs_[h];
        on.erase(std::find(on.begin(), on.end(), j));
    }
    running_.erase(j);
    if (!s.marks.empty())
        useful_ -= jobs_[j].gpus * s.marks.back().rate;
    s.marks.clear();
    s.uplinks.clear();
    return crossed;
}

void Run::finish(int j, double t) {
    JobResult &r = result_.jobs[j];
    if (release(j, t))
        retime(t, -1);
    js_[j].status = JobState::Status::kDone;
    r.end_s = t;
    if (js_[j].loaded_s > 0)
        r.contention = js_[j].loaded_weighted / js_[j].loaded_s;
    --remaining_;
    changed_ = bf_dirty_ = true;
}

// The job is back in the queue at its old priority, eligible `delay` from now.
void Run::requeue(int j, double t, double delay) {
    JobState &s = js_[j];
    s.status = JobState::Status::kPending;
    s.eligible_at = t + delay;
    pending_.insert({jobs_[j].submit_s, j});
    if (delay > 0)
        push(s.eligible_at, EventKind::kEligible, j);
    ensure_backfill_tick(t);
}

void Run::stop(int j, double t, FailureResult &record) {
    JobState &s = js_[j];
    const SimJob &job = jobs_[j];
    ++record.jobs_stopped;
    ++result_.jobs[j].restarts;
    const bool by_suite = suite_ && opt_.suite.recovery == Recovery::kSuite;
    // Slurm: the work since the newest periodic checkpoint is lost. The suite: ai-recover
    // has the survivors save the last committed step, and nothing is lost.
    double lost = 0;
    if (by_suite) {
        s.saved_s = std::min(job.work_s, progress(s, t));
    } else {
        auto [saved, at] = checkpointed(s, t);
        s.saved_s = std::min(job.work_s, saved);
        lost = job.gpus * (t - at);
    }
    record.lost_gpu_s[static_cast<std::size_t>(job.regime)] += lost;
    result_.jobs[j].lost_gpu_s += lost;
    release(j, t);
    ++s.epoch;  // voids the finish event of this run
    requeue(j, t, by_suite ? opt_.recovery.suite_s : opt_.recovery.slurm_s);
}

void Run::note_failure(int h, double t, FailureClass kind) {
    auto &mine = history_[static_cast<std::size_t>(h)];
    if (!mine.any())
        failed_hosts_.push_back(h);
    mine.note(t, kind);
    history_changed_ = true;
}

// A host, or its link, fails for down_s. A host that is down already stays down until
// the later of its repairs; a link failure stops the jobs that span hosts, and a host
// failure on a host whose link alone was down stops the rest.
void Run::fail_host(int h, double t, FailureClass kind, double down_s) {
    const bool link = takes_link(kind);
    auto &until = down_until_[static_cast<std::size_t>(h)];
    auto &link_only = link_only_[static_cast<std::size_t>(h)];
    const bool was_down = !state_.usable[h];
    until = std::max(until, t + down_s);
    push(t + down_s, EventKind::kRepair, h);
    if (was_down && (link || !link_only))
        return;  // nothing more to stop
    link_only = link && !(was_down && !link_only);
    if (!was_down)
        set_up(h, false);
    FailureResult record;
    record.t = t;
    record.host = graph_.host_name(h);
    record.host_index = h;
    record.link = link;
    const auto on = host_jobs_[h];  // stop() and shrink_around() edit the list
    bool crossed = false;
    for (int j : on) {
        if (link && js_[j].placement.hosts.size() < 2)
            continue;  // inside the host: its link is not needed
        crossed = crossed || !js_[j].uplinks.empty();
        // ai-recover shrinks an elastic job that keeps its MIN around the failed node.
        if (suite_ && opt_.suite.recovery == Recovery::kSuite && shrink_around(j, h, t)) {
            ++record.jobs_stopped;
            continue;
        }
        stop(j, t, record);
    }
    if (crossed)
        retime(t, -1);
    result_.failures.push_back(record);
    note_failure(h, t, kind);
    changed_ = bf_dirty_ = true;
}

void Run::repair(int h, double t) {
    if (t + 1e-6 < down_until_[static_cast<std::size_t>(h)] || state_.usable[h])
        return;  // a later failure keeps it down, or it is up already
    link_only_[static_cast<std::size_t>(h)] = 0;
    set_up(h, true);
    schedule_failure(h, t);
    changed_ = bf_dirty_ = true;
}

// Each host has at most one failure of its own random stream queued; a failure that
// finds the host down (after a scripted one) is dropped and the next is drawn at the repair.
void Run::schedule_failure(int h, double from) {
    const double rate = host_rate_[static_cast<std::size_t>(h)];
    if (rate <= 0 || natural_pending_[static_cast<std::size_t>(h)])
        return;
    natural_pending_[static_cast<std::size_t>(h)] = 1;
    std::exponential_distribution<double> gap(rate);
    push(from + gap(host_rng_[static_cast<std::size_t>(h)]), EventKind::kFail, h);
}

void Run::ensure_backfill_tick(double t) {
    if (bf_queued_ || pending_.empty())
        return;
    const double dt = opt_.backfill.interval_s;
    push((std::floor(t / dt) + 1) * dt, EventKind::kBackfill, 0);
    bf_queued_ = true;
}

void Run::integrate(double t) {
    const double a = std::max(last_t_, result_.window_start_s);
    const double b = std::min(t, result_.window_end_s);
    if (b > a) {
        result_.busy_gpu_s_in_window += busy_ * (b - a);
        result_.useful_gpu_s_in_window += std::min(useful_, static_cast<double>(busy_)) * (b - a);
    }
    last_t_ = t;
}

void Run::sample(double t) {
    Sample s;
    s.t = t;
    s.busy_gpus = busy_;
    s.down_gpus = down_gpus_;
    s.free_gpus = free_up_;
    s.pending_jobs = static_cast<int>(pending_.size());
    s.fragmented_gpus = fragmented_gpus();
    result_.samples.push_back(s);
}

RunResult Run::run() {
    if (jobs_.empty())
        return result_;
    result_.window_start_s = jobs_.front().submit_s;
    result_.window_end_s = jobs_.front().submit_s;
    for (std::size_t j = 0; j < jobs_.size(); ++j) {
        result_.window_start_s = std::min(result_.window_start_s, jobs_[j].submit_s);
        result_.window_end_s = std::max(result_.window_end_s, jobs_[j].submit_s);
        push(jobs_[j].submit_s, EventKind::kSubmit, static_cast<int>(j));
    }
    last_t_ = result_.window_start_s;
    for (int h = 0; h < graph_.host_count(); ++h)
        schedule_failure(h, 0);
    for (const auto &[t, name] : opt_.failures.scripted)
        if (int h = graph_.host_index(name); h >= 0)
            push(t, EventKind::kFail, h, 1);
    const auto &replayed = opt_.failures.replayed;
    for (std::size_t k = 0; k < replayed.size(); ++k)
        if (replayed[k].host >= 0 && replayed[k].host < graph_.host_count())
            push(replayed[k].t, EventKind::kFail, replayed[k].host, static_cast<long>(k) + 2);
    push(result_.window_start_s, EventKind::kSample, 0);

    while (!events_.empty() && remaining_ > 0) {
        const double t = events_.top().t;
        integrate(t);
        bool backfill_due = false, sample_due = false;
        while (!events_.empty() && events_.top().t == t) {
            Event e = events_.top();
            events_.pop();
            if (e.kind == EventKind::kFinish || e.kind == EventKind::kRepair ||
                e.kind == EventKind::kSubmit || e.kind == EventKind::kEligible)
                --productive_;
            switch (e.kind) {
                case EventKind::kFinish:
                    if (js_[e.subject].status == JobState::Status::kRunning &&
                        js_[e.subject].epoch == e.tag)
                        finish(e.subject, t);
                    break;
                case EventKind::kRepair:
                    repair(e.subject, t);
                    break;
                case EventKind::kFail:
                    if (e.tag == 0)
                        natural_pending_[static_cast<std::size_t>(e.subject)] = 0;
                    if (e.tag >= 2) {
                        const auto &f = opt_.failures.replayed[static_cast<std::size_t>(e.tag - 2)];
                        fail_host(e.subject, t, f.kind, f.duration_s);
                    } else if (state_.usable[e.subject]) {  // one that finds it down is dropped
                        fail_host(e.subject, t, FailureClass::kOther, opt_.failures.repair_s);
                    }
                    break;
                case EventKind::kSubmit:
                    submit(e.subject, t);
                    break;
                case EventKind::kEligible:
                    changed_ = bf_dirty_ = true;
                    break;
                case EventKind::kElastic:
                    elastic_queued_ = false;
                    changed_ = true;
                    break;
                case EventKind::kBackfill:
                    bf_queued_ = false;
                    backfill_due = true;
                    break;
                case EventKind::kSample:
                    sample_due = true;
                    break;
            }
        }
        const bool looked = changed_;
        if (changed_)
            main_schedule(t);
        if (backfill_due)
            backfill(t);
        if (looked || backfill_due) {
            elastic_tick(t);
            if (changed_)  // nodes an elastic job gave back
                main_schedule(t);
        }
        ensure_backfill_tick(t);
        if (sample_due) {
            sample(t);
            if (remaining_ > 0)
                push(t + opt_.sample_s, EventKind::kSample, 0);
        }
        // Nothing left that could start or end a job, and backfill has seen the current
        // state: the rest can never run.
        if (productive_ == 0 && running_.empty() && !pending_.empty() && !bf_dirty_)
            break;
    }
    return result_;
}

}  // namespace detail

void evaluate_paired(RunResult &run, double checkpoint_s) {
    auto lost = [&](const PairedDecision &d, const std::vector<int> &hosts) {
        for (const auto &f : run.failures) {
            if (f.t < d.t || f.t >= d.t + d.run_s)
                continue;
            if ((f.link && hosts.size() < 2) ||
                std::find(hosts.begin(), hosts.end(), f.host_index) == hosts.end())
                continue;
            const double since = checkpoint_s > 0 ? std::fmod(f.t - d.t, checkpoint_s) : f.t - d.t;
            return d.gpus * since;
        }
        return 0.0;
    };
    for (auto &d : run.paired) {
        d.lost_aware_gpu_s = lost(d, d.aware);
        d.lost_blind_gpu_s = d.blind.empty() ? d.lost_aware_gpu_s : lost(d, d.blind);
    }
}

bool known_sim_policy(std::string_view name) {
    return name == detail::kSuite || name == detail::kLearned || name == detail::kIdeal ||
           PlacementEngine::known_policy(name);
}

RunResult simulate(const SimCluster &cluster, const std::vector<SimJob> &jobs,
                   const StepTimes &steps, const SimOptions &options, std::string_view policy) {
    if (policy == detail::kLearned && !options.learned)
        throw std::invalid_argument("policy engine-learned needs a learned risk model");
    detail::Run run(cluster, jobs, steps, options, policy);
    return run.run();
}

}  // namespace slurm_ai::sim
