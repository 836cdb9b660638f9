// Training and judging the learned risk model (learned_risk.hpp) on a real fault trace and
// the Philly-derived jobs.
//
// Samples: the trace replayed whole on a cluster (fault_trace.hpp, every server of the
// population on a host, simultaneous faults on one leaf). Each day, `per_day` jobs drawn
// (with the seed) from the jobs of a Philly-derived scenario on that cluster, in proportion
// to their GPU-hours (what a failure can take), are placed at
// the day's start as a scheduler might place them: half packed (consecutive hosts, the
// fabric's order), half scattered (hosts drawn at random), never on a host that is down
// then. A sample is the placement's inputs (the job's graph, the hosts, leaves and NVLink
// domains it spans, their failure history as the select plugin would keep it), how long
// it is watched (its job's run time, cut where the sample's period ends, so no fault of a
// later period labels it) and whether a fault stopped it in that time (one of its hosts;
// for a job on several hosts, one of their links too): what the simulator's jobs lose.
//
// Days before `split_day` train the model (full-batch Adam on the likelihood, weight
// decay, epochs chosen on the training days' last quarter, fixed seed: the same model at
// every run); the days after it judge it against the hand-written model (RiskModel's
// per-day score for the placement, scaled by one factor c fitted on the training days so
// that its scale does not count against it; a placement's chance is 1 - exp(-c x score x
// days)): area under the ROC curve (how well each ranks the placements that are hit,
// which is what placement uses) and log-loss (how well it knows the odds). The learned
// model beats the hand-written one when all are better: AUC, log-loss, and how often, of
// two places for one job at one moment of which one was hit, it rated the spared one lower
// (the choice placement makes; AUC over all placements also rewards knowing that larger
// and longer jobs are hit more often, which both models know and no placement changes).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "fault_trace.hpp"
#include "scenario.hpp"
#include "slurm_ai/placement/learned_risk.hpp"

namespace slurm_ai::sim {

struct RiskSamples {
    std::vector<RiskInputs> x;
    std::vector<double> days;   // how long each placement was watched
    std::vector<char> y;        // 1: a fault stopped it in that time
    std::vector<double> hand;   // the hand-written model's score (per day)
    long positives() const;
    void append(const RiskSamples &other);
};

// The jobs whose shapes and run times the samples take: the failure study's day of the
// Philly trace (2017-10-10, four days laid on one) on `hosts` hosts.
Parsed<Scenario> risk_jobs(int hosts);

// Placements drawn per day on a cluster of `hosts`: half as many as it has hosts, at
// least 32.
int risk_samples_per_day(int hosts);

// Samples of days [from_day, to_day) of the replay (whose time 0 is its start_day),
// watched until to_day at the latest. With `pairs`, each job drawn is placed twice at the
// same moment, packed and scattered, as samples 2k and 2k + 1: the choice a scheduler
// makes between two places for one job.
RiskSamples risk_samples(const Replay &replay, const SimCluster &cluster,
                         const std::vector<SimJob> &jobs, double from_day, double to_day,
                         int per_day, std::uint64_t seed, bool pairs = false);

struct TrainOptions {
    double learning_rate = 0.02;
    std::uint64_t seed = 1;
};

// Epochs (100, 300, 1000) and weight decay (1e-4, 1e-3, 1e-2) are chosen by the log-loss on
// the last quarter of the training samples (by day), the model trained on the first three
// quarters; then it is trained again on all of them.
LearnedRisk train_risk(const RiskSamples &train, const TrainOptions &options);

// Area under the ROC curve of scores against labels (ties count half).
double auc(const std::vector<double> &scores, const std::vector<char> &labels);

// Of the pairs of samples (2k, 2k + 1) of which exactly one was hit, the share where the
// scores put the hit one higher (ties count half); `decided` gets how many such pairs.
// None when there is no such pair.
std::optional<double> pair_accuracy(const std::vector<double> &scores,
                                    const std::vector<char> &labels, int *decided);

struct Judgement {
    double auc = 0, auc_hand_written = 0, log_loss = 0, log_loss_hand_written = 0;
    double hand_written_scale = 0;  // c, fitted on the training days
    // On pairs (risk_samples with pairs): how often each model chose the spared place
    // for a job where one of two was hit, out of `pairs` such choices.
    int pairs = 0;
    std::optional<double> pairs_accuracy, pairs_accuracy_hand_written;
    // Where the learned model does better; the choice only where both were measured.
    bool better_auc() const { return auc > auc_hand_written; }
    bool better_log_loss() const { return log_loss < log_loss_hand_written; }
    bool better_choice() const;
    // Better on AUC, log-loss and, where pairs were judged, the choice between places.
    bool beats() const;
};
// AUC and log-loss over the placements of `test`; pair accuracy over `pairs` when given.
Judgement judge(const LearnedRisk &model, const RiskSamples &train, const RiskSamples &test,
                const RiskSamples *pairs = nullptr);

// One cluster size's samples: the trace replayed whole on `hosts` hosts of risk_jobs'
// cluster (the servers by rack, with `seed`), placements of its jobs before `split_day`
// (to train), after it (to judge) and pairs after it (seeds seed, seed + 1, seed + 2).
struct RiskStudySamples {
    RiskSamples before, after, pairs;
};
Parsed<RiskStudySamples> risk_study_samples(const FaultTrace &trace, int hosts, double split_day,
                                            std::uint64_t seed);

// The model trained on `s.before` and judged on the rest (into `judged`), its info saying
// what it was trained on and the verdict: what RiskModel= reads.
LearnedRisk train_and_judge(const FaultTrace &trace, int hosts, double split_day,
                            const RiskStudySamples &s, const TrainOptions &options,
                            Judgement &judged);

}  // namespace slurm_ai::sim
