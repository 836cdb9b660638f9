#include "nelder_mead.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace slurm_ai::fit {
namespace {

struct Simplex {
    std::vector<std::vector<double>> points;
    std::vector<double> values;
};

}  // namespace

Minimum nelder_mead(const std::function<double(const std::vector<double> &)> &f,
                    std::vector<double> x0, const NelderMeadOptions &options) {
    const std::size_t n = x0.size();
    Minimum best{x0, f(x0), 1};
    auto eval = [&](const std::vector<double> &x) {
        double v = f(x);
        ++best.evaluations;
        if (!std::isfinite(v))
            v = std::numeric_limits<double>::max();
        if (v < best.value) {
            best.value = v;
            best.x = x;
        }
        return v;
    };
    if (n == 0)
        return best;

    for (int round = 0; round <= options.restarts; ++round) {
        Simplex s;
        s.points.push_back(best.x);
        s.values.push_back(best.value);
        for (std::size_t i = 0; i < n; ++i) {
            auto p = best.x;
            p[i] += options.step;
            s.values.push_back(eval(p));
            s.points.push_back(std::move(p));
        }
        std::vector<std::size_t> order(n + 1);
        while (best.evaluations < options.max_evaluations) {
            std::iota(order.begin(), order.end(), 0);
            std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
                return s.values[a] < s.values[b];
            });
            const std::size_t lo = order.front(), hi = order.back(), second = order[n - 1];
            if (s.values[hi] - s.values[lo] <= options.tolerance * (1 + std::fabs(s.values[lo])))
                break;
            std::vector<double> centroid(n, 0.0);
            for (std::size_t k = 0; k <= n; ++k)
                if (k != hi)
                    for (std::size_t i = 0; i < n; ++i)
                        centroid[i] += s.points[k][i] / static_cast<double>(n);
            auto along = [&](double t) {
                std::vector<double> p(n);
                for (std::size_t i = 0; i < n; ++i)
                    p[i] = centroid[i] + t * (s.points[hi][i] - centroid[i]);
                return p;
            };
            auto reflected = along(-1.0);
            double fr = eval(reflected);
            if (fr < s.values[lo]) {
                auto expanded = along(-2.0);
                double fe = eval(expanded);
                if (fe < fr) {
                    s.points[hi] = std::move(expanded);
                    s.values[hi] = fe;
                } else {
                    s.points[hi] = std::move(reflected);
                    s.values[hi] = fr;
                }
                continue;
            }
            if (fr < s.values[second]) {
                s.points[hi] = std::move(reflected);
                s.values[hi] = fr;
                continue;
            }
            // Contract towards the better of the reflected and the worst point.
            const bool outside = fr < s.values[hi];
            auto contracted = along(outside ? -0.5 : 0.5);
            double fc = eval(contracted);
            if (fc < (outside ? fr : s.values[hi])) {
                s.points[hi] = std::move(contracted);
                s.values[hi] = fc;
                continue;
            }
            // Shrink every point halfway towards the best one.
            for (std::size_t k = 0; k <= n; ++k) {
                if (k == lo)
                    continue;
                for (std::size_t i = 0; i < n; ++i)
                    s.points[k][i] = s.points[lo][i] + 0.5 * (s.points[k][i] - s.points[lo][i]);
                s.values[k] = eval(s.points[k]);
            }
        }
    }
    return best;
}

}  // namespace slurm_ai::fit
