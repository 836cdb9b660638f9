// A learned model of a host's failure rate from its failure history (failure_history.hpp):
// a small neural network, 9 inputs, one hidden layer of 12 tanh units and a logistic output,
// 133 parameters, that gives the probability of a failure of the host within the next day.
// `ai-sim train-risk` trains it on the first part of a real fault trace and judges it
// against the hand-written model on the rest (failure_risk.hpp: a host fails 1 + 10 x its
// weekly count times as often as a fresh one); it ships as a JSON file that the select
// plugin reads (RiskModel= in ai_select.conf) and uses only when that verdict says it beat
// the hand-written model. Its rates replace the hand-written host rates in the risk model
// (ClusterState::learned_rate); how failures spread through a job stays the risk model's.
//
// Inputs, for a host at time t, its HostFailures as of t (counts c, log1p(c) each):
//   0 day count, 1 week count, 2 month count, 3 weekly GPU failures, 4 weekly network
//   failures, 5 weekly failures of the other classes, 6 recency exp(-(t - last) / 7 days)
//   (0 with no failure), 7 the weekly counts of the other hosts of its leaf switch summed,
//   8 the share of those hosts with a weekly count above 0.05.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "slurm_ai/common/input_error.hpp"
#include "slurm_ai/placement/failure_history.hpp"

namespace slurm_ai {

inline constexpr int kHazardInputs = 9;
inline constexpr int kHazardHidden = 12;
using HazardInputs = std::array<double, kHazardInputs>;

// The leaf's part of a host's inputs: the other hosts' weekly counts summed, and the share
// of them above 0.05.
HazardInputs hazard_inputs(const HostFailures &host_now, double t, double leaf_week,
                           double leaf_share);

struct LearnedRiskInfo {
    std::string trace;                  // what it was trained on
    double train_from_day = 0, train_to_day = 0, test_to_day = 0;
    int hosts = 0;                      // the cluster it was trained on
    long samples = 0, positives = 0;
    int epochs = 0;             // as chosen on the last quarter of the training days
    double weight_decay = 0;
    // On the held-out days: area under the ROC curve and log-loss, learned and
    // hand-written (its rates scaled by one factor fitted on the training days).
    double auc = 0, auc_hand_written = 0, log_loss = 0, log_loss_hand_written = 0;
    bool beats_hand_written = false;    // both figures better
};

class LearnedRisk {
  public:
    LearnedRisk();  // all weights 0: p = 0.5 everywhere (for training to fill)

    // The file's JSON; errors name the field and the source.
    static Parsed<LearnedRisk> parse(std::string_view json, std::string_view source);
    static Parsed<LearnedRisk> load(const std::string &path);
    std::string to_json() const;

    double probability(const HazardInputs &x) const;  // of a failure within a day
    double rate_per_day(const HazardInputs &x) const;  // -ln(1 - p)

    // The parameters, in one flat vector (training reads and writes them): mean[9],
    // scale[9] (not trained: set from the data), w1[12][9], b1[12], w2[12], b2.
    static constexpr int kParameters = kHazardHidden * kHazardInputs + 2 * kHazardHidden + 1;
    std::array<double, kHazardInputs> mean{}, scale{};
    std::array<double, kParameters> w{};

    // Gradient of the -log-likelihood of `total` samples with these inputs of which
    // `positives` failed, added into grad; returns their loss.
    double backprop(const HazardInputs &x, double positives, double total,
                    std::array<double, kParameters> &grad) const;

    LearnedRiskInfo info;
};

}  // namespace slurm_ai
