// Ranks of values, as rank statistics use them: ai-fit's Spearman correlation and
// ai-sim's area under the ROC curve (Mann-Whitney).
#pragma once

#include <span>
#include <vector>

namespace slurm_ai::testbed {

// Ranks from 1 in increasing order, tied values sharing the mean of their ranks.
std::vector<double> ranks(std::span<const double> v);

}  // namespace slurm_ai::testbed
