// Training and judging the learned placement scorer (learned_placement.hpp) on the
// simulator.
//
// Windows: the training scenario's window and the next ones (each `overlay` windows of
// `days` laid over one, as `ai-sim run --overlay`), then, after the last training day,
// the held-out windows. The scorer is judged at each multiple f of the training size: f
// times the hosts and f times the overlay (the same load per GPU), on held-out windows of
// that length, against the engine alone on the same jobs.
//
// Training, in two steps, with a fixed seed (the same model at every run):
// 1. Imitation. The engine runs every training window; each decision with more than one
//    candidate is recorded (at most `max_decisions` per window, drawn evenly) with the
//    objective's pick. Input means and scales come from these decisions. The network
//    learns the objective's pick (cross-entropy, Adam, mini-batches): it starts as the
//    engine.
// 2. Policy gradient on simulated JCT. Each episode runs one training window with
//    candidates drawn from the network's softmax; its advantage is the engine's mean JCT
//    on that window over the episode's, minus 1, less a running baseline per window; the
//    gradient is REINFORCE's, over the episode's recorded decisions. After every round of
//    episodes the greedy network runs the validation windows (the last training windows,
//    which give no decision and no episode), and the best round (mean JCT relative to the
//    engine's there) is kept, the imitation step's model included.
// With `regularizer` > 0 both steps add SCALE's Structured Representation Regularization
// on the candidates' features u over each batch: the squared off-diagonal covariances
// (decorrelation) and the KL divergence of each feature's batch mean and variance from the
// standard normal, times `regularizer`.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "scenario.hpp"
#include "slurm_ai/placement/learned_placement.hpp"

namespace slurm_ai::sim {

struct TrainPlaceOptions {
    ScenarioSpec spec;  // the first training window (start: YYYY-MM-DD or seconds)
    SimOptions sim;
    int windows = 8;                      // training windows
    int validation = 2;                   // of those, the last ones only choose the round
    int held_out = 2;                     // judged windows at each size
    std::vector<int> sizes = {2, 4, 16};  // judged at these multiples of the training size
    int width = 8;
    int imitation_epochs = 30;
    int rounds = 4;             // of policy-gradient episodes, each over every window
    double regularizer = 0.1;   // SRR weight; 0: none
    double learning_rate = 3e-3;
    double temperature = 0.5;   // of the softmax the episodes draw from
    int max_decisions = 4000;   // recorded per window
    std::uint64_t seed = 1;
    int threads = 2;
};

// The SRR terms over a batch of features (rows of width d): their value, and their
// gradient in each row added into du (same shape).
double srr_terms(const std::vector<std::vector<double>> &u, std::vector<std::vector<double>> &du);

// Trains, judges, and returns the model with its record; progress goes to `log`.
Parsed<LearnedPlacement> train_place(const TrainPlaceOptions &o, std::ostream &log);

// "YYYY-MM-DD" plus whole days, or seconds plus days x 86400 for a trace without dates.
std::string shift_start(const std::string &start, double days);

}  // namespace slurm_ai::sim
