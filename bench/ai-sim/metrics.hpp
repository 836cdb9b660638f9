// The figures of one simulation run, as the output and the report print them.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "simulator.hpp"

namespace slurm_ai::sim {

struct Summary {
    std::string policy;
    int jobs = 0, finished = 0;
    double mean_jct_h = 0, p99_jct_h = 0;    // completion time: end - submission
    double mean_wait_h = 0, p99_wait_h = 0;  // queueing delay: first start - submission
    // Over the jobs with more than one GPU, at their last placement:
    int multi_gpu_jobs = 0;
    double comm_share = 0;         // mean communication / step time
    double efficiency = 0;         // mean ideal communication / communication
    double slowdown = 0;           // mean step / ideal step
    double split_share = 0;        // share placed on more hosts than the fewest that hold them
    double utilisation = 0;        // busy GPU-time / GPU-time between first and last submission
    double useful = 0;             // the same, each job's GPUs divided by its slowdown
    double fragmentation = 0;      // mean share of the GPUs free but unusable, while jobs wait
    double makespan_h = 0;         // first submission to last completion
    std::array<int, 3> sources{};  // jobs by StepSource
    double contention = 1;         // mean over multi-GPU jobs of step with / without others
    int elastic_jobs = 0, grows = 0, shrinks = 0;
    // Failures:
    int failures = 0, failures_stopping_jobs = 0, failures_stopping_several = 0;
    int jobs_stopped = 0;
    std::array<double, kRegimes> lost_gpu_h{};
    double lost_gpu_h_total() const { return lost_gpu_h[0] + lost_gpu_h[1] + lost_gpu_h[2]; }
};

// max_gpus_per_host decides what "the fewest hosts" is.
Summary summarize(const RunResult &run, int max_gpus_per_host);
// The mean of each figure over runs of one policy on several workloads (counts: sums).
Summary mean_of(const std::vector<Summary> &runs);

double percentile(std::vector<double> values, double q);  // nearest rank; 0 when empty

// wins / (wins + losses), ties left out; none when nothing was decided (a rate of 0 would
// read as every comparison lost).
std::optional<double> win_rate(int wins, int losses);

// A run's paired decisions (PairedDecision) of one regime. A decision counts as a
// comparison when the two placements lose different amounts to the failures that followed;
// a win is the geometry-aware placement losing strictly less. Decisions where both lose
// the same (nothing, mostly, or the same hosts) are ties, reported apart.
struct PairedTally {
    int decisions = 0;  // paired decisions
    int differ = 0;     // of those, where the two placements differ
    int wins = 0, losses = 0, ties = 0;
    double lost_aware_gpu_h = 0, lost_blind_gpu_h = 0;
    int comparisons() const { return wins + losses; }
    std::optional<double> win_rate() const { return sim::win_rate(wins, losses); }
    // Wilson's 95% interval of the win rate.
    std::pair<double, double> interval() const;
    void add(const PairedTally &o);
};
std::array<PairedTally, kRegimes> tally_paired(const std::vector<PairedDecision> &decisions);

// This process's peak resident memory so far (getrusage), MiB.
long peak_rss_mib();

}  // namespace slurm_ai::sim
