// What is remembered of one host's failures: counts that decay with half-lives of a day,
// a week and a month, the weekly count by class (failure_class.hpp), and the time of the
// last failure. The select plugin keeps one per node (and saves it with its state), the
// simulator one per host, and the learned risk model (learned_risk.hpp) reads its inputs
// from them: one type, so that the model sees in production what it was trained on.
#pragma once

#include <array>
#include <map>
#include <string>
#include <string_view>

#include "slurm_ai/common/input_error.hpp"
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

// Every host's history by name: what the select plugin keeps, and saves in
// ai_select_state.json under StateSaveLocation (state_paths::select_state).
using FailureHistory = std::map<std::string, HostFailures>;

// That file's text: {"version": 2, "failures": {HOST: {"day", "week", "month", "at",
// "last", "classes": {CLASS: count}}}}; version 1 (the weekly count and its time alone) is
// read too. Not JSON, another version, or a count that is not a finite number >= 0 is an
// error naming `source` and the field: nothing of the text is used (the plugin starts
// with a clean history). What dump_failure_history writes reads back the same.
Parsed<FailureHistory> parse_failure_history(std::string_view text, std::string_view source);
std::string dump_failure_history(const FailureHistory &history);

}  // namespace slurm_ai
