#include "slurm_ai/placement/job_demand.hpp"

#include <algorithm>

namespace slurm_ai {

std::uint32_t JobDemand::ranks() const {
    if (dag)
        return dag->total_gpus();
    return total_gpus > 0 ? total_gpus : std::max<std::uint32_t>(min_nodes, 1);
}

std::uint32_t JobDemand::gpus_per_host() const {
    if (total_gpus == 0)
        return 0;
    const std::uint32_t nodes = std::max<std::uint32_t>(min_nodes, 1);
    return gpus_per_node ? gpus_per_node : (total_gpus + nodes - 1) / nodes;
}

JobDemand make_demand(const JobRequest &request, const JobHints &hints,
                      std::optional<TaskDag> dag) {
    JobDemand d;
    d.min_nodes = std::max<std::uint32_t>(request.min_nodes, 1);
    d.max_nodes = std::max(request.max_nodes, d.min_nodes);
    d.gpus_per_node = request.gpus_per_node;
    d.total_gpus = request.total_gpus;
    if (d.total_gpus == 0 && d.gpus_per_node > 0)
        d.total_gpus = d.gpus_per_node * d.min_nodes;
    d.tasks = std::max<std::uint32_t>(request.tasks, 1);
    if (hints.locality)
        d.locality = *hints.locality;
    if (dag) {
        d.dag = std::move(dag);
        d.total_gpus = std::max(d.total_gpus, d.dag->total_gpus());
    }

    bool communicates = d.min_nodes > 1 || d.total_gpus > 1;
    if (hints.comm) {
        d.comm = *hints.comm;
    } else {
        d.comm.pattern = communicates ? CommPattern::kAllReduce : CommPattern::kNone;
    }
    auto &c = d.comm;
    switch (c.pattern) {
        case CommPattern::kAllReduce:
            c.bytes = c.bytes ? c.bytes : kDefaultAllreduceBytes;
            break;
        case CommPattern::kPipeline:
            c.bytes = c.bytes ? c.bytes : kDefaultActivationBytes;
            c.stages = c.stages ? c.stages : std::max<std::uint32_t>(d.min_nodes, 2);
            c.microbatches = c.microbatches ? c.microbatches : kDefaultMicrobatches;
            break;
        case CommPattern::kTensorParallel:
            c.bytes = c.bytes ? c.bytes : kDefaultTensorParallelBytes;
            c.tp_size = c.tp_size
                            ? c.tp_size
                            : std::max<std::uint32_t>(d.gpus_per_node ? d.gpus_per_node : 2, 2);
            break;
        case CommPattern::kMoE:
            c.bytes = c.bytes ? c.bytes : kDefaultAllToAllBytes;
            c.experts = c.experts ? c.experts : std::max<std::uint32_t>(d.ranks(), 2);
            break;
        case CommPattern::kParameterServer:
            c.bytes = c.bytes ? c.bytes : kDefaultAllreduceBytes;
            c.servers = c.servers ? c.servers : 1;
            break;
        case CommPattern::kNone:
            break;
    }
    return d;
}

}  // namespace slurm_ai
