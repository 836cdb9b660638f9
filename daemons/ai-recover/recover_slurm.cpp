#include "recover_slurm.hpp"

#include <algorithm>

#include "slurm_ai/common/hostlist.hpp"
#include "slurm_ai/common/text_scan.hpp"

namespace slurm_ai::recover {
namespace {

std::vector<std::string> expanded(const std::string &hostlist, const char *what) {
    auto names = expand_hostlist(hostlist, what);
    return names ? std::move(names).value() : std::vector<std::string>{};
}

}  // namespace

checkpoint::JobView job_view(const JobInfo &job) {
    checkpoint::JobView v;
    v.job_id = job.job_id;
    v.user_id = job.user_id;
    v.state = job.shown_state;
    v.reason = job.shown_reason;
    v.nodes = expanded(job.nodes, "NodeList");
    v.excluded = expanded(job.excluded, "ExcNodeList");
    v.batch_host = job.batch_host;
    v.partition = job.partition;
    v.requeue = job.requeue;
    v.restarts = job.restarts;
    v.num_nodes = job.num_nodes;
    v.submit_time = job.submit_time;
    v.start_time = job.start_time;
    v.end_time = job.end_time;
    return v;
}

Slurm::Slurm() : client_(std::make_shared<SlurmClient>()) {}

CommandResult Slurm::must(const std::vector<std::string> &argv) const {
    auto r = run_command(argv);
    if (r.status != 0)
        throw SlurmError(command_line(argv) + ": " +
                         std::string(text::trim(r.err.empty() ? r.out : r.err)));
    return r;
}

std::vector<checkpoint::JobView> Slurm::jobs() const {
    std::vector<checkpoint::JobView> out;
    for (const auto &j : client_->jobs())
        out.push_back(job_view(j));
    return out;
}

std::optional<checkpoint::JobView> Slurm::job(std::uint32_t id) const {
    auto j = client_->job(id);
    if (!j)
        return std::nullopt;
    return job_view(*j);
}

NodeDown Slurm::node_down(const std::string &node) const {
    auto n = client_->node(node);
    if (!n)
        return {};
    return NodeDown{n->reason, n->reason_at, !n->down && !n->drained};
}

std::optional<NodeInfo> Slurm::node(const std::string &name) const {
    return client_->node(name);
}

std::optional<std::uint32_t> Slurm::job_user(std::uint32_t id) const {
    auto j = client_->job(id);
    return j ? std::optional(j->user_id) : std::nullopt;
}

ControllerAddress Slurm::controller() const {
    return client_->controller();
}

std::vector<std::string> Slurm::down_nodes() const {
    std::vector<std::string> out;
    for (const auto &n : client_->nodes())
        if (n.down)
            out.push_back(n.name);
    std::sort(out.begin(), out.end());
    return out;
}

std::vector<std::string> Slurm::partition_nodes(const std::string &partition) const {
    return client_->partition_nodes(partition);
}

std::string Slurm::state_save_location() const {
    return client_->state_save_location();
}

// The actions: as an admin would type them, so that slurmctld logs them as such.

void Slurm::signal_steps(std::uint32_t job, int signal) const {
    must({"scancel", "--signal=" + std::to_string(signal), std::to_string(job)});
}

void Slurm::requeue(std::uint32_t job) const {
    must({"scontrol", "requeue", std::to_string(job)});
}

void Slurm::update(std::uint32_t job, const std::vector<std::string> &settings) const {
    std::vector<std::string> argv{"scontrol", "update", "JobId=" + std::to_string(job)};
    argv.insert(argv.end(), settings.begin(), settings.end());
    must(argv);
}

std::vector<std::string> Slurm::steps_on(std::uint32_t job,
                                         const std::vector<std::string> &nodes) const {
    return client_->steps_on(job, nodes);
}

void Slurm::cancel_step(const std::string &step) const {
    must({"scancel", step});
}

void Slurm::set_node_state(const std::string &node, const char *state,
                           const std::string &reason) const {
    must({"scontrol", "update", "NodeName=" + node, std::string("State=") + state,
          "Reason=" + reason});
}

}  // namespace slurm_ai::recover
