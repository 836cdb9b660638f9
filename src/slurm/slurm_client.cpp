#include "slurm_ai/slurm/slurm_client.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <thread>

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>

#include "slurm_ai/common/gres_text.hpp"
#include "slurm_ai/common/hostlist.hpp"

// libslurm's names of states and reasons, as scontrol prints them: exported by
// libslurmfull, not declared in <slurm/slurm.h>.
extern "C" char *slurm_job_state_string(std::uint32_t state);
// The reason's name got "state" in it in 24.11 (job_state_reason_string).
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(24, 11, 0)
extern "C" char *slurm_job_state_reason_string(int reason);
#define slurm_job_reason_string slurm_job_state_reason_string
#else
extern "C" char *slurm_job_reason_string(int reason);
#endif
// libslurmfull's slurm.conf as slurm_init() read it (src/common/read_config.h).
extern "C" slurm_conf_t *slurm_conf_lock(void);
extern "C" void slurm_conf_unlock(void);

namespace slurm_ai {
namespace {

using SteadyClock = std::chrono::steady_clock;

// libslurm names a job by a slurm_step_id_t (the job's id, no step) where it took the job
// id before: from 25.11 in slurm_get_job_steps, a job descriptor and an allocation's
// response, from 26.05 also in slurm_load_job and slurm_kill_job. These take and give the
// job id on every release.
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 11, 0)
slurm_step_id_t whole_job(std::uint32_t job_id) {
    slurm_step_id_t id = SLURM_STEP_ID_INITIALIZER;
    id.job_id = job_id;
    return id;
}
int load_job_steps(std::uint32_t job_id, job_step_info_response_msg_t **msg,
                   std::uint16_t flags) {
    slurm_step_id_t id = whole_job(job_id);
    return slurm_get_job_steps(&id, msg, flags);
}
void set_job_id(job_desc_msg_t &d, std::uint32_t job_id) {
    d.step_id = whole_job(job_id);
}
std::uint32_t allocated_job_id(const resource_allocation_response_msg_t &r) {
    return r.step_id.job_id;
}
#else
int load_job_steps(std::uint32_t job_id, job_step_info_response_msg_t **msg,
                   std::uint16_t flags) {
    return slurm_get_job_steps(0, job_id, NO_VAL, msg, flags);
}
void set_job_id(job_desc_msg_t &d, std::uint32_t job_id) {
    d.job_id = job_id;
}
std::uint32_t allocated_job_id(const resource_allocation_response_msg_t &r) {
    return r.job_id;
}
#endif
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(26, 5, 0)
int load_job(job_info_msg_t **msg, std::uint32_t job_id, std::uint16_t flags) {
    return slurm_load_job(msg, whole_job(job_id), flags);
}
int kill_job(std::uint32_t job_id, std::uint16_t sig, std::uint16_t flags) {
    return slurm_kill_job(whole_job(job_id), sig, flags);
}
#else
int load_job(job_info_msg_t **msg, std::uint32_t job_id, std::uint16_t flags) {
    return slurm_load_job(msg, job_id, flags);
}
int kill_job(std::uint32_t job_id, std::uint16_t sig, std::uint16_t flags) {
    return slurm_kill_job(job_id, sig, flags);
}
#endif

std::string str(const char *s) {
    return s ? s : "";
}

std::string state_name(std::uint32_t state) {
    static const char *const kNames[] = {"PENDING",   "RUNNING",   "SUSPENDED", "COMPLETED",
                                         "CANCELLED", "FAILED",    "TIMEOUT",   "NODE_FAIL",
                                         "PREEMPTED", "BOOT_FAIL", "DEADLINE",  "OUT_OF_MEMORY"};
    std::uint32_t base = state & JOB_STATE_BASE;
    return base < std::size(kNames) ? kNames[base] : "UNKNOWN";
}

// The few pending reasons the suite acts on; the rest are "Other".
std::string reason_name(std::uint16_t reason) {
    switch (reason) {
        case WAIT_NO_REASON:
            return "None";
        case WAIT_PRIORITY:
            return "Priority";
        case WAIT_DEPENDENCY:
            return "Dependency";
        case WAIT_RESOURCES:
            return "Resources";
        case WAIT_NODE_NOT_AVAIL:
            return "ReqNodeNotAvail";
        case WAIT_HELD:
        case WAIT_HELD_USER:
            return "Held";
        default:
            return "Other";
    }
}

// Errors of a controller that is away or busy for a moment (a restart, a database index
// being set after a resize): worth another try.
bool transient(int e) {
    return (e >= SLURM_COMMUNICATIONS_CONNECTION_ERROR &&
            e <= SLURM_COMMUNICATIONS_SHUTDOWN_ERROR) ||
           e == SLURM_COMMUNICATIONS_MISSING_SOCKET_ERROR ||
           (e >= SLURMCTLD_COMMUNICATIONS_CONNECTION_ERROR &&
            e <= SLURMCTLD_COMMUNICATIONS_SHUTDOWN_ERROR) ||
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(24, 11, 0)
           (e >= SLURM_PROTOCOL_SOCKET_IMPL_TIMEOUT &&
            e <= SLURM_PROTOCOL_SOCKET_ZERO_BYTES_SENT) ||
#else
           (e >= SLURM_PROTOCOL_SOCKET_IMPL_ZERO_RECV_LENGTH &&
            e <= SLURM_PROTOCOL_SOCKET_ZERO_BYTES_SENT) ||
           e == ESLURM_JOB_SETTING_DB_INX ||
#endif
           e == ECONNREFUSED || e == ETIMEDOUT || e == EAGAIN || e == ECONNRESET;
}

JobInfo to_job(const slurm_job_info_t &j) {
    JobInfo o;
    o.job_id = j.job_id;
    o.user_id = j.user_id;
    o.name = str(j.name);
    o.state = state_name(j.job_state);
    o.shown_state = str(slurm_job_state_string(j.job_state));
    o.completing = (j.job_state & JOB_COMPLETING) != 0;
    o.reason = reason_name(j.state_reason);
    o.shown_reason = str(slurm_job_reason_string(j.state_reason));
    o.nodes = str(j.nodes);
    o.excluded = str(j.exc_nodes);
    o.num_nodes = j.num_nodes;
    o.priority = j.priority;
    o.partition = str(j.partition);
    o.work_dir = str(j.work_dir);
    o.req_nodes = str(j.req_nodes);
    o.qos = str(j.qos);
    o.account = str(j.account);
    o.tres_per_node = str(j.tres_per_node);
    o.pn_min_memory = j.pn_min_memory;
    o.num_cpus = j.num_cpus;
    o.ntasks_per_node = j.ntasks_per_node;
    o.time_limit = j.time_limit;
    o.batch_host = str(j.batch_host);
    o.batch = j.batch_flag != 0;
    o.requeue = j.requeue != 0;
    o.restarts = j.restart_cnt;
    o.submit_time = j.submit_time;
    o.start_time = j.start_time;
    o.end_time = j.end_time;
    o.comment = str(j.comment);
    return o;
}

// NODE_STATE_*'s base states in the words sinfo prints.
std::string base_state_word(std::uint32_t base) {
    switch (base) {
        case NODE_STATE_DOWN: return "down";
        case NODE_STATE_IDLE: return "idle";
        case NODE_STATE_ALLOCATED: return "allocated";
        case NODE_STATE_MIXED: return "mixed";
        case NODE_STATE_FUTURE: return "future";
        default: return "unknown";
    }
}

NodeInfo to_node(const node_info_t &n) {
    NodeInfo o;
    o.name = str(n.name);
    std::uint32_t base = n.node_state & NODE_STATE_BASE;
    o.idle = base == NODE_STATE_IDLE &&
             !(n.node_state & (NODE_STATE_DRAIN | NODE_STATE_COMPLETING | NODE_STATE_NO_RESPOND |
                               NODE_STATE_RES | NODE_STATE_FAIL));
    o.down = base == NODE_STATE_DOWN;
    o.drained = n.node_state & NODE_STATE_DRAIN;
    o.state = o.drained && !o.down ? "drained" : base_state_word(base);
    o.gpus = gres_gpu_count(str(n.gres));
    o.gpus_used = gres_gpu_count(str(n.gres_used));
    o.reason = str(n.reason);
    o.reason_at = n.reason_time;
    o.address = str(n.node_addr);
    if (o.address.empty())
        o.address = o.name;
    o.port = n.port;
    return o;
}

[[noreturn]] void fail(const std::string &what, int code) {
    throw SlurmError(what + ": " + slurm_strerror(code), code);
}

}  // namespace

std::uint32_t JobInfo::gpus_per_node() const {
    return gres_gpu_count(tres_per_node);
}

SlurmClient::SlurmClient(int retry_s) : retry_s_(retry_s) {
    slurm_init(nullptr);
}

SlurmClient::~SlurmClient() {
    slurm_fini();
}

template <class F>
void SlurmClient::with_retry(const char *what, std::uint32_t job_id, F &&call) {
    const auto deadline = SteadyClock::now() + std::chrono::seconds(retry_s_);
    for (;;) {
        if (call() == SLURM_SUCCESS)
            return;
        int e = errno;  // libslurm sets it (slurm_get_errno() is gone from 24.11)
        if (!transient(e) || SteadyClock::now() >= deadline)
            fail(std::string(what) + (job_id ? " of job " + std::to_string(job_id) : ""), e);
        std::this_thread::sleep_for(std::chrono::seconds(1));
    }
}

std::vector<JobInfo> SlurmClient::jobs() {
    job_info_msg_t *msg = nullptr;
    with_retry("reading the jobs", 0,
               [&] { return slurm_load_jobs(0, &msg, SHOW_ALL | SHOW_DETAIL); });
    std::vector<JobInfo> out;
    for (std::uint32_t i = 0; i < msg->record_count; ++i)
        out.push_back(to_job(msg->job_array[i]));
    slurm_free_job_info_msg(msg);
    return out;
}

std::optional<JobInfo> SlurmClient::job(std::uint32_t job_id) {
    job_info_msg_t *msg = nullptr;
    try {
        with_retry("reading", job_id, [&] { return load_job(&msg, job_id, SHOW_DETAIL); });
    } catch (const SlurmError &e) {
        if (e.code == ESLURM_INVALID_JOB_ID)
            return std::nullopt;
        throw;
    }
    std::optional<JobInfo> out;
    if (msg->record_count > 0)
        out = to_job(msg->job_array[0]);
    slurm_free_job_info_msg(msg);
    return out;
}

std::vector<NodeInfo> SlurmClient::nodes(bool with_gres_used) {
    // The nodes' own records leave their partitions empty: they come from the partitions.
    std::map<std::string, std::vector<std::string>> partitions_of;
    partition_info_msg_t *parts = nullptr;
    with_retry("reading the partitions", 0,
               [&] { return slurm_load_partitions(0, &parts, SHOW_ALL); });
    for (std::uint32_t i = 0; i < parts->record_count; ++i) {
        const partition_info_t &p = parts->partition_array[i];
        auto names = expand_hostlist(str(p.nodes), "partition nodes");
        if (p.name && names)
            for (const auto &n : names.value())
                partitions_of[n].push_back(p.name);
    }
    slurm_free_partition_info_msg(parts);
    node_info_msg_t *msg = nullptr;
    // GresUsed only with SHOW_DETAIL, which slurmctld says is slow to gather.
    const uint16_t flags = with_gres_used ? SHOW_ALL | SHOW_DETAIL : SHOW_ALL;
    with_retry("reading the nodes", 0, [&] { return slurm_load_node(0, &msg, flags); });
    std::vector<NodeInfo> out;
    for (std::uint32_t i = 0; i < msg->record_count; ++i) {
        const node_info_t &n = msg->node_array[i];
        if (!n.name)
            continue;
        NodeInfo o = to_node(n);
        o.partitions = partitions_of[o.name];
        out.push_back(std::move(o));
    }
    slurm_free_node_info_msg(msg);
    return out;
}

std::optional<NodeInfo> SlurmClient::node(const std::string &name) {
    node_info_msg_t *msg = nullptr;
    std::string n = name;
    try {
        with_retry("reading node", 0,
                   [&] { return slurm_load_node_single(&msg, n.data(), SHOW_ALL); });
    } catch (const SlurmError &e) {
        if (e.code == ESLURM_INVALID_NODE_NAME)
            return std::nullopt;
        throw;
    }
    std::optional<NodeInfo> out;
    for (std::uint32_t i = 0; msg && i < msg->record_count && !out; ++i)
        if (msg->node_array[i].name && name == msg->node_array[i].name)
            out = to_node(msg->node_array[i]);
    slurm_free_node_info_msg(msg);
    return out;
}

std::vector<std::string> SlurmClient::partition_nodes(const std::string &partition) {
    if (partition.empty())
        return {};
    partition_info_msg_t *parts = nullptr;
    with_retry("reading the partitions", 0,
               [&] { return slurm_load_partitions(0, &parts, SHOW_ALL); });
    std::vector<std::string> out;
    for (std::uint32_t i = 0; i < parts->record_count; ++i) {
        const partition_info_t &p = parts->partition_array[i];
        if (p.name && partition == p.name)
            if (auto names = expand_hostlist(str(p.nodes), "partition nodes"))
                out = std::move(names).value();
    }
    slurm_free_partition_info_msg(parts);
    return out;
}

std::vector<std::string> SlurmClient::steps_on(std::uint32_t job_id,
                                               const std::vector<std::string> &nodes) {
    job_step_info_response_msg_t *msg = nullptr;
    try {
        with_retry("reading the steps", job_id,
                   [&] { return load_job_steps(job_id, &msg, SHOW_ALL); });
    } catch (const SlurmError &e) {
        if (e.code == ESLURM_INVALID_JOB_ID)
            return {};
        throw;
    }
    std::vector<std::string> out;
    for (std::uint32_t i = 0; msg && i < msg->job_step_count; ++i) {
        const job_step_info_t &s = msg->job_steps[i];
        if (s.step_id.step_id == SLURM_BATCH_SCRIPT || s.step_id.step_id == SLURM_EXTERN_CONT)
            continue;
        auto names = expand_hostlist(str(s.nodes), "step nodes");
        if (!names)
            continue;
        if (std::any_of(names->begin(), names->end(), [&](const std::string &n) {
                return std::find(nodes.begin(), nodes.end(), n) != nodes.end();
            }))
            out.push_back(std::to_string(s.step_id.job_id) + "." +
                          std::to_string(s.step_id.step_id));
    }
    slurm_free_job_step_info_response_msg(msg);
    return out;
}

bool SlurmClient::reads_topology_yaml() {
    return SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 5, 0);
}

std::string SlurmClient::state_save_location() {
    // slurm_init() read slurm.conf with Slurm's own parser (Include lines and all).
    std::string out = str(slurm_conf_lock()->state_save_location);
    slurm_conf_unlock();
    return out;
}

ControllerAddress SlurmClient::controller() {
    const slurm_conf_t *conf = slurm_conf_lock();
    ControllerAddress out;
    if (conf->control_cnt > 0)
        out.host = str(conf->control_addr && conf->control_addr[0] ? conf->control_addr[0]
                                                                    : conf->control_machine[0]);
    out.port = static_cast<std::uint16_t>(conf->slurmctld_port);
    out.slurm_user = conf->slurm_user_id;
    // AuthInfo is "key=value,key=value": the socket, where one is given.
    const std::string info = str(conf->authinfo);
    for (std::size_t at = 0; at <= info.size();) {
        const std::size_t end = std::min(info.find(',', at), info.size());
        if (info.compare(at, 7, "socket=") == 0)
            out.munge_socket = info.substr(at + 7, end - at - 7);
        at = end + 1;
    }
    slurm_conf_unlock();
    return out;
}

std::string SlurmClient::slurm_conf_path() {
    const char *env = getenv("SLURM_CONF");
    return env && *env ? env : "/etc/slurm/slurm.conf";
}

std::uint32_t SlurmClient::allocate_expansion(const JobInfo &parent, std::uint32_t add,
                                              const std::string &name, const std::string &comment) {
    job_desc_msg_t d;
    slurm_init_job_desc_msg(&d);
    std::string dependency = "expand:" + std::to_string(parent.job_id);
    std::string gres =
        parent.gpus_per_node() ? "gres:gpu:" + std::to_string(parent.gpus_per_node()) : "";
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    d.name = const_cast<char *>(name.c_str());
    d.comment = const_cast<char *>(comment.c_str());
    d.dependency = dependency.data();
    d.partition = parent.partition.empty() ? nullptr : const_cast<char *>(parent.partition.c_str());
    d.qos = parent.qos.empty() ? nullptr : const_cast<char *>(parent.qos.c_str());
    d.account = parent.account.empty() ? nullptr : const_cast<char *>(parent.account.c_str());
    d.tres_per_node = gres.empty() ? nullptr : gres.data();
    d.min_nodes = d.max_nodes = add;
    if (parent.num_nodes > 0 && parent.num_cpus >= parent.num_nodes)
        d.min_cpus = parent.num_cpus / parent.num_nodes * add;
    if (parent.pn_min_memory)
        d.pn_min_memory = parent.pn_min_memory;
    if (parent.time_limit)
        d.time_limit = parent.time_limit;
    d.user_id = getuid();
    d.group_id = getgid();
    d.alloc_node = host;
    // Slurm 24.11 refuses a job without one; the parent's, as the expansion is part of it.
    std::string work_dir = parent.work_dir.empty() ? "/" : parent.work_dir;
    d.work_dir = work_dir.data();
    resource_allocation_response_msg_t *resp = nullptr;
    with_retry("allocating an expansion", parent.job_id,
               [&] { return slurm_allocate_resources(&d, &resp); });
    std::uint32_t id = resp ? allocated_job_id(*resp) : 0;
    slurm_free_resource_allocation_response_msg(resp);
    if (!id)
        throw SlurmError(
            "slurmctld gave the expansion of job " + std::to_string(parent.job_id) + " no job id",
            SLURM_ERROR);
    return id;
}

const char *SlurmClient::grow_unsupported() {
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 11, 0)
    return "slurmctld 25.11 and 26.05 crash merging an expansion job into a job without "
           "licenses (job_mgr.c, _valid_license_job_expansion), so the suite does not grow "
           "jobs on them; shrinking works";
#else
    return nullptr;
#endif
}

template <class F>
void SlurmClient::update_job(const char *what, std::uint32_t job_id, F &&fill) {
    job_desc_msg_t d;
    slurm_init_job_desc_msg(&d);
    set_job_id(d, job_id);
    fill(d);
    with_retry(what, job_id, [&] { return slurm_update_job(&d); });
}

void SlurmClient::set_node_count(std::uint32_t job_id, std::uint32_t nodes) {
    update_job("setting the node count", job_id, [&](job_desc_msg_t &d) { d.min_nodes = nodes; });
}

void SlurmClient::set_node_list(std::uint32_t job_id, const std::string &hostlist) {
    std::string nodes = hostlist;
    update_job("setting the node list", job_id,
               [&](job_desc_msg_t &d) { d.req_nodes = nodes.data(); });
}

void SlurmClient::set_admin_comment(std::uint32_t job_id, const std::string &text) {
    std::string t = text;
    update_job("setting the admin comment", job_id,
               [&](job_desc_msg_t &d) { d.admin_comment = t.data(); });
}

void SlurmClient::signal(std::uint32_t job_id, int sig, bool batch_only) {
    std::string id = std::to_string(job_id);
    with_retry("signalling", job_id, [&] {
        return slurm_kill_job2(id.c_str(), static_cast<std::uint16_t>(sig),
                               batch_only ? KILL_JOB_BATCH : 0, nullptr);
    });
}

void SlurmClient::cancel(std::uint32_t job_id) {
    try {
        with_retry("cancelling", job_id, [&] { return kill_job(job_id, SIGKILL, 0); });
    } catch (const SlurmError &e) {
        if (e.code != ESLURM_ALREADY_DONE && e.code != ESLURM_INVALID_JOB_ID)
            throw;
    }
}

}  // namespace slurm_ai
