#include "slurm_ai/placement/failure_history.hpp"

#include <algorithm>
#include <cmath>

namespace slurm_ai {
namespace {

constexpr double kOnceWithinS = 3600;

double decay(double dt, double half_life_days) {
    return std::exp2(-dt / (half_life_days * kDaySeconds));
}

}  // namespace

HostFailures HostFailures::as_of(double t) const {
    if (t <= at)
        return *this;
    HostFailures h = *this;
    const double dt = t - at;
    h.day *= decay(dt, 1);
    h.week *= decay(dt, 7);
    h.month *= decay(dt, 30);
    for (auto &c : h.by_class)
        c *= decay(dt, 7);
    h.at = t;
    return h;
}

void HostFailures::note(double t, FailureClass c) {
    auto &cls = by_class[static_cast<std::size_t>(c)];
    if (any() && t >= last && t - last < kOnceWithinS) {
        cls = std::max(cls, 1.0);  // the same failure, seen again: its class is remembered
        return;
    }
    *this = as_of(t);
    day += 1;
    week += 1;
    month += 1;
    by_class[static_cast<std::size_t>(c)] += 1;
    last = t;
}

}  // namespace slurm_ai
