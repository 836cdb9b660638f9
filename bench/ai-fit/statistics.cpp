#include "statistics.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "testbed/ranks.hpp"

namespace slurm_ai::fit {
namespace {

double median(std::vector<double> v) {
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    std::size_t mid = v.size() / 2;
    return v.size() % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}


}  // namespace

double spearman(std::span<const double> a, std::span<const double> b) {
    const std::size_t n = std::min(a.size(), b.size());
    if (n < 2)
        return 0;
    auto ra = testbed::ranks(a.first(n)), rb = testbed::ranks(b.first(n));
    double ma = std::accumulate(ra.begin(), ra.end(), 0.0) / static_cast<double>(n);
    double mb = std::accumulate(rb.begin(), rb.end(), 0.0) / static_cast<double>(n);
    double sab = 0, saa = 0, sbb = 0;
    for (std::size_t i = 0; i < n; ++i) {
        sab += (ra[i] - ma) * (rb[i] - mb);
        saa += (ra[i] - ma) * (ra[i] - ma);
        sbb += (rb[i] - mb) * (rb[i] - mb);
    }
    return saa > 0 && sbb > 0 ? sab / std::sqrt(saa * sbb) : 0;
}

ErrorFigures error_figures(std::span<const double> predicted, std::span<const double> measured) {
    ErrorFigures e;
    e.count = std::min(predicted.size(), measured.size());
    if (e.count == 0)
        return e;
    std::vector<double> ape, ratio;
    for (std::size_t i = 0; i < e.count; ++i) {
        ape.push_back(100 * std::fabs(predicted[i] - measured[i]) / measured[i]);
        ratio.push_back(predicted[i] / measured[i]);
    }
    e.mean_ape = std::accumulate(ape.begin(), ape.end(), 0.0) / static_cast<double>(e.count);
    e.median_ape = median(std::move(ape));
    e.median_ratio = median(std::move(ratio));
    e.spearman = spearman(predicted.first(e.count), measured.first(e.count));
    return e;
}

}  // namespace slurm_ai::fit
