// The failure study of `ai-sim report`: the InfiniteHBD fault trace replayed on the Philly
// scenario at two cluster sizes, windows of its later part (the learned model's held-out
// days), every policy meeting the same faults; geometry-aware against geometry-blind
// placement window by window and decision by decision (PairedDecision); the hand-written
// risk model against the learned one (trained here, on the trace's earlier part).
#pragma once

#include <array>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "fault_trace.hpp"
#include "metrics.hpp"
#include "scenario.hpp"
#include "train_risk.hpp"

namespace slurm_ai::sim {

struct FailureStudy {
    FaultTrace trace;
    LearnedRisk model;
    int train_hosts = 0;
    double split_day = 0;
    std::vector<std::pair<int, Judgement>> judged;  // (hosts, held-out judgement)
    std::vector<std::string> policies;

    struct Size {
        int hosts = 0;
        std::optional<Scenario> scenario;
        std::vector<double> starts;  // window starts (trace days)
        std::vector<int> faults;     // per window: faults in it
        // [window][policy]
        std::vector<std::vector<Summary>> rows;
        std::vector<std::vector<std::array<PairedTally, kRegimes>>> paired;
    };
    std::vector<Size> sizes;
};

// Loads the trace, trains the learned model on its first two thirds, prepares the
// scenario at each size and adds one task per window and policy.
std::optional<InputError> plan_failures(FailureStudy &study, bool quick, int windows,
                                        std::vector<std::function<void()>> &tasks);

// The section of the page (markdown) and its figures in JSON ("failures").
std::string failures_section(const FailureStudy &study);
nlohmann::json failures_json(const FailureStudy &study);

// A win rate as the page gives it ("57%"), or `none` when nothing was decided; and as the
// JSON gives it (null when nothing was decided).
std::string percent_or(std::optional<double> rate, std::string_view none);
nlohmann::json rate_json(std::optional<double> rate);

// The figures the targets use, for the size given (index into sizes): the windows won and
// lost by engine against engine-norisk by regime, and lost GPU-hours against tree best fit.
struct FailureHeadline {
    std::array<int, kRegimes> window_wins{}, window_losses{};  // ties left out
    std::array<PairedTally, kRegimes> paired{};
    double lost_engine = 0, lost_suite = 0, lost_tree = 0;  // GPU-hours per window
};
FailureHeadline failure_headline(const FailureStudy &study, std::size_t size);

}  // namespace slurm_ai::sim
