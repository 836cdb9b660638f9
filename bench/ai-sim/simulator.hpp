// The trace-driven simulation of a Slurm cluster whose select plugin places jobs with one
// of the placement engine's policies. Every placement is a call of
// slurm_ai::PlacementEngine::place, the function the select plugin calls in slurmctld, on
// the free view the plugin would build (free GPUs of the nodes that are up, the failure
// history kept by the plugin's own SelectService).
//
// Scheduling follows Slurm 22.05's sched/backfill with its defaults:
//   - main scheduler, after every event: pending jobs in priority order (submission time;
//     a requeued job keeps its place), each started if it fits now, stopping at the first
//     that does not (Slurm leaves the rest of the partition pending);
//   - backfill, every bf_interval (30 s) when something changed since the last pass: the
//     first bf_max_job_test (500) pending jobs in priority order; for each, the earliest
//     time within bf_window (1 day) at which it fits, assuming running jobs end at their
//     time limits and keeping out of the nodes reserved for the jobs before it over the
//     job's time limit; a job that fits now starts, any other gets a reservation of whole
//     nodes, as Slurm's backfill reserves. As in the select plugin, which places run-now
//     tests with the engine and leaves will-run tests (backfill's planning) to cons_tres,
//     the engine policies plan reservations with Slurm's topology best fit; the baselines
//     plan with themselves.
// Jobs run for their recorded duration times the slowdown of their placement (see
// step_times.hpp) and are not killed at their time limit. A job's progress is counted in
// seconds of its work on the ideal placement of the size it asks; it advances at the rate
// ideal step / step, which changes when the job is resized or, with contention, when
// other jobs start or end beside it.
//
// Contention (SimOptions::contention): jobs share the leaves' uplinks. Each job's traffic
// keeps the uplinks it crosses busy for CostModel::uplink_use seconds per step; over its
// step time that is the share of those uplinks it takes from the others. A job's
// communication is costed with the others' shares as uplink load (the capacity left to it,
// at least its fair share among the jobs there), and all running jobs are recosted, to a
// fixed point, whenever a job that crosses uplinks starts, ends or is resized. The engine
// places with that load in view (ClusterState::uplink_load); Slurm's policies do not look.
//
// Elastic jobs (SimJob::elastic) ask `-N MIN-n --gpus-per-node=g --ai-elastic=MIN:MAX`:
// Slurm starts them on as many nodes as fit, from n down to MIN, under every policy. Only
// the suite resizes them afterwards: ai-elasticd looks every elastic_interval_s and plans
// with the rule given (elastic_policy.hpp, the code the daemon runs), each job's goodput
// curve from its step times on the ideal placement of each size; grows take the hosts
// plan_grow picks (next to the job's own), shrinks release those plan_shrink picks. A
// resize costs the job resize_s of progress (checkpoint, stop, restart at the new size).
//
// Failures: nodes fail as Poisson processes (a share of flaky nodes at a higher rate),
// each staying down for a repair time. A failure stops every job with a GPU on the node.
// Recovery as Slurm does it (every policy but the suite): the job is requeued, starts
// again no sooner than RecoveryTimes::slurm_s after the failure (detection, then the
// requeued job's begin time, CredExpire + 1 = 121 s), anywhere, from its last periodic
// checkpoint; the work since then is lost. As the suite does it (ai-recover): the job's
// surviving ranks checkpoint at once (it stalls at its last committed step, so nothing
// is lost), an elastic job that keeps MIN nodes shrinks around the failed node and goes
// on after suite_s, any other job is requeued without the node and may start again after
// suite_s. Both times are what bench/ai-bench/recovery.sh measures (docs/checkpoint.md).
// Failure times depend only on the seed, so every policy meets the same failures.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim_cluster.hpp"
#include "slurm_ai/placement/cost_model.hpp"
#include "slurm_ai/placement/failure_risk.hpp"
#include "slurm_ai/placement/job_demand.hpp"
#include "slurm_ai/placement/learned_risk.hpp"
#include "slurm_ai/placement/placement_engine.hpp"
#include "fault_trace.hpp"
#include "slurm_ai/elastic/elastic_policy.hpp"
#include "step_times.hpp"
#include "trace.hpp"

namespace slurm_ai::sim {

// How a job's ranks depend on each other, as the failure-risk model sees it.
enum class Regime { kNone, kCyclic, kTree };  // one GPU; rings; pipelines and trees
inline constexpr int kRegimes = 3;
const char *to_string(Regime r);

// How a job asks for its GPUs: flexible is `--gpus=G` (Slurm may split it over nodes);
// packed is `-N n --gpus-per-node=G/n` with the fewest nodes that hold it (flexible when G
// does not divide evenly), and `-N1 --gpus=G` up to one node's GPUs.
enum class RequestStyle { kFlexible, kPacked };

// The communication pattern given to multi-GPU jobs of no measured model (shares).
struct PatternMix {
    double allreduce = 0.7;
    double pipeline = 0.2;
    double ps = 0.1;
};

struct JobOptions {
    RequestStyle request = RequestStyle::kFlexible;
    PatternMix patterns;
    double limit_factor = 2.0;  // time limit = duration x this, rounded up to minutes
    std::uint64_t seed = 1;
    // The share of the jobs that can be elastic (see elastic_bounds) submitted with
    // --ai-elastic, drawn per job with the seed (a draw of its own, so that the other
    // draws do not depend on it).
    double elastic_share = 0;
};

// What an elastic job asks, from the request of the same job as a rigid one: n nodes of g
// GPUs each (the fewest nodes that hold its GPUs, an even split) and --ai-elastic=MIN:MAX
// with MIN = ceil(n / 2) and MAX = 2n: a user who would ask n nodes accepts half as many
// to start sooner and can use twice as many. A job of one GPU, or whose GPUs do not split
// evenly over the fewest nodes, cannot be elastic (nothing says how its step divides):
// nullopt.
struct ElasticShape {
    int nodes = 0, per_node = 0;
    ElasticSpec spec;
};
std::optional<ElasticShape> elastic_bounds(int gpus, int max_gpus_per_host);

struct SimJob {
    std::string name;
    double submit_s = 0;
    int gpus = 1;
    double work_s = 0;   // run time on the ideal placement
    double limit_s = 0;  // the time limit backfill plans with
    std::string model;   // a measured model, or empty
    double local_bsz = 0;
    JobDemand demand;  // elastic: -N MIN-nodes --gpus-per-node=per_node
    Regime regime = Regime::kNone;
    // Elastic (--ai-elastic=MIN:MAX, see elastic_bounds); min_nodes 0: rigid.
    ElasticSpec elastic;
    int nodes = 0;  // elastic: the --nodes it asks (the upper end of its range)
    bool is_elastic() const { return elastic.min_nodes > 0; }
};

struct Jobs {
    std::vector<SimJob> jobs;
    int too_large = 0;      // left out: more GPUs than the cluster has
    int measured = 0;       // of a measured model
    int could_be_elastic = 0;  // jobs that elastic_bounds allows
    int elastic = 0;           // of those, submitted elastic
};

Jobs make_jobs(const Trace &trace, const SimCluster &cluster, const StepTimes &steps,
               const JobOptions &options);

struct BackfillParams {
    double interval_s = 30;
    double window_s = 86400;
    int max_job_test = 500;
};

struct FailureParams {
    double node_rate_per_day = 0;  // per node
    double flaky_share = 0;        // share of nodes failing flaky_factor times as often
    double flaky_factor = 1;
    double repair_s = 4 * 3600.0;
    double checkpoint_s = 3600;                            // jobs checkpoint this often; 0: never
    std::vector<std::pair<double, std::string>> scripted;  // (time, host): extra failures
    // Real faults (fault_trace.hpp), each for its own duration, and the failures before the
    // simulation that the select plugin's history holds.
    std::vector<ReplayedFault> replayed;
    std::vector<HostHistory> history;
};

// Restarts, as bench/ai-bench/recovery.sh and the elastic cluster tests measure them.
struct RecoveryTimes {
    double slurm_s = 140;  // failure -> running again, Slurm's requeue
    double suite_s = 19;   // failure -> running again, ai-recover
    double resize_s = 30;  // a resize: checkpoint, stop, restart at the new size
};

enum class Recovery { kSlurm, kSuite };

// What runs beside the select plugin in the suite: the policy "suite" is the engine with
// these; every other policy (the engine alone included) runs without them.
struct SuiteOptions {
    std::optional<ElasticRule> elastic = ElasticRule::kGoodput;  // nullopt: no ai-elasticd
    Recovery recovery = Recovery::kSuite;
    bool plan_with_engine = false;  // backfill's reservations placed by the engine too
    double elastic_interval_s = 5;  // ai-elasticd's ElasticInterval
    double grow_cooldown_s = 60;
    double min_gain = 0.5;
};

struct SimOptions {
    std::uint64_t seed = 1;  // failure times
    BackfillParams backfill;
    FailureParams failures;
    double sample_s = 300;  // utilisation and fragmentation samples
    EngineOptions engine;
    CostConstants cost;
    RiskConstants risk;
    bool contention = false;  // jobs share the uplinks (for every policy)
    // The select plugin's ElasticStart=goodput (false: max), on the engine's policies: an
    // elastic job starts on no more nodes than ai-elasticd's goodput rule (min_gain of
    // `suite`, the same ElasticMinGain) would grow it to.
    bool goodput_start = true;
    SuiteOptions suite;
    RecoveryTimes recovery;
    bool paired = false;  // record PairedDecisions (searched policies only)
    // The learned risk model for the policy engine-learned (the engine with the model's
    // host rates, as the select plugin with RiskModel=).
    const LearnedRisk *learned = nullptr;
};

// The policies a simulation knows: the placement engine's (PlacementEngine::policies()),
// "suite" and "engine-learned".
bool known_sim_policy(std::string_view name);

// A large time budget makes the engine's local search run to convergence, so that a run
// does not depend on the machine's speed.
EngineOptions deterministic_engine_options();

struct JobResult {
    double submit_s = 0;
    double start_s = -1;  // first start
    double end_s = -1;    // -1: never finished
    int gpus = 0;
    int hosts = 0;            // of its last placement
    std::string first_nodes;  // hostlist of its first placement
    int restarts = 0;
    int resizes = 0;
    double lost_gpu_s = 0;
    StepEstimate step;  // of its last placement, with the fabric to itself
    // Its step time with other jobs' traffic over without, averaged over its running time
    // (1 without contention).
    double contention = 1;
    Regime regime = Regime::kNone;
    bool elastic = false;
};

struct FailureResult {
    double t = 0;
    std::string host;
    int host_index = -1;
    bool link = false;  // the host's fabric link failed, not the host
    int jobs_stopped = 0;
    std::array<double, kRegimes> lost_gpu_s{};  // by the regime of the jobs stopped
};

// One start of a job under the engine (its risk term on), and where the geometry-blind engine
// (engine-norisk) would have put it on the same cluster state (SimOptions::paired), with
// what each placement loses to the run's failures (evaluate_paired).
struct PairedDecision {
    double t = 0;
    int job = 0;
    Regime regime = Regime::kNone;
    int gpus = 0;
    double run_s = 0;  // how long the job was to run from there
    std::vector<int> aware, blind;  // hosts
    double lost_aware_gpu_s = 0, lost_blind_gpu_s = 0;
    bool differ() const { return aware != blind; }
};

struct Sample {
    double t = 0;
    int busy_gpus = 0;
    int down_gpus = 0;
    int free_gpus = 0;        // on nodes that are up
    int fragmented_gpus = 0;  // free GPUs no pending job could use now
    int pending_jobs = 0;
};

struct RunResult {
    std::string policy;
    std::vector<JobResult> jobs;  // in the order of the input jobs
    std::vector<FailureResult> failures;
    std::vector<Sample> samples;
    double window_start_s = 0, window_end_s = 0;  // first and last submission
    double busy_gpu_s_in_window = 0;
    double useful_gpu_s_in_window = 0;  // busy GPU-time / the jobs' slowdowns
    int cluster_gpus = 0;
    long placements_tried = 0;
    double placement_ms = 0;  // wall time spent in PlacementEngine::place
    int backfill_passes = 0;
    int backfill_starts = 0;
    int grows = 0, shrinks = 0;  // by ai-elasticd and ai-recover
    std::vector<PairedDecision> paired;
};

// What each placement of every paired decision loses to the run's failures: the first
// failure that hits it while the job was to run (a host of it, or the link of one of its
// hosts when it spans several) costs its GPUs the time since the job's last periodic
// checkpoint (every checkpoint_s from the decision), as Slurm's requeue loses it.
void evaluate_paired(RunResult &run, double checkpoint_s);

RunResult simulate(const SimCluster &cluster, const std::vector<SimJob> &jobs,
                   const StepTimes &steps, const SimOptions &options, std::string_view policy);

}  // namespace slurm_ai::sim
