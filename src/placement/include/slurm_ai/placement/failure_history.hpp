// What is remembered of one host's failures: counts that decay with half-lives of a day,
// a week and a month, the weekly count by class (failure_class.hpp), and the time of the
// last failure. The select plugin keeps one per node (and saves it with its state), the
// simulator one per host, and the learned risk model (learned_risk.hpp) reads its inputs
// from them: one type, so that the model sees in production what it was trained on.
#pragma once

#include <array>

#include "slurm_ai/placement/failure_class.hpp"

namespace slurm_ai {

inline constexpr double kDaySeconds = 86400.0;
// The weekly count is the hand-written risk model's "recent failures" (failure_risk.hpp).
inline constexpr double kWeekHalfLifeS = 7 * kDaySeconds;

struct HostFailures {
    double day = 0, week = 0, month = 0;             // decayed counts, as of `at`
    std::array<double, kFailureClasses> by_class{};  // weekly, as of `at`
    double at = 0;     // when the counts were last brought up to date (seconds)
    double last = -1;  // the last failure counted (seconds); -1: none

    bool any() const { return last >= 0; }
    // The counts decayed to t (t >= at; earlier leaves them as they are).
    HostFailures as_of(double t) const;
    // One more failure at t of class c. A failure within an hour of the last counts once
    // (a node that flaps DOWN and back is one failure), but its class is remembered.
    void note(double t, FailureClass c);
    bool operator==(const HostFailures &) const = default;
};

}  // namespace slurm_ai
