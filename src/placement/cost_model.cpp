#include "slurm_ai/placement/cost_model.hpp"

#include <algorithm>

#include "collectives.hpp"
#include "flow_model.hpp"

namespace slurm_ai {

CostModel::CostModel(const ClusterGraph &graph, CostConstants constants)
    : graph_(&graph), constants_(constants) {}

namespace {

CommEstimate estimate_on(const detail::FlowModel &m, const JobDemand &demand) {
    if (demand.dag)
        return detail::dag_critical_path(m, *demand.dag);
    const CommSpec &c = demand.comm;
    const double bytes = static_cast<double>(c.bytes);
    switch (c.pattern) {
        case CommPattern::kAllReduce:
            return detail::allreduce(m, bytes, c.algo);
        case CommPattern::kPipeline:
            return detail::pipeline(m, c.stages, bytes, c.microbatches);
        case CommPattern::kTensorParallel:
            return detail::tensor_parallel(m, c.tp_size, bytes);
        case CommPattern::kMoE:
            return detail::all_to_all(m, bytes);
        case CommPattern::kParameterServer:
            return detail::parameter_server(m, c.servers, bytes);
        case CommPattern::kNone:
            break;
    }
    return CommEstimate{0, "none", {}};
}

}  // namespace

CommEstimate CostModel::estimate(const JobDemand &demand, const Placement &placement,
                                 const ClusterState *state) const {
    if (placement.empty())
        return CommEstimate{0, "none", {}};
    return estimate_on(detail::FlowModel(*graph_, constants_, placement.ranks(), state), demand);
}

std::vector<UplinkUse> CostModel::uplink_use(const JobDemand &demand, const Placement &placement,
                                             double *comm_s) const {
    std::vector<UplinkUse> out;
    if (placement.hosts.size() < 2) {
        if (comm_s)
            *comm_s = estimate(demand, placement).seconds;
        return out;
    }
    detail::UplinkLedger ledger;
    const CommEstimate e = estimate_on(
        detail::FlowModel(*graph_, constants_, placement.ranks(), nullptr, &ledger), demand);
    if (comm_s)
        *comm_s = e.seconds;
    auto chosen = ledger.bytes.find(e.algorithm);
    if (chosen == ledger.bytes.end())
        return out;
    for (const auto &[leaf, bytes] : chosen->second) {
        const double gbs = graph_->uplink_gbs(leaf) * constants_.inter_efficiency;
        if (gbs > 0)
            out.push_back({leaf, std::max(bytes.first, bytes.second) / (gbs * 1e9)});
    }
    std::sort(out.begin(), out.end(),
              [](const UplinkUse &a, const UplinkUse &b) { return a.switch_node < b.switch_node; });
    return out;
}

}  // namespace slurm_ai
