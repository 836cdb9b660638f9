#include <algorithm>
#include <string>
#include <utility>

#include "collectives.hpp"

namespace slurm_ai::detail {

// Stages are contiguous blocks of ranks; a stage with several ranks is replicated, and
// replica k of a stage talks to replica k of the next. Each micro-batch sends its
// activations over every boundary forward and its gradients back; with the usual
// one-forward-one-backward schedule the slowest boundary paces all but the pipeline's
// fill and drain, which cross every boundary once.
CommEstimate pipeline(const FlowModel &m, std::uint32_t stages, double bytes,
                      std::uint32_t microbatches) {
    int p = m.ranks();
    int s = std::clamp(static_cast<int>(stages), 1, std::max(p, 1));
    if (s < 2)
        return CommEstimate{0, "pipeline", {}};
    std::vector<int> first(s + 1);
    for (int k = 0; k <= s; ++k)
        first[k] = static_cast<int>(static_cast<long>(p) * k / s);
    double slowest = 0, sum = 0;
    const double mb = std::max<std::uint32_t>(microbatches, 1);
    LedgerScope scope(m.ledger(), "pipeline");
    for (int b = 0; b + 1 < s; ++b) {
        int here = first[b + 1] - first[b], next = first[b + 2] - first[b + 1];
        int lanes = std::min(here, next);
        std::vector<Flow> flows;
        for (int k = 0; k < lanes; ++k)
            flows.push_back({first[b] + k, first[b + 1] + k, bytes / lanes});
        double t = m.phase_time(flows);
        // Every micro-batch's activations forward, its gradients back.
        m.record(flows, mb);
        for (auto &f : flows)
            std::swap(f.src, f.dst);
        m.record(flows, mb);
        slowest = std::max(slowest, t);
        sum += t;
    }
    double seconds = 2 * ((mb - 1) * slowest + sum);
    return CommEstimate{
        seconds,
        "pipeline",
        {{"slowest boundary", slowest}, {"boundaries of " + std::to_string(s) + " stages", sum}}};
}

}  // namespace slurm_ai::detail
