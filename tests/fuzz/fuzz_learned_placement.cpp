// The learned placement scorer's file (PlacementModel= of ai_select.conf, written by
// ai-sim train-place) on arbitrary bytes. A file that is accepted must give finite scores
// and a candidate in range for any decision's inputs, what it writes must read back giving
// the same, and its verdict must be the one its judged figures give; a rejected one names
// a field.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "slurm_ai/placement/learned_placement.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char *>(data), size);
    auto m = slurm_ai::LearnedPlacement::parse(text, "fuzz");
    if (!m) {
        if (m.error().field.empty())
            __builtin_trap();
        return 0;
    }
    auto again = slurm_ai::LearnedPlacement::parse(m->to_json(), "again");
    if (!again || again->info.beats_engine() != m->info.beats_engine())
        __builtin_trap();
    // Decisions from the extremes a cluster gives: no candidate, one without regions, and
    // candidates over many regions with inputs up to a 100,000-GPU job's.
    for (double scale : {0.0, 0.5, 3.0, 14.0}) {
        slurm_ai::PlaceDecision d;
        for (std::size_t i = 0; i < d.job.size(); ++i)
            d.job[i] = scale * (i % 2 ? 1.0 : 0.5);
        for (int c = 0; c < 3; ++c) {
            slurm_ai::PlaceCandidate pc;
            for (std::size_t i = 0; i < pc.x.size(); ++i)
                pc.x[i] = scale * (static_cast<double>(i + c) / 4);
            for (int r = 0; r < c * 40; ++r)
                pc.regions.push_back({scale, r % 2 ? 1.0 : 0.0, 0.5, 1.0 / (r + 1), 0.1 * c});
            d.candidates.push_back(pc);
        }
        const auto s = m->scores(d);
        const auto s2 = again->scores(d);
        for (std::size_t c = 0; c < s.size(); ++c)
            if (!std::isfinite(s[c]) || s[c] != s2[c])
                __builtin_trap();
        if (m->choose(d) >= d.candidates.size())
            __builtin_trap();
    }
    return 0;
}
