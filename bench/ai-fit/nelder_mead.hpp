// Nelder-Mead minimisation of a function of a few unbounded parameters. Used by ai-fit,
// whose objective (the cost model picks the fastest of several algorithms, and a phase
// lasts as long as its slowest flow) has kinks that derivative-based methods stumble on.
#pragma once

#include <functional>
#include <vector>

namespace slurm_ai::fit {

struct NelderMeadOptions {
    double step = 0.5;  // initial simplex: x0 plus `step` along each axis
    int max_evaluations = 4000;
    double tolerance = 1e-10;  // stop when the simplex's values differ by less than this
    int restarts = 2;          // rebuild the simplex around the best point this many times
};

struct Minimum {
    std::vector<double> x;
    double value = 0;
    int evaluations = 0;
};

// Deterministic: the same inputs give the same evaluations in the same order. A restart
// from the best point guards against a simplex that collapsed onto a ridge.
Minimum nelder_mead(const std::function<double(const std::vector<double> &)> &f,
                    std::vector<double> x0, const NelderMeadOptions &options = {});

}  // namespace slurm_ai::fit
