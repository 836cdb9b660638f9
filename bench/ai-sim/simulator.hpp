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
// step_times.hpp) and are not killed at their time limit.
//
// Failures: nodes fail as Poisson processes (a share of flaky nodes at a higher rate),
// each staying down for a repair time. A failure stops every job with a GPU on the node;
// the job is requeued and restarts from its last checkpoint, the work since then lost.
// Failure times depend only on the seed, so every policy meets the same failures.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim_cluster.hpp"
#include "slurm_ai/placement/cost_model.hpp"
#include "slurm_ai/placement/failure_risk.hpp"
#include "slurm_ai/placement/job_demand.hpp"
#include "slurm_ai/placement/placement_engine.hpp"
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
};

struct SimJob {
    std::string name;
    double submit_s = 0;
    int gpus = 1;
    double work_s = 0;   // run time on the ideal placement
    double limit_s = 0;  // the time limit backfill plans with
    std::string model;   // a measured model, or empty
    double local_bsz = 0;
    JobDemand demand;
    Regime regime = Regime::kNone;
};

struct Jobs {
    std::vector<SimJob> jobs;
    int too_large = 0;  // left out: more GPUs than the cluster has
    int measured = 0;   // of a measured model
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
};

struct SimOptions {
    std::uint64_t seed = 1;  // failure times
    BackfillParams backfill;
    FailureParams failures;
    double sample_s = 300;  // utilisation and fragmentation samples
    EngineOptions engine;
    CostConstants cost;
    RiskConstants risk;
};

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
    double lost_gpu_s = 0;
    StepEstimate step;  // of its last placement
    Regime regime = Regime::kNone;
};

struct FailureResult {
    double t = 0;
    std::string host;
    int jobs_stopped = 0;
    std::array<double, kRegimes> lost_gpu_s{};  // by the regime of the jobs stopped
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
};

RunResult simulate(const SimCluster &cluster, const std::vector<SimJob> &jobs,
                   const StepTimes &steps, const SimOptions &options, std::string_view policy);

}  // namespace slurm_ai::sim
