#include <algorithm>

#include "collectives.hpp"

namespace slurm_ai::detail {

// Tasks take consecutive ranks in task order (wrapping when the DAG wants more GPUs than
// the placement has). An edge's bytes are split over min(|from|, |to|) parallel flows
// between the two tasks' ranks; all edges are costed as if they ran at once, which is
// what makes shared links count. The communication time is how much longer the DAG's
// critical path is with transfers on its edges than with compute alone.
CommEstimate dag_critical_path(const FlowModel &m, const TaskDag &dag) {
    const int p = std::max(m.ranks(), 1);
    std::vector<std::vector<int>> ranks_of(dag.tasks.size());
    int next = 0;
    for (std::size_t t = 0; t < dag.tasks.size(); ++t)
        for (std::uint32_t k = 0; k < dag.tasks[t].gpus; ++k)
            ranks_of[t].push_back(next++ % p);

    std::vector<Flow> flows;
    std::vector<std::pair<std::size_t, std::size_t>> edge_flows;  // [first, last) per edge
    for (const auto &e : dag.edges) {
        const auto &a = ranks_of[e.from], &b = ranks_of[e.to];
        std::size_t lanes = std::max<std::size_t>(std::min(a.size(), b.size()), 1);
        std::size_t begin = flows.size();
        for (std::size_t k = 0; k < lanes; ++k)
            flows.push_back(
                {a[k % a.size()], b[k % b.size()], static_cast<double>(e.bytes) / lanes});
        edge_flows.emplace_back(begin, flows.size());
    }
    auto times = m.flow_times(flows);
    {
        LedgerScope scope(m.ledger(), "dag");
        m.record(flows, 1);
    }

    auto order = dag.topological_order();
    std::vector<double> with(dag.tasks.size(), 0), without(dag.tasks.size(), 0);
    std::vector<std::vector<std::size_t>> in(dag.tasks.size());
    for (std::size_t i = 0; i < dag.edges.size(); ++i)
        in[dag.edges[i].to].push_back(i);
    double longest_with = 0, longest_without = 0;
    for (auto t : order) {
        double start_with = 0, start_without = 0;
        for (auto ei : in[t]) {
            const auto &e = dag.edges[ei];
            double transfer = 0;
            for (std::size_t f = edge_flows[ei].first; f < edge_flows[ei].second; ++f)
                transfer = std::max(transfer, times[f]);
            start_with = std::max(start_with, with[e.from] + transfer);
            start_without = std::max(start_without, without[e.from]);
        }
        with[t] = start_with + dag.tasks[t].compute_s;
        without[t] = start_without + dag.tasks[t].compute_s;
        longest_with = std::max(longest_with, with[t]);
        longest_without = std::max(longest_without, without[t]);
    }
    double comm = std::max(0.0, longest_with - longest_without);
    return CommEstimate{comm,
                        "dag",
                        {{"critical path with transfers", longest_with},
                         {"critical path of compute", longest_without}}};
}

}  // namespace slurm_ai::detail
