#include "slurm_ai/slurm/pending_explain.hpp"

#include <algorithm>

#include "slurm_ai/common/hostlist.hpp"
#include "slurm_ai/elastic/elastic_plan.hpp"

namespace slurm_ai {
namespace {

// The job's partitions ("a,b" for a job submitted to several).
bool in_partition(const NodeInfo &n, const std::string &partitions) {
    if (partitions.empty())
        return true;
    std::size_t start = 0;
    for (std::size_t i = 0; i <= partitions.size(); ++i)
        if (i == partitions.size() || partitions[i] == ',') {
            const std::string p = partitions.substr(start, i - start);
            if (std::find(n.partitions.begin(), n.partitions.end(), p) != n.partitions.end())
                return true;
            start = i + 1;
        }
    return false;
}

// What is free for the job: its partitions' nodes that are up and not drained, with
// Slurm's count of free GPUs on each (GPU indexes are not known here: the lowest ones).
ClusterState free_state(const ClusterGraph &g, const JobInfo &job,
                        const std::vector<NodeInfo> &nodes) {
    ClusterState s(g);
    std::fill(s.usable.begin(), s.usable.end(), 0);
    for (const auto &n : nodes) {
        const int h = g.host_index(n.name);
        if (h < 0)
            continue;
        const auto size = static_cast<std::size_t>(h);
        const int gpus = static_cast<int>(g.node(h).gpus.size());
        const int free =
            std::min<int>(gpus, static_cast<int>(n.gpus) - static_cast<int>(n.gpus_used));
        s.free_gpus[size] = all_gpus(std::max(free, 0));
        s.down[size] = n.down || n.drained;
        s.usable[size] = !n.down && !n.drained && in_partition(n, job.partition) ? 1 : 0;
    }
    return s;
}

}  // namespace

PendingExplanation explain_pending(const elastic::ClusterModel &m, const JobInfo &job,
                                   const std::vector<JobInfo> &jobs,
                                   const std::vector<NodeInfo> &nodes) {
    PendingExplanation out;
    if (!m.state_dir.empty())
        if (auto note = read_pending_note(m.state_dir, job.job_id))
            out.note = std::move(note).value();
    if (!m.graph || !m.engine) {
        out.why_not = m.warning.empty() ? "no topology loaded" : m.warning;
        return out;
    }
    const ClusterGraph &g = *m.graph;
    const JobHints hints = out.note ? out.note->hints : JobHints{};
    WaitRequest req{elastic::job_demand(job, hints), 0, 0, demand_at_size};
    if (hints.elastic) {
        req.elastic_min = hints.elastic->min_nodes;
        req.elastic_max = hints.elastic->max_nodes;
    }
    std::vector<RunningJobEnd> running;
    for (const auto &j : jobs) {
        if (j.state != "RUNNING")
            continue;
        RunningJobEnd r{j.job_id, {}, j.end_time};
        if (auto names = expand_hostlist(j.nodes, "nodes"))
            for (const auto &name : *names)
                if (int h = g.host_index(name); h >= 0)
                    r.hosts.push_back(h);
        running.push_back(std::move(r));
    }
    out.wait = explain_wait(*m.engine, req, free_state(g, job, nodes), running);
    return out;
}

}  // namespace slurm_ai
