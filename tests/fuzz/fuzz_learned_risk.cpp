// The learned risk model's file (RiskModel= of ai_select.conf, written by ai-sim
// train-risk) on arbitrary bytes. A file that is accepted must give probabilities in
// [0, 1] and finite rates for any history, and what it writes must read back giving the
// same; a rejected one names a field.
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
    slurm_ai::HostFailures h;
    h.note(100, slurm_ai::FailureClass::kGpu);
    h.note(90000, slurm_ai::FailureClass::kNetwork);
    auto again = slurm_ai::LearnedRisk::parse(m->to_json(), "again");
    if (!again)
        __builtin_trap();
    for (double t : {0.0, 100.0, 1e5, 1e9})
        for (double leaf : {0.0, 3.0, 1e6}) {
            auto x = slurm_ai::hazard_inputs(h, t, leaf, leaf > 0 ? 0.5 : 0.0);
            const double p = m->probability(x);
            if (!(p >= 0 && p <= 1) || std::isnan(m->rate_per_day(x)) ||
                again->probability(x) != p)
                __builtin_trap();
        }
    return 0;
}
