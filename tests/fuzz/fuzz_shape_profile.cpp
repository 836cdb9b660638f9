// The measured shape profile (ShapeProfile= of ai_select.conf, written by ai-fit --shapes)
// on arbitrary bytes. A file that is accepted gives every shape it has a ratio of at least
// 1 and lists its GPU counts' shapes fastest first, and what it writes reads back giving
// the same ratios; a rejected one names a field.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <string>

#include "slurm_ai/placement/shape_profile.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    const std::string text(reinterpret_cast<const char *>(data), size);
    auto p = slurm_ai::parse_shape_profile(text, "fuzz");
    if (!p) {
        if (p.error().field.empty())
            __builtin_trap();
        return 0;
    }
    auto again = slurm_ai::parse_shape_profile(p->csv(), "again");
    if (!again || again->size() != p->size())
        __builtin_trap();
    for (int host : p->host_sizes())
        for (int gpus = 1; gpus <= 64; ++gpus) {
            double last = 0;
            for (const auto &[shape, ratio] : p->fastest(host, gpus)) {
                if (!(ratio >= 1 - 1e-9) || !std::isfinite(ratio) || ratio < last ||
                    std::accumulate(shape.begin(), shape.end(), 0) != gpus)
                    __builtin_trap();
                last = ratio;
                const auto read_back = again->ratio(host, shape);
                if (!read_back || std::abs(*read_back - ratio) > 1e-4 * ratio)
                    __builtin_trap();
            }
        }
    return 0;
}
