// Internal to ai-sim: one simulation run (one policy over one job list). simulator.cpp
// holds the event loop, the jobs' lives and the failures; scheduler.cpp the main
// scheduler and backfill.
#pragma once

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

namespace slurm_ai::sim::detail {

// Ordered so that, at one instant, resources come free before jobs ask for them.
enum class EventKind { kFinish, kRepair, kFail, kSubmit, kBackfill, kSample };

struct Event {
    double t = 0;
    EventKind kind = EventKind::kSample;
    long seq = 0;
    int subject = 0;  // job or host
    long tag = 0;     // kFinish: the job's epoch; kFail: 1 when scripted
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

struct JobState {
    enum class Status { kFuture, kPending, kRunning, kDone } status = Status::kFuture;
    Placement placement;
    StepEstimate step;
    double run_start = 0;
    double expected_end = 0;  // start + time limit: what backfill assumes
    double progress_s = 0;    // work checkpointed, in seconds of the ideal placement
    long epoch = 0;           // bumped when a run is cut short, voiding its finish event
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
    void start(int j, double t, Placement p);
    void release(int j);
    void finish(int j, double t);
    void stop(int j, double t, FailureResult &record);
    void fail_host(int h, double t);
    void repair(int h, double t);
    void schedule_failure(int h, double from);
    void ensure_backfill_tick(double t);
    void integrate(double t);
    void sample(double t);
    void take(int h, GpuMask gpus);
    void give(int h, GpuMask gpus);
    void set_up(int h, bool up);
    double failures(int h, double t) const;
    void refresh_failures(double t);

    // scheduler.cpp
    bool fits_now(const Shape &s) const;
    std::optional<Placement> place(int j, double t, const ClusterState &view,
                                   const PlacementPolicy &policy);
    void main_schedule(double t);
    void backfill(double t);
    std::optional<std::pair<double, Placement>> earliest(int j, double t);
    void add_releases(int j);
    int fragmented_gpus() const;

    const SimCluster &cluster_;
    const ClusterGraph &graph_;
    const std::vector<SimJob> &jobs_;
    const StepTimes &steps_;
    const SimOptions &opt_;
    PlacementPolicy policy_;
    PlacementPolicy plan_policy_;  // places backfill reservations
    PlacementEngine engine_;

    ClusterState state_;     // what is free now
    std::vector<int> hist_;  // up hosts by their number of free GPUs
    int free_up_ = 0;        // free GPUs on up hosts
    int busy_ = 0, down_gpus_ = 0;
    double useful_ = 0;  // allocated GPUs / their jobs' slowdowns
    std::vector<std::vector<int>> host_jobs_;
    // Failure history as the select plugin keeps it (SelectService::note_failure): a
    // count per host that halves every week; a failure within an hour of the last counts
    // once.
    std::vector<int> failed_hosts_;
    std::vector<double> fail_count_, fail_at_;
    std::vector<double> host_rate_;  // failures per second
    std::vector<std::mt19937_64> host_rng_;
    std::vector<char> natural_pending_;  // a failure of the host's own stream is queued

    std::vector<JobState> js_;
    std::vector<Shape> shapes_;
    std::set<std::pair<double, int>> pending_;  // (priority = submission time, job)
    std::set<int> running_;
    int remaining_ = 0;

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
