#include "slurm_ai/slurm/resize_ops.hpp"

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "slurm_ai/common/hostlist.hpp"
#include "slurm_ai/elastic/elastic_plan.hpp"
#include "slurm_ai/job/job_options.hpp"
#include "slurm_ai/job/job_record.hpp"
#include "slurm_ai/placement/placement.hpp"
#include "slurm_ai/slurm/site_config.hpp"
#include "slurm_ai/topology/cluster_files.hpp"
#include "slurm_ai/topology/topology_file.hpp"

namespace slurm_ai::elastic {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::vector<std::string> expand(const std::string &hostlist) {
    if (hostlist.empty())
        return {};
    auto names = expand_hostlist(hostlist, "nodes");
    if (!names)
        throw std::runtime_error("slurmctld gave a node list we cannot read: " +
                                 names.error().message());
    return std::move(names).value();
}

JobInfo must_find(SlurmClient &slurm, std::uint32_t job_id) {
    auto job = slurm.job(job_id);
    if (!job)
        throw std::runtime_error("job " + std::to_string(job_id) + " is unknown to slurmctld");
    return *job;
}

// Host indexes of the fabric for node names; empty when one is not a host of it.
std::vector<int> hosts_of(const ClusterModel &m, const std::vector<std::string> &names) {
    std::vector<int> hosts;
    if (!m.graph)
        return hosts;
    for (const auto &n : names) {
        int h = m.graph->host_index(n);
        if (h < 0)
            return {};
        hosts.push_back(h);
    }
    return hosts;
}

}  // namespace

std::unique_ptr<ClusterModel> load_cluster_model(SlurmClient &slurm, const std::string &conf_path) {
    auto m = std::make_unique<ClusterModel>();
    m->config = load_site_config(conf_path);
    auto graph = load_cluster(m->config.cluster);
    if (graph) {
        m->graph.emplace(std::move(graph).value());
        m->engine = std::make_unique<PlacementEngine>(*m->graph, m->config.cost, m->config.risk,
                                                      m->config.engine);
    } else {
        m->warning = "no topology (" + graph.error().message() + "): Slurm's node order is used";
    }
    m->state_dir = slurm.state_save_location();
    m->view_dir = resolve_view_dir(m->config.elastic.view_dir, m->state_dir);
    return m;
}

namespace {

// The record the select plugin wrote at the job's start (a bad option stays unset); an
// empty start without one.
JobStart recorded_start(const ClusterModel &m, const JobInfo &job) {
    JobStart out;
    if (m.state_dir.empty())
        return out;
    if (auto rec = read_job_record(m.state_dir, job.job_id)) {
        out.hints = std::move(rec->hints);
        out.elastic_start_max = rec->elastic_start_max;
        out.recorded = true;
    }
    return out;
}

// Inside the job its options are in the environment (sbatch's copy of the job's SPANK
// environment, SpankEnvCopy::kCommand), which decode_job_options reads as it is; none
// elsewhere, or when the environment holds none.
std::optional<JobHints> hints_in_environment(const JobInfo &job) {
    const char *self = getenv("SLURM_JOB_ID");
    if (!self || std::to_string(job.job_id) != self)
        return std::nullopt;
    std::vector<const char *> env;
    for (char **e = environ; e && *e; ++e)
        env.push_back(*e);
    auto read = decode_job_options(env);
    if (read.hints.empty())
        return std::nullopt;
    return std::move(read.hints);
}

}  // namespace

JobStart job_start(const ClusterModel &m, const JobInfo &job) {
    JobStart out = recorded_start(m, job);
    if (auto env = hints_in_environment(job))
        out.hints = std::move(*env);
    return out;
}

JobHints job_hints(const ClusterModel &m, const JobInfo &job) {
    // Inside the job the environment is enough: the record is not read.
    if (auto env = hints_in_environment(job))
        return std::move(*env);
    return recorded_start(m, job).hints;
}

namespace {

// The caller's copy of a job's options, else the one read here; `read` keeps what was read.
const JobHints &hints_for(const ClusterModel &m, const JobInfo &job, const JobHints *known,
                          std::optional<JobHints> &read) {
    if (known)
        return *known;
    return read.emplace(job_hints(m, job));
}

}  // namespace

JobDemand job_demand(const JobInfo &job, const JobHints &hints) {
    const std::uint32_t n = std::max<std::uint32_t>(job.num_nodes, 1);
    const std::uint32_t gpus = job.gpus_per_node();
    return make_demand(JobRequest{n, n, gpus, gpus * n, std::max<std::uint32_t>(n, 1)}, hints);
}

ResizeView current_view(const ClusterModel &m, const JobInfo &job, const std::string &reason) {
    ResizeView v;
    v.job_id = job.job_id;
    v.nodes = expand(job.nodes);
    if (auto hosts = hosts_of(m, v.nodes); !hosts.empty()) {
        v.nodes.clear();
        for (int h : ring_host_order(*m.graph, hosts))
            v.nodes.push_back(m.graph->host_name(h));
    }
    v.procs_per_node = job.gpus_per_node()       ? job.gpus_per_node()
                       : job.ntasks_per_node > 0 ? job.ntasks_per_node
                                                 : 1;
    v.updated_at = time(nullptr);
    v.reason = reason;
    return v;
}

Notice notify_job(SlurmClient &slurm, const ClusterModel &m, std::uint32_t job_id,
                  const std::string &reason, int signal, const JobHints *known) {
    Notice n;
    JobInfo job = must_find(slurm, job_id);
    try {
        n.view = publish_view(job_view_dir(m.view_dir, job_id), current_view(m, job, reason),
                              static_cast<long>(job.user_id));
    } catch (const std::exception &e) {
        n.view_error = e.what();
        n.view = current_view(m, job, reason);
    }
    if (!job.running())
        return n;
    if (signal == 0) {
        std::optional<JobHints> read;
        const JobHints &hints = hints_for(m, job, known, read);
        signal = hints.elastic ? hints.elastic->signal : 0;
    }
    n.signal = signal;
    slurm.signal(job_id, signal ? signal : SIGCONT, job.batch);
    return n;
}

ShrinkResult shrink_job(SlurmClient &slurm, const ClusterModel &m, std::uint32_t job_id,
                        std::uint32_t count, const std::vector<std::string> &named, bool force,
                        const std::string &reason, int signal, const JobHints *known) {
    JobInfo job = must_find(slurm, job_id);
    if (!job.running())
        throw std::runtime_error("job " + std::to_string(job_id) + " is " + job.state +
                                 ", not running: only a running job can shrink");
    const auto nodes = expand(job.nodes);
    std::optional<JobHints> read;
    const JobHints &hints = hints_for(m, job, known, read);
    ShrinkResult r;
    if (!named.empty()) {
        for (const auto &n : named) {
            if (std::find(nodes.begin(), nodes.end(), n) == nodes.end())
                throw std::runtime_error("--nodes: " + n + " is not a node of job " +
                                         std::to_string(job_id) + " (" + job.nodes + ")");
            if (n == job.batch_host)
                throw std::runtime_error("--nodes: " + n + " runs the batch script of job " +
                                         std::to_string(job_id) + "; Slurm cannot release it");
            if (std::find(r.released.begin(), r.released.end(), n) == r.released.end())
                r.released.push_back(n);
        }
    } else {
        if (count == 0)
            throw std::runtime_error("nothing to release: give --by N (N >= 1) or --nodes");
        if (count >= nodes.size())
            throw std::runtime_error("job " + std::to_string(job_id) + " has " +
                                     std::to_string(nodes.size()) + " node(s): cannot release " +
                                     std::to_string(count));
        auto hosts = hosts_of(m, nodes);
        if (!hosts.empty() && m.engine) {
            std::vector<int> keep;
            if (int b = m.graph->host_index(job.batch_host); b >= 0)
                keep.push_back(b);
            auto choice = plan_shrink(*m.engine, job_demand(job, hints), hosts,
                                      static_cast<int>(count), keep);
            if (choice.hosts.empty())
                throw std::runtime_error(choice.reason);
            for (int h : choice.hosts)
                r.released.push_back(m.graph->host_name(h));
            r.comm_before_s = choice.comm_before_s;
            r.comm_after_s = choice.comm_after_s;
        } else {
            // Without a topology: Slurm's own choice, the last nodes but the batch host.
            for (auto it = nodes.rbegin(); it != nodes.rend() && r.released.size() < count; ++it)
                if (*it != job.batch_host)
                    r.released.push_back(*it);
        }
    }
    const std::size_t after = nodes.size() - r.released.size();
    if (after == 0)
        throw std::runtime_error("job " + std::to_string(job_id) + " would keep no node");
    if (hints.elastic && after < hints.elastic->min_nodes && !force)
        throw std::runtime_error("job " + std::to_string(job_id) + " would keep " +
                                 std::to_string(after) +
                                 " node(s), below its --ai-elastic MIN of " +
                                 std::to_string(hints.elastic->min_nodes) + " (--force allows it)");
    std::vector<std::string> keep;
    for (const auto &n : nodes)
        if (std::find(r.released.begin(), r.released.end(), n) == r.released.end())
            keep.push_back(n);
    r.nodes = compress_hostlist(keep);
    // Slurm 24.11 takes a list equal, as text, to the one the job was submitted with (-w)
    // for "no change": that one goes in its long form, the same nodes.
    std::string list = r.nodes;
    if (list == job.req_nodes) {
        list.clear();
        for (const auto &n : keep)
            list += (list.empty() ? "" : ",") + n;
    }
    slurm.set_node_list(job_id, list);
    r.notice = notify_job(slurm, m, job_id, reason, signal, &hints);
    return r;
}

std::vector<JobInfo> expansions_of(const std::vector<JobInfo> &jobs, std::uint32_t job_id) {
    std::vector<JobInfo> out;
    for (const auto &j : jobs)
        if (expanded_job_of(j.name) == job_id && (j.pending() || j.running()))
            out.push_back(j);
    return out;
}

GrowOp start_grow(SlurmClient &slurm, const ClusterModel &m, std::uint32_t job_id,
                  std::uint32_t add, std::int64_t now, std::uint32_t timeout_s, bool force,
                  const std::string &reason, const JobHints *known) {
    if (const char *why = SlurmClient::grow_unsupported())
        throw std::runtime_error("job " + std::to_string(job_id) + " cannot grow here: " + why);
    JobInfo job = must_find(slurm, job_id);
    if (!job.running())
        throw std::runtime_error("job " + std::to_string(job_id) + " is " + job.state +
                                 ", not running: only a running job can grow");
    if (add == 0)
        throw std::runtime_error("nothing to add: give --by N with N >= 1");
    std::optional<JobHints> read;
    const JobHints &hints = hints_for(m, job, known, read);
    if (hints.elastic && job.num_nodes + add > hints.elastic->max_nodes && !force)
        throw std::runtime_error("job " + std::to_string(job_id) + " would have " +
                                 std::to_string(job.num_nodes + add) +
                                 " nodes, above its --ai-elastic MAX of " +
                                 std::to_string(hints.elastic->max_nodes) + " (--force allows it)");
    auto under_way = expansions_of(slurm.jobs(), job_id);
    if (!under_way.empty())
        throw std::runtime_error("a grow of job " + std::to_string(job_id) +
                                 " is under way (expansion job " +
                                 std::to_string(under_way.front().job_id) + ")");
    GrowOp op;
    op.job_id = job_id;
    op.add = add;
    op.nodes_before = job.num_nodes;
    op.deadline = now + timeout_s;
    op.reason = reason;
    op.expansion_id = slurm.allocate_expansion(job, add, expansion_job_name(job_id),
                                               expansion_comment(op.deadline));
    return op;
}

GrowStep advance_grow(SlurmClient &slurm, const GrowOp &op, std::int64_t now) {
    using S = GrowStep::Status;
    auto job = slurm.job(op.job_id);
    auto exp = slurm.job(op.expansion_id);
    const bool grown = job && job->running() && job->num_nodes >= op.nodes_before + op.add;
    if (!exp || exp->ended()) {
        // Either the merge went through (the expansion job ends with it) or it was lost.
        if (grown)
            return {S::kMerged, "job " + std::to_string(op.job_id) + " now has " + job->nodes};
        return {S::kFailed,
                "expansion job " + std::to_string(op.expansion_id) + " ended before it was merged"};
    }
    if (!job || !job->running()) {
        slurm.cancel(op.expansion_id);
        return {S::kFailed, "job " + std::to_string(op.job_id) + " no longer runs"};
    }
    if (exp->pending()) {
        if (now < op.deadline)
            return {S::kWaiting, "expansion job " + std::to_string(op.expansion_id) + " waits (" +
                                     exp->reason + ")"};
        slurm.cancel(op.expansion_id);
        return {S::kFailed, "expansion job " + std::to_string(op.expansion_id) +
                                " did not start within the grow timeout (" + exp->reason +
                                "); cancelled"};
    }
    if (!exp->running())
        return {S::kWaiting,
                "expansion job " + std::to_string(op.expansion_id) + " is " + exp->state};
    try {
        slurm.set_node_count(op.expansion_id, 0);
    } catch (const SlurmError &e) {
        // The reply may be lost in a restart after the merge happened: look again.
        auto again = slurm.job(op.job_id);
        if (again && again->num_nodes >= op.nodes_before + op.add)
            return {S::kMerged, "job " + std::to_string(op.job_id) + " now has " + again->nodes};
        slurm.cancel(op.expansion_id);
        return {S::kFailed, std::string("the merge failed: ") + e.what() + "; expansion job " +
                                std::to_string(op.expansion_id) + " cancelled"};
    }
    auto after = slurm.job(op.job_id);
    return {S::kMerged, "job " + std::to_string(op.job_id) + " now has " +
                            (after ? after->nodes : std::string("?"))};
}

}  // namespace slurm_ai::elastic
