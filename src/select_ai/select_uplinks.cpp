// The uplink load of running jobs, as the engine sees it when it places the next one: each
// job's traffic keeps the leaf uplinks it crosses busy for CostModel::uplink_use seconds
// per step, and over its step (its communication plus its computation: --ai-comm compute=,
// else CommShare of the step) that is the share of those uplinks it takes from others.
// The same rule as the simulator's contention (docs/evaluation.md), without the fixed
// point: the plugin sees each job's share as it is alone.
#include <algorithm>
#include <charconv>
#include <exception>
#include <sstream>

#include "select_service_loaded.hpp"
#include "slurm_ai/placement/placement.hpp"

namespace slurm_ai {
namespace {

// Shares above this leave the cost model nothing to divide by.
constexpr double kMaxLoad = 0.95;

// "n1:0,1 n2:2,3" (the GPUs Slurm gave a job, per node) as hosts and GPU indexes.
bool parse_gpus(const ClusterGraph &graph, const std::string &text, Placement &p) {
    const auto parsed = parse_gpu_list(text);
    if (!parsed)
        return false;
    for (auto [name, gpus] : *parsed) {
        const int host = graph.host_index(name);
        if (host < 0)
            return false;
        // Slurm's GPU indexes come from gres.conf; a node whose topology is unknown (or
        // lists fewer GPUs) is one host rank to the cost model, as when it was placed.
        const auto known = graph.node(host).gpus.size();
        if (std::any_of(gpus.begin(), gpus.end(),
                        [&](int v) { return static_cast<std::size_t>(v) >= known; }))
            gpus.clear();
        p.hosts.push_back(host);
        p.gpus.push_back(std::move(gpus));
    }
    return true;
}

}  // namespace

void SelectService::note_running(std::uint32_t job_id, const std::string &nodes,
                                 const std::string &gpus, const JobOptions &options) {
    uplink_shares_.erase(job_id);
    const Loaded &l = *loaded_;
    try {
        Placement p;
        if (!gpus.empty()) {
            if (!parse_gpus(l.graph, gpus, p))
                return;
        } else if (auto hosts = l.graph.parse_hosts(nodes, "nodes")) {
            p.hosts = std::move(hosts).value();
            p.gpus.assign(p.hosts.size(), {});
        }
        if (p.hosts.size() < 2)
            return;  // nothing leaves one host
        // Ranks as the SPANK plugin numbers them.
        Placement ordered;
        for (int h : ring_host_order(l.graph, p.hosts)) {
            const auto at = std::find(p.hosts.begin(), p.hosts.end(), h) - p.hosts.begin();
            ordered.hosts.push_back(h);
            ordered.gpus.push_back(p.gpus[static_cast<std::size_t>(at)]);
        }
        std::uint32_t total = 0, per = 0;
        bool even = true;
        for (const auto &g : ordered.gpus) {
            total += static_cast<std::uint32_t>(g.size());
            even = even && (per == 0 || g.size() == per);
            per = static_cast<std::uint32_t>(g.size());
        }
        const auto n = static_cast<std::uint32_t>(ordered.hosts.size());
        SelectJob job{job_id, n, n, even ? per : 0, total, std::max(total, n), 0, {}};
        std::string why;
        auto demand = demand_of(job, options, &why);
        if (!demand)
            return;
        const CostModel &cost = l.engine->cost_model();
        double comm = 0;
        const auto uses = cost.uplink_use(*demand, ordered, &comm);
        if (uses.empty())
            return;
        const double compute = demand->comm.compute_ms
                                   ? demand->comm.compute_ms / 1e3 / std::max(total, n)
                                   : comm * (1 - l.config.comm_share) / l.config.comm_share;
        const double step = comm + compute;
        if (step <= 0)
            return;
        auto &shares = uplink_shares_[job_id];
        for (const auto &u : uses)
            shares.emplace_back(u.switch_node, u.busy_s / step);
    } catch (const std::exception &) {
        // An estimate of load, never worth failing a job's record for.
        uplink_shares_.erase(job_id);
    }
}

void SelectService::add_uplink_load(ClusterState &state) const {
    for (const auto &[job, shares] : uplink_shares_)
        for (const auto &[sw, share] : shares)
            if (sw >= 0 && static_cast<std::size_t>(sw) < state.uplink_load.size())
                state.uplink_load[sw] = std::min(state.uplink_load[sw] + share, kMaxLoad);
}

}  // namespace slurm_ai

