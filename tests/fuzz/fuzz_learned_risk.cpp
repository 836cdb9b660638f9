// The learned risk model's file (RiskModel= of ai_select.conf, written by ai-sim
// train-risk) on arbitrary bytes. A file that is accepted must give probabilities in
// [0, 1] and finite rates, not negative, for any placement's inputs, and what it writes
// must read back giving the same; a rejected one names a field.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "slurm_ai/placement/learned_risk.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char *>(data), size);
    auto m = slurm_ai::LearnedRisk::parse(text, "fuzz");
    if (!m) {
        if (m.error().field.empty())
            __builtin_trap();
        return 0;
    }
    auto again = slurm_ai::LearnedRisk::parse(m->to_json(), "again");
    if (!again)
        __builtin_trap();
    // Inputs from the extremes a cluster gives: none, small, and a host that failed a
    // million times.
    for (double scale : {0.0, 0.5, 3.0, 14.0}) {
        slurm_ai::RiskInputs x{};
        for (std::size_t i = 0; i < x.size(); ++i)
            x[i] = scale * (i % 3 == 0 ? 1.0 : 0.5);
        for (double days : {0.0, 0.01, 1.0, 400.0}) {
            const double p = m->probability(x, days);
            const double r = m->rate_per_day(x);
            if (!(p >= 0 && p <= 1) || !(r >= 0) || !std::isfinite(r) ||
                again->probability(x, days) != p)
                __builtin_trap();
        }
    }
    return 0;
}
