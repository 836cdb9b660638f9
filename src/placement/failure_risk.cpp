#include "slurm_ai/placement/failure_risk.hpp"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "slurm_ai/placement/learned_risk.hpp"

namespace slurm_ai {
namespace {

// The job's hosts (units) and, for cascading patterns, directed edges towards the sinks.
struct ExecutionGraph {
    RiskGraph kind = RiskGraph::kIndependent;
    std::vector<double> weight;             // share of the job's ranks on each unit
    std::vector<std::vector<int>> reverse;  // v -> units with an edge into v
    std::vector<bool> sink;
};

ExecutionGraph build(const JobDemand &d, const Placement &p) {
    ExecutionGraph g;
    auto ranks = p.ranks();
    const int n = static_cast<int>(p.hosts.size());
    const int r = static_cast<int>(ranks.size());
    std::unordered_map<int, int> unit_of_host;
    for (int i = 0; i < n; ++i)
        unit_of_host[p.hosts[i]] = i;
    std::vector<int> unit(r);
    g.weight.assign(n, 0);
    for (int k = 0; k < r; ++k) {
        unit[k] = unit_of_host[ranks[k].host];
        g.weight[unit[k]] += 1.0 / r;
    }
    g.reverse.assign(n, {});
    g.sink.assign(n, false);
    auto edge = [&](int from_rank, int to_rank) {
        int a = unit[from_rank], b = unit[to_rank];
        if (a != b)
            g.reverse[b].push_back(a);
    };

    g.kind = risk_graph(d, n);
    if (d.dag) {
        std::vector<int> first(d.dag->tasks.size());
        int next = 0;
        for (std::size_t t = 0; t < d.dag->tasks.size(); ++t) {
            first[t] = next % r;
            next += static_cast<int>(d.dag->tasks[t].gpus);
        }
        std::vector<bool> has_out(d.dag->tasks.size(), false);
        for (const auto &e : d.dag->edges) {
            edge(first[e.from], first[e.to]);
            has_out[e.from] = true;
        }
        for (std::size_t t = 0; t < d.dag->tasks.size(); ++t)
            if (!has_out[t])
                g.sink[unit[first[t]]] = true;
        return g;
    }
    switch (d.comm.pattern) {
        case CommPattern::kAllReduce:
        case CommPattern::kTensorParallel:
        case CommPattern::kMoE:
            break;
        case CommPattern::kPipeline: {
            int s = std::clamp(static_cast<int>(d.comm.stages), 1, std::max(r, 1));
            std::vector<int> first(s + 1);
            for (int k = 0; k <= s; ++k)
                first[k] = static_cast<int>(static_cast<long>(r) * k / s);
            for (int b = 0; b + 1 < s; ++b) {
                int lanes = std::min(first[b + 1] - first[b], first[b + 2] - first[b + 1]);
                for (int k = 0; k < lanes; ++k)
                    edge(first[b] + k, first[b + 1] + k);
            }
            for (int k = first[s - 1]; k < r; ++k)
                g.sink[unit[k]] = true;
            break;
        }
        case CommPattern::kParameterServer:
            // Gradients flow up an aggregation tree to the first host.
            for (int i = 1; i < n; ++i)
                g.reverse[(i - 1) / 2].push_back(i);
            g.sink[0] = true;
            break;
        case CommPattern::kNone:
            break;
    }
    return g;
}

// Share of the job lost when the units in `failed` fail.
double impact(const ExecutionGraph &g, const std::vector<bool> &failed) {
    double lost = 0;
    const std::size_t n = g.weight.size();
    if (g.kind != RiskGraph::kCascade) {
        for (std::size_t u = 0; u < n; ++u)
            if (failed[u])
                lost += g.weight[u];
        return lost;
    }
    // Alive: units that still reach a surviving sink without crossing a failed unit.
    std::vector<bool> alive(n, false);
    std::vector<int> stack;
    for (std::size_t u = 0; u < n; ++u)
        if (g.sink[u] && !failed[u]) {
            alive[u] = true;
            stack.push_back(static_cast<int>(u));
        }
    while (!stack.empty()) {
        int v = stack.back();
        stack.pop_back();
        for (int u : g.reverse[v])
            if (!alive[u] && !failed[u]) {
                alive[u] = true;
                stack.push_back(u);
            }
    }
    for (std::size_t u = 0; u < n; ++u)
        if (!alive[u])
            lost += g.weight[u];
    return lost;
}

const char *graph_name(RiskGraph kind) {
    return kind == RiskGraph::kCascade ? "cascade"
           : kind == RiskGraph::kCyclic ? "cyclic"
                                        : "independent";
}

}  // namespace

RiskGraph risk_graph(const JobDemand &d, int hosts) {
    if (d.dag)
        return RiskGraph::kCascade;
    switch (d.comm.pattern) {
        case CommPattern::kAllReduce:
        case CommPattern::kTensorParallel:
        case CommPattern::kMoE:
            return hosts > 1 ? RiskGraph::kCyclic : RiskGraph::kIndependent;
        case CommPattern::kPipeline:
        case CommPattern::kParameterServer:
            return RiskGraph::kCascade;
        case CommPattern::kNone:
            break;
    }
    return RiskGraph::kIndependent;
}

RiskModel::RiskModel(const ClusterGraph &graph, RiskConstants constants)
    : graph_(&graph), c_(constants) {}

RiskEstimate RiskModel::estimate(const JobDemand &demand, const Placement &p,
                                 const ClusterState *state) const {
    RiskEstimate out;
    if (p.empty())
        return out;
    // A learned model rates the placement as a whole, in place of every domain below:
    // slurmctld's hot path does not walk them too.
    if (state && state->learned) {
        const RiskGraph kind = risk_graph(demand, static_cast<int>(p.hosts.size()));
        out.graph = graph_name(kind);
        out.per_day = state->learned->model->rate_per_day(
            placement_risk_inputs(*graph_, kind, p.hosts, state->learned->history));
        return out;
    }
    ExecutionGraph g = build(demand, p);
    out.graph = graph_name(g.kind);
    const std::size_t n = p.hosts.size();
    auto recent = [&](int host) { return state ? state->failures[host] : 0.0; };
    auto consider = [&](double rate, const std::vector<bool> &failed, const std::string &name) {
        if (rate <= 0)
            return;
        double share = impact(g, failed);
        out.per_day += rate * share;
        if (share > out.worst_impact) {
            out.worst_impact = share;
            out.worst_domain = name;
        }
    };
    std::vector<bool> failed(n, false);
    std::map<int, std::vector<std::size_t>> by_leaf;
    for (std::size_t u = 0; u < n; ++u) {
        int h = p.hosts[u];
        failed[u] = true;
        consider(c_.host_per_day * (1 + c_.recent_factor * recent(h)), failed, graph_->host_name(h));
        failed[u] = false;
        by_leaf[graph_->host_leaf(h)].push_back(u);
    }
    // A leaf switch or an NVLink domain takes all the job's hosts in it at once; its rate
    // grows with the recent failures of all its hosts.
    auto together = [&](double base, const std::vector<int> &members,
                        const std::vector<std::size_t> &units, const std::string &name) {
        double history = 0;
        for (int h : members)
            history += recent(h);
        for (auto u : units)
            failed[u] = true;
        consider(base * (1 + c_.recent_factor * history), failed, name);
        for (auto u : units)
            failed[u] = false;
    };
    std::map<int, std::vector<std::size_t>> by_domain;
    for (std::size_t u = 0; u < n; ++u)
        if (int d = graph_->nvlink_domain(p.hosts[u]); d >= 0)
            by_domain[d].push_back(u);
    for (const auto &[d, units] : by_domain) {
        bool degraded = state && state->domain_degraded(d);
        together(c_.domain_per_day * (degraded ? c_.degraded_factor : 1.0), graph_->domain_hosts(d),
                 units, graph_->fabric().nvlink_domains[d].name);
    }
    for (const auto &[leaf, units] : by_leaf)
        if (leaf >= 0)
            together(c_.switch_per_day, graph_->hosts_at_leaf(leaf), units,
                     graph_->fabric().nodes[leaf].name);
    return out;
}

}  // namespace slurm_ai
