// A learned scorer of the engine's candidate placements (the idea of SCALE's pointer
// network): the job attends to its candidates and each candidate to the regions of the
// cluster it takes from, so neither the number of candidates nor the cluster's size is
// part of the network. The engine builds its candidates as always (best-fit subtrees,
// their rivals, NVLink-domain fits, the local search's result); the scorer picks one.
//
// One decision's inputs (placement_inputs below computes them):
//   job, 6:        0 ln(1 + GPUs), 1 ln(1 + hosts it needs at least), 2 log1p(its ideal
//                  communication per step, ms), 3 log1p(time limit, h), 4 log1p(time
//                  waited, h), 5 log1p(GPUs the waiting multi-GPU jobs ask, over the job's)
//   candidate, 8:  0 ln(objective: communication over the ideal's, with the risk term),
//                  1 1 - efficiency, 2 log1p(capacity it takes from the sizes waiting, over
//                  the job's GPUs), 3 log1p(risk over the base host rate), 4 ln(hosts over
//                  the fewest that hold the job), 5 ln(leaf switches), 6 ln(regions),
//                  7 the share of the job's GPUs outside its largest region
//   region, 5:     one row per region the candidate takes from (NVLink domain, else leaf
//                  switch, else host): 0 ln(1 + its GPUs), 1 its free share before,
//                  2 its free share after, 3 the share of the job's GPUs there, 4 the
//                  uplink load of its leaf switch
// Each group is standardized (z = (x - mean) / scale, mean and scale set from training
// data). With width d:
//   q    = tanh(Wq zj + bq)                     the job
//   h_c  = tanh(Wh zc + bh)                     each candidate
//   k_cr = Wk zr,  v_cr = tanh(Wv zr + bv)      each region of a candidate
//   a_cr = softmax over r of h_c . k_cr / sqrt(d)
//   u_c  = h_c + sum_r a_cr v_cr                what the candidate is, in its regions
//   s_c  = q . u_c / sqrt(d) + beta . zc        the job's pointer at the candidate
// and the engine takes the candidate of the highest s (the first among equals).
//
// `ai-sim train-place` trains it (bench/ai-sim/train_place.hpp). Its file records how it
// was trained and how it did against the engine on held-out windows at each cluster size
// it was judged at; the select plugin uses a model (PlacementModel= in ai_select.conf)
// only when it beat the engine at every one.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "slurm_ai/common/input_error.hpp"
#include "slurm_ai/placement/cluster_state.hpp"
#include "slurm_ai/placement/job_demand.hpp"
#include "slurm_ai/placement/placement.hpp"

namespace slurm_ai {

inline constexpr int kPlaceJobInputs = 6;
inline constexpr int kPlaceCandidateInputs = 8;
inline constexpr int kPlaceRegionInputs = 5;
inline constexpr int kPlaceMaxWidth = 64;
// Two mean JCTs closer than this share of the second are a tie: the evaluation's rule
// (docs/evaluation.md), and what a scorer must beat the engine by.
inline constexpr double kJctTie = 0.005;

using PlaceJobInputs = std::array<double, kPlaceJobInputs>;
using PlaceCandidateInputs = std::array<double, kPlaceCandidateInputs>;
using PlaceRegionInputs = std::array<double, kPlaceRegionInputs>;

struct PlaceCandidate {
    PlaceCandidateInputs x{};
    std::vector<PlaceRegionInputs> regions;  // at least one for a placement with hosts
};

struct PlaceDecision {
    PlaceJobInputs job{};
    std::vector<PlaceCandidate> candidates;
    std::size_t objective_pick = 0;  // the candidate the engine's objective prefers
};

// What picks among the engine's candidates in place of its objective: a learned model
// (below), or in training a sampler that also records the decision.
class CandidateChooser {
  public:
    virtual ~CandidateChooser() = default;
    virtual std::size_t choose(const PlaceDecision &d) const = 0;
};

// A candidate as the engine scored it.
struct PlaceCandidateFacts {
    const Placement *placement = nullptr;
    double objective = 1;  // the engine's: communication over the ideal's, plus risk
    double destroyed = 0;  // destroyed_capacity (placement_terms.hpp)
};

// The inputs of one decision: the job, and each candidate in the given order.
PlaceDecision placement_inputs(const ClusterGraph &graph, const ClusterState &state,
                               const JobDemand &demand, double ideal_comm_s,
                               double host_rate_per_day,
                               const std::vector<PlaceCandidateFacts> &candidates);

// One judged cluster size: the model against the engine on windows not used in training.
struct PlaceJudgement {
    int hosts = 0;
    int windows = 0;
    double mean_jct_h = 0;         // the learned scorer's, over the windows' jobs
    double engine_mean_jct_h = 0;  // the engine's on the same jobs
};

struct LearnedPlacementInfo {
    std::string scenario;  // the fabric and trace it was trained on
    std::string method;    // how it was trained, in words
    int hosts = 0;         // the cluster size it was trained at
    int windows = 0;       // training windows
    long decisions = 0;    // training decisions
    int epochs = 0;
    double regularizer = 0;  // weight of the SRR terms (0: none)
    std::vector<PlaceJudgement> judged;
    // Judged at one size at least, and below the engine's mean JCT at every one by more
    // than a tie (kJctTie).
    bool beats_engine() const;
    // "mean JCT 8.1 h against the engine's 8.0 h at 288 hosts (4 windows), ...", or "never
    // judged".
    std::string judged_text() const;
};

class LearnedPlacement : public CandidateChooser {
  public:
    explicit LearnedPlacement(int width = 8);  // every weight 0, mean 0 and scale 1

    // The file's JSON; errors name the field and the source.
    static Parsed<LearnedPlacement> parse(std::string_view json, std::string_view source);
    static Parsed<LearnedPlacement> load(const std::string &path);
    std::string to_json() const;

    int width() const { return width_; }
    static std::size_t parameter_count(int width);

    // What one decision's forward pass computed, kept for its backward pass.
    struct Pass {
        std::vector<double> zj, q;
        struct Candidate {
            std::vector<double> zc, h, u;
            std::vector<std::vector<double>> zr, k, v;
            std::vector<double> a;
        };
        std::vector<Candidate> candidates;
        std::vector<double> scores;
    };
    Pass forward(const PlaceDecision &d) const;
    std::vector<double> scores(const PlaceDecision &d) const { return forward(d).scores; }
    // The candidate of the highest score (the first among equals); 0 with none.
    std::size_t choose(const PlaceDecision &d) const override;

    // Adds into grad the gradient of a loss given its derivatives in each candidate's
    // score (ds) and, where not empty, in each candidate's features u (du: what the SRR
    // terms add, over a batch).
    void backward(const Pass &p, const std::vector<double> &ds,
                  const std::vector<std::vector<double>> &du, std::vector<double> &grad) const;

    PlaceJobInputs mean_job{}, scale_job{};
    PlaceCandidateInputs mean_candidate{}, scale_candidate{};
    PlaceRegionInputs mean_region{}, scale_region{};
    // Wq[d][6], bq[d], Wh[d][8], bh[d], Wk[d][5], Wv[d][5], bv[d], beta[8].
    std::vector<double> w;
    LearnedPlacementInfo info;

  private:
    int width_;
};

}  // namespace slurm_ai
