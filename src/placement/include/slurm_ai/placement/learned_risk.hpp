// A learned model of how likely a placement is to be hit by a failure: a small neural
// network, 16 inputs, one hidden layer of 12 tanh units and one output, 217 parameters,
// that gives the rate per day at which a failure stops a job placed so (any of its hosts,
// or for a job that spans hosts any of their links). The inputs describe the candidate
// placement: the job graph's shape, how many hosts, leaf switches and NVLink domains it
// spans and how large those domains are, the failure history of its hosts by class, and
// that of the other hosts of its leaf switches (failure_history.hpp).
//
// `ai-sim train-risk` trains it on the first part of a real fault trace with the shapes
// and run times of the Philly-derived jobs, and judges it against the hand-written model
// (failure_risk.hpp) on the rest; it ships as a JSON file that the select plugin reads
// (RiskModel= in ai_select.conf) and uses only when that verdict says it beat the
// hand-written model. Where it is in use (ClusterState::learned) its rate is the risk
// estimate's per-day figure: a failure that stops the job loses all of it since its last
// checkpoint, so its rate of being stopped is its expected share lost per day.
//
// Inputs, for a placement on hosts H at time t, the counts c of each host's HostFailures
// as of t summed over H (log1p of each sum):
//   0 cyclic graph (1/0), 1 cascading graph (1/0) (both 0: independent ranks),
//   2 ln |H|, 3 ln(leaf switches spanned), 4 log1p(NVLink domains spanned),
//   5 ln(mean hosts per spanned leaf), 6 log1p(mean hosts per spanned NVLink domain),
//   7 day count, 8 week count, 9 month count, 10 weekly GPU failures, 11 weekly network
//   failures, 12 weekly failures of the other classes, 13 the largest recency
//   exp(-(t - last) / 7 days) over H (0 with no failure), 14 the weekly counts of the
//   other hosts of the spanned leaves, 15 the share of those hosts with a weekly count
//   above 0.05.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "slurm_ai/common/input_error.hpp"
#include "slurm_ai/placement/failure_history.hpp"
#include "slurm_ai/topology/cluster_graph.hpp"

namespace slurm_ai {

inline constexpr int kRiskInputs = 16;
inline constexpr int kRiskHidden = 12;
using RiskInputs = std::array<double, kRiskInputs>;

// How a failure spreads through the job (failure_risk.hpp decides it from the job).
enum class RiskGraph { kIndependent, kCyclic, kCascade };

// The cluster's failure history as the model reads it, as of one moment: the hosts with
// a failure and their leaf switches' weekly sums. Built once per decision.
class RiskHistory {
  public:
    RiskHistory(const ClusterGraph &graph, double now) : graph_(&graph), now_(now) {}
    // A host's history (brought to `now` here), each host once; hosts never added have none.
    void add(int host, const HostFailures &history);

    double now() const { return now_; }
    const HostFailures *host(int h) const;
    // The leaf's hosts' weekly counts summed, and how many of them are above 0.05.
    std::pair<double, int> leaf(int leaf) const;

  private:
    const ClusterGraph *graph_;
    double now_;
    std::unordered_map<int, HostFailures> hosts_;
    std::unordered_map<int, std::pair<double, int>> leaves_;
};

RiskInputs placement_risk_inputs(const ClusterGraph &graph, RiskGraph kind,
                                 const std::vector<int> &hosts, const RiskHistory &history);

struct LearnedRiskInfo {
    std::string trace;                  // what it was trained on
    std::string jobs;                   // whose job shapes and run times
    double train_from_day = 0, train_to_day = 0, test_to_day = 0;
    int hosts = 0;                      // the cluster it was trained on
    long samples = 0, positives = 0;
    int epochs = 0;             // as chosen on the last quarter of the training days
    double weight_decay = 0;
    // On the held-out days: area under the ROC curve and log-loss of the placements'
    // chance of a failure during their jobs' runs, learned and hand-written (its rates
    // scaled by one factor fitted on the training days).
    double auc = 0, auc_hand_written = 0, log_loss = 0, log_loss_hand_written = 0;
    // On pairs of places for one job of which one was hit: how often each rated the spared
    // one lower (none: no such pair).
    std::optional<double> pairs_accuracy, pairs_accuracy_hand_written;
    bool beats_hand_written = false;    // every figure better
};

class LearnedRisk {
  public:
    LearnedRisk();  // all weights 0 (for training to fill)

    // The file's JSON; errors name the field and the source.
    static Parsed<LearnedRisk> parse(std::string_view json, std::string_view source);
    static Parsed<LearnedRisk> load(const std::string &path);
    std::string to_json() const;

    // The rate per day at which a failure stops the job: softplus of the network's output.
    double rate_per_day(const RiskInputs &x) const;
    // The chance of that within `days`: 1 - exp(-rate x days).
    double probability(const RiskInputs &x, double days) const;

    // The parameters, in one flat vector (training reads and writes them): mean[16],
    // scale[16] (not trained: set from the data), w1[12][16], b1[12], w2[12], b2.
    static constexpr int kParameters = kRiskHidden * kRiskInputs + 2 * kRiskHidden + 1;
    std::array<double, kRiskInputs> mean{}, scale{};
    std::array<double, kParameters> w{};

    // Gradient of the -log-likelihood of `total` placements with these inputs, each
    // watched for `days`, of which `hit` were stopped by a failure, added into grad;
    // returns their loss.
    double backprop(const RiskInputs &x, double days, double hit, double total,
                    std::array<double, kParameters> &grad) const;

    LearnedRiskInfo info;

  private:
    double output(const RiskInputs &x, std::array<double, kRiskHidden> *hidden) const;
};

// What the risk model reads when a learned model is in use (ClusterState::learned).
struct LearnedRiskView {
    const LearnedRisk *model;
    RiskHistory history;
};

}  // namespace slurm_ai
