#include "slurm_ai/placement/cost_model.hpp"

#include "collectives.hpp"
#include "flow_model.hpp"

namespace slurm_ai {

CostModel::CostModel(const ClusterGraph &graph, CostConstants constants)
    : graph_(&graph), constants_(constants) {}

CommEstimate CostModel::estimate(const JobDemand &demand, const Placement &placement,
                                 const ClusterState *state) const {
    if (placement.empty())
        return CommEstimate{0, "none", {}};
    detail::FlowModel m(*graph_, constants_, placement.ranks(), state);
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

}  // namespace slurm_ai
