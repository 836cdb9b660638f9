// Training and judging the learned risk model (learned_risk.hpp) on a real fault trace.
//
// Samples: the trace replayed whole on a cluster (fault_trace.hpp, every server of the
// population on a host, simultaneous faults on one leaf), one sample per host and day:
// the host's inputs at the day's start (its failure history and its leaf's, as the select
// plugin would keep them), labelled 1 when a failure of the host (any class) starts that
// day. Days before `split_day` train the model (full-batch Adam on the log-likelihood,
// weight decay, epochs chosen on the training days' last quarter, fixed seed: the same
// model at every run); the days after it judge
// it against the hand-written model, whose daily probability is 1 - exp(-c (1 + 10 w)) for
// the host's weekly count w, c fitted on the training days (so that its scale does not
// count against it): area under the ROC curve (how well each ranks the hosts that fail
// next, which is what placement uses) and log-loss (how well it knows the odds). The
// learned model beats the hand-written one when both are better.
#pragma once

#include <cstdint>
#include <vector>

#include "fault_trace.hpp"
#include "slurm_ai/placement/learned_risk.hpp"

namespace slurm_ai::sim {

struct HazardSamples {
    std::vector<HazardInputs> x;
    std::vector<char> y;          // 1: a failure that day
    std::vector<double> weekly;   // the hand-written model's input (the weekly count)
    long positives() const;
};

// Samples of days [from_day, to_day) of the replay (whose time 0 is its start_day).
HazardSamples hazard_samples(const Replay &replay, const ClusterGraph &graph, double from_day,
                             double to_day);

struct TrainOptions {
    int epochs = 300;            // when the choice below cannot be made
    double learning_rate = 0.02;
    double weight_decay = 1e-4;
    std::uint64_t seed = 1;
};

// Epochs (100, 300, 1000) and weight decay (1e-4, 1e-3, 1e-2) are chosen by the log-loss on
// the last quarter of the training days, the model trained on the first three quarters;
// then it is trained again on all of them. `hosts`: samples per day.
LearnedRisk train_risk(const HazardSamples &train, int hosts, const TrainOptions &options);

// Area under the ROC curve of scores against labels (ties count half).
double auc(const std::vector<double> &scores, const std::vector<char> &labels);

struct Judgement {
    double auc = 0, auc_hand_written = 0, log_loss = 0, log_loss_hand_written = 0;
    double hand_written_scale = 0;  // c, fitted on the training days
    bool beats() const { return auc > auc_hand_written && log_loss < log_loss_hand_written; }
};
Judgement judge(const LearnedRisk &model, const HazardSamples &train, const HazardSamples &test);

}  // namespace slurm_ai::sim
