// The error figures ai-fit reports for a set of predictions against measurements.
#pragma once

#include <cstddef>
#include <span>

namespace slurm_ai::fit {

struct ErrorFigures {
    std::size_t count = 0;
    double median_ape = 0;    // median of |predicted - measured| / measured, in percent
    double mean_ape = 0;      // mean of the same
    double spearman = 0;      // rank correlation of predicted and measured (ties averaged);
                              // 0 for fewer than 2 points or a constant side
    double median_ratio = 0;  // median of predicted / measured: above 1 overestimates
};

// predicted and measured have the same length; measured values are positive.
ErrorFigures error_figures(std::span<const double> predicted, std::span<const double> measured);

double spearman(std::span<const double> a, std::span<const double> b);

}  // namespace slurm_ai::fit
