// Internal to ai-sim: one simulation run (one policy over one job list). simulator.cpp
// holds the event loop, the jobs' lives and the failures; scheduler.cpp the main
// scheduler and backfill; progress.cpp the jobs' step times, progress and contention;
// elasticity.cpp ai-elasticd and the resizes.
#pragma once

#include <array>
#include <functional>
#include <optional>
#include <queue>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "simulator.hpp"
#include "slurm_ai/placement/cluster_state.hpp"
#include "slurm_ai/placement/failure_history.hpp"
#include "slurm_ai/placement/learned_risk.hpp"

namespace slurm_ai::sim::detail {

// Ordered so that, at one instant, resources come free before jobs ask for them.
enum class EventKind { kFinish, kRepair, kFail, kSubmit, kEligible, kBackfill, kElastic, kSample };

struct Event {
    double t = 0;
    EventKind kind = EventKind::kSample;
    long seq = 0;
    int subject = 0;  // job or host
    long tag = 0;     // kFinish: the job's epoch; kFail: 1 scripted, k + 2 replayed fault k
    bool operator>(const Event &o) const {
        if (t != o.t)
            return t > o.t;
        if (kind != o.kind)
            return kind > o.kind;
        return seq > o.seq;
    }
};

inline GpuMask gpu_mask(const std::vector<int> &gpus) {
    GpuMask m = 0;
    for (int g : gpus)
        m |= GpuMask{1} << g;
    return m;
}

// A job's request as the feasibility tests see it (what make_context derives from it):
// per_host > 0: `hosts` hosts with per_host free GPUs each; else `gpus` GPUs anywhere.
struct Shape {
    int per_host = 0;
    int hosts = 0;
    int gpus = 0;
    bool operator<(const Shape &o) const {
        return std::tie(per_host, hosts, gpus) < std::tie(o.per_host, o.hosts, o.gpus);
    }
};
Shape shape_of(const JobDemand &d);

// A point where a run's progress rate changed: the progress there and the rate after it.
struct RateMark {
    double t = 0, done_s = 0, rate = 0;
};

struct JobState {
    enum class Status { kFuture, kPending, kRunning, kDone } status = Status::kFuture;
    Placement placement;
    JobDemand demand;  // at its present size
    int nodes = 0;     // its present size in nodes (elastic jobs)
    StepEstimate alone;  // its step on the placement with the fabric to itself
    StepEstimate step;   // with the other jobs' traffic (alone without contention)
    std::vector<UplinkUse> uplinks;  // what its traffic puts on uplinks (contention)
    double uplink_comm_s = 0;        // the cost model's communication alone, that use's
    double base_step_s = 1;  // its step on the ideal placement of the size it asks
    double run_start = 0;
    double expected_end = 0;  // start + time limit: what backfill assumes
    // Progress in seconds of work on the ideal placement of the size it asks (SimJob::
    // work_s is counted so): marks since the periodic checkpoints' clock last restarted
    // (the run's start, a resize), the first of them the progress saved then.
    std::vector<RateMark> marks;
    double saved_s = 0;        // progress of the newest checkpoint (what a restart keeps)
    double eligible_at = 0;    // pending: a requeue's begin time
    double last_resize = -1;   // when ai-elasticd last resized it
    double held_since = -1;    // pending: when the engine first held it for placement
    std::vector<double> goodput;  // elastic: its goodput curve, made at its first look
    double loaded_s = 0, loaded_weighted = 0;  // contention: running time, and step/alone x time
    long epoch = 0;            // bumped when its finish changes, voiding the old finish event
};

// A running job's GPUs on one host, free again at its expected end.
struct Release {
    double t = 0;
    int host = 0;
    GpuMask gpus = 0;
};

class Run {
  public:
    Run(const SimCluster &cluster, const std::vector<SimJob> &jobs, const StepTimes &steps,
        const SimOptions &options, std::string_view policy);
    RunResult run();

  private:
    // simulator.cpp
    void push(double t, EventKind kind, int subject, long tag = 0);
    void submit(int j, double t);
    void start(int j, double t, Placement p, const JobDemand &demand);
    // Gives the job's GPUs back; true when its traffic crossed uplinks (the others'
    // contention changes).
    bool release(int j, double t);
    void finish(int j, double t);
    void stop(int j, double t, FailureResult &record);
    void requeue(int j, double t, double delay);
    void fail_host(int h, double t, FailureClass kind, double down_s);
    void note_failure(int h, double t, FailureClass kind);
    void repair(int h, double t);
    void schedule_failure(int h, double from);
    void ensure_backfill_tick(double t);
    void integrate(double t);
    void sample(double t);
    void take(int h, GpuMask gpus);
    void give(int h, GpuMask gpus);
    void set_up(int h, bool up);
    void refresh_failures(double t);
    // The multi-GPU sizes at the head of the queue, for the engine to keep room for
    // (ClusterState::wanted), as the select plugin sees them in its job tests.
    void refresh_wanted(double t);
    void unwant(int j);
    ClusterState::WantedSize size_of(int j) const;  // job j as state_.wanted counts it
    bool eligible(int j, double t) const;

    // scheduler.cpp
    bool fits_now(const Shape &s) const;
    // held: set when the policy could place the job but holds it (locality, PlacementHold).
    // The demand as slurmctld hands it to the plugin at t: with how long the job has
    // waited and its time limit.
    JobDemand at_test(int j, double t, const JobDemand &demand) const;
    Decision decide(int j, double t, const JobDemand &demand, const ClusterState &view,
                    const PlacementPolicy &policy);
    std::optional<Placement> place(int j, double t, const JobDemand &demand,
                                   const ClusterState &view, const PlacementPolicy &policy,
                                   bool *held = nullptr);
    // The size an elastic job starts with now (as many nodes as fit, from the --nodes it
    // asks down to MIN) and its placement; a rigid job's own. Nothing when it does not fit.
    std::optional<std::pair<Placement, JobDemand>> place_now(int j, double t,
                                                             const ClusterState &view,
                                                             const PlacementPolicy &policy);
    void main_schedule(double t);
    void backfill(double t);
    std::optional<std::pair<double, Placement>> earliest(int j, double t);
    void add_releases(int j);
    int fragmented_gpus() const;

    // progress.cpp
    // Its step on placement p (the ideal placement's step under the policy "ideal").
    StepEstimate estimate(int j, const Placement &p, const JobDemand &d) const;
    StepEstimate placed_estimate(int j, const Placement &p, const JobDemand &d) const;
    double base_step(int j) const;
    double progress(const JobState &s, double t) const;
    // The progress a periodic checkpoint saved by t (its checkpoints every checkpoint_s
    // from the first mark), and when that checkpoint was.
    std::pair<double, double> checkpointed(const JobState &s, double t) const;
    void set_rate(int j, double t);
    void note_running_time(int j, double t);
    // Recosts the jobs' steps (with contention, every job crossing uplinks, to a fixed
    // point) and applies the new rates from t. `changed` (or -1) has a new placement.
    void retime(double t, int changed);
    // A run (re)starts at t from done_s, the checkpoint it restarts from; it makes no
    // progress for pause_s (a resize's restart).
    void restart_progress(int j, double t, double done_s, double pause_s = 0);

    // elasticity.cpp
    bool suite() const { return suite_; }
    void elastic_tick(double t);
    void elastic_look(double t);
    std::vector<double> goodput_curve(int j) const;
    // The job goes on on `hosts` from its progress now, after pause_s.
    void resize(int j, double t, const std::vector<int> &hosts, double pause_s);
    bool shrink_around(int j, int failed_host, double t);

    const SimCluster &cluster_;
    const ClusterGraph &graph_;
    const std::vector<SimJob> &jobs_;
    const StepTimes &steps_;
    const SimOptions &opt_;
    bool suite_ = false;           // the policy "suite": the engine with ai-elasticd and ai-recover
    bool ideal_ = false;  // the policy "ideal": every job at its ideal placement's speed, no
                          // contention (placed by tree best fit: who fits where is Slurm's)
    const LearnedRisk *learned_;   // the policy engine-learned: the model it places with
    PlacementPolicy policy_;
    PlacementPolicy plan_policy_;  // places backfill reservations
    PlacementPolicy blind_policy_;  // engine-norisk, for paired decisions
    PlacementEngine engine_;

    ClusterState state_;     // what is free now
    std::vector<int> hist_;  // up hosts by their number of free GPUs
    int free_up_ = 0;        // free GPUs on up hosts
    int busy_ = 0, down_gpus_ = 0;
    double useful_ = 0;  // allocated GPUs x rate / their jobs' asked GPUs
    std::vector<std::vector<int>> host_jobs_;
    // Failure history as the select plugin keeps it (SelectService::note_failure): a
    // count per host that halves every week; a failure within an hour of the last counts
    // once.
    std::vector<int> failed_hosts_;
    std::vector<HostFailures> history_;
    // When the learned model's rates were last brought up to date.
    double learned_at_ = -1e300;
    bool history_changed_ = false;
    // When a failed host may come back, and whether only its link is down.
    std::vector<double> down_until_;
    std::vector<char> link_only_;
    std::vector<double> host_rate_;  // failures per second
    std::vector<std::mt19937_64> host_rng_;
    std::vector<char> natural_pending_;  // a failure of the host's own stream is queued

    std::vector<JobState> js_;
    std::vector<Shape> shapes_;  // at the smallest size the job accepts
    std::set<std::pair<double, int>> pending_;  // (priority = submission time, job)
    std::set<int> running_;
    std::set<int> wanted_jobs_;  // the jobs state_.wanted counts (refresh_wanted)
    int remaining_ = 0;

    // Contention: each switch's uplink share taken by the running jobs, and the scratch
    // view a job is costed in (its uplink_load: the others' shares).
    std::vector<double> uplink_share_;
    std::vector<int> uplink_jobs_;
    ClusterState load_view_;

    // ai-elasticd (the suite): when it last looked, and whether a look is queued.
    double elastic_last_ = -1e300;
    bool elastic_queued_ = false;

    std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events_;
    long seq_ = 0;
    int productive_ = 0;  // queued events that can let a job start or end
    bool changed_ = false, bf_dirty_ = false, bf_queued_ = false;
    double last_t_ = 0;

    // Backfill scratch, reused across passes.
    ClusterState view_;
    std::vector<Release> releases_;
    // Hosts reserved in this pass, by the start and by the end of their reservation.
    std::vector<std::pair<double, int>> by_start_, by_end_;
    std::vector<int> blocked_;

    RunResult result_;
};

}  // namespace slurm_ai::sim::detail
