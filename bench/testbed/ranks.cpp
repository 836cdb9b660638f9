#include "ranks.hpp"

#include <algorithm>
#include <numeric>

namespace slurm_ai::testbed {

std::vector<double> ranks(std::span<const double> v) {
    std::vector<std::size_t> order(v.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return v[a] < v[b]; });
    std::vector<double> r(v.size());
    for (std::size_t i = 0; i < order.size();) {
        std::size_t j = i;
        while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]])
            ++j;
        const double shared = (static_cast<double>(i + j) / 2) + 1;
        for (std::size_t k = i; k <= j; ++k)
            r[order[k]] = shared;
        i = j + 1;
    }
    return r;
}

}  // namespace slurm_ai::testbed
