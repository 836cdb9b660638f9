// The suite's one client of slurmctld (ai-resize, ai-elasticd, ai-recover), through
// libslurm's C API: job, node, partition and step records, the expansion allocation, the
// updates that resize a job, signals. Every call that fails throws SlurmError with Slurm's
// own message; calls that fail because the controller is away (a restart) or busy for a
// moment are retried until `retry_s` has passed. Nothing here parses a command's text.
//
// run_command (slurm_ai/common/command.hpp) is for the few actions that must appear in slurmctld's log as
// an admin's command would (ai-recover's requeue and updates).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace slurm_ai {

struct SlurmError : std::runtime_error {
    // slurm_errno -1: not Slurm's error code but the suite's (a wait that ran out).
    explicit SlurmError(const std::string &what, int slurm_errno = -1)
        : std::runtime_error(what), code(slurm_errno) {}
    int code;
};

struct JobInfo {
    std::uint32_t job_id = 0;
    std::uint32_t user_id = 0;
    std::string name;
    std::string state;  // PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, ... (Slurm's names)
    // The state as scontrol shows it: a flag's name first (COMPLETING, CONFIGURING,
    // REQUEUED, ...), else `state`.
    std::string shown_state;
    std::string reason;        // why a pending job waits: Resources, Priority, Dependency, ...
    std::string shown_reason;  // the reason as scontrol shows it (BeginTime, NonZeroExitCode)
    bool completing = false;
    std::string nodes;     // hostlist
    std::string excluded;  // ExcNodeList, a hostlist
    std::uint32_t num_nodes = 0;
    std::uint32_t priority = 0;
    std::string partition, qos, account;
    std::string work_dir;       // where the job runs its script
    std::string req_nodes;      // the node list it was submitted with (-w), as typed
    std::string tres_per_node;  // e.g. "gres:gpu:4"
    std::uint64_t pn_min_memory = 0;
    std::uint32_t num_cpus = 0;
    std::uint16_t ntasks_per_node = 0;
    std::uint32_t time_limit = 0;  // minutes
    std::string batch_host;
    bool batch = false;
    bool requeue = false;  // the job may be requeued
    std::uint32_t restarts = 0;
    std::int64_t submit_time = 0, start_time = 0, end_time = 0;
    std::string comment;

    bool pending() const { return state == "PENDING"; }
    bool running() const { return state == "RUNNING" && !completing; }
    bool ended() const { return !pending() && state != "RUNNING" && state != "SUSPENDED"; }
    // GPUs per node from tres_per_node (gres_gpu_count); 0 without GPUs.
    std::uint32_t gpus_per_node() const;
};

struct NodeInfo {
    std::string name;
    bool idle = false;           // up, not drained, nothing allocated
    bool down = false;           // state DOWN
    bool drained = false;        // DRAIN set (draining or drained)
    std::string state;           // in one word: idle, mixed, allocated, down, drained, ...
    std::uint32_t gpus = 0;      // GPUs in its GRES
    std::uint32_t gpus_used = 0; // of those, allocated to jobs (nodes(true) only)
    std::string reason;          // why it is down or drained, "" when none
    std::int64_t reason_at = 0;  // when Slurm stamped the reason (epoch s); 0: unknown
    std::vector<std::string> partitions;
    std::string address;  // NodeAddr: where its slurmd listens
    std::uint16_t port = 0;  // and on which port
};

// Where slurmctld listens, and who runs it, from slurm.conf as libslurm read it (no RPC):
// what the lease's agents need when slurmctld may be unreachable.
struct ControllerAddress {
    std::string host;  // SlurmctldHost's address (its NodeAddr form where given)
    std::uint16_t port = 0;
    std::uint32_t slurm_user = 0;  // SlurmUser's uid
    std::string munge_socket;  // AuthInfo's socket=, the munged Slurm uses; "": munge's default
};

class SlurmClient {
  public:
    // Initialises libslurm (SLURM_CONF or the default slurm.conf). One per process, for
    // the process' life: libslurm 24.11 crashes initialised again after the destructor's
    // slurm_fini.
    explicit SlurmClient(int retry_s = 30);
    ~SlurmClient();
    SlurmClient(const SlurmClient &) = delete;
    SlurmClient &operator=(const SlurmClient &) = delete;

    std::vector<JobInfo> jobs();
    std::optional<JobInfo> job(std::uint32_t job_id);  // nullopt once slurmctld forgot it
    // with_gres_used: also each node's allocated GPUs (gpus_used, else 0), which costs
    // slurmctld more (its SHOW_DETAIL).
    std::vector<NodeInfo> nodes(bool with_gres_used = false);
    std::optional<NodeInfo> node(const std::string &name);  // nullopt: no such node
    std::vector<std::string> partition_nodes(const std::string &partition);
    // The job's running steps that span any of `nodes` ("12.0"), batch and extern steps
    // left out.
    std::vector<std::string> steps_on(std::uint32_t job_id, const std::vector<std::string> &nodes);
    // StateSaveLocation from slurm.conf as libslurm read it (no RPC): the one way every
    // daemon and tool of the suite finds it. The plugins read the same value from the
    // slurm_conf of the Slurm daemon that loaded them.
    std::string state_save_location();
    ControllerAddress controller();
    // $SLURM_CONF, or /etc/slurm/slurm.conf: the file libslurm reads.
    static std::string slurm_conf_path();
    // Whether this Slurm reads topology.yaml (25.05 and later), as built against.
    static bool reads_topology_yaml();

    // Why the Slurm this is built against cannot grow a running job, or nullptr. slurmctld
    // 25.11 and 26.05 check, when an expansion job is merged into its parent, whether
    // either asked hierarchical licenses, and read a null license list for a job that
    // asked none: slurmctld dies (job_mgr.c, _valid_license_job_expansion; seen on
    // 26.05.3, the same code in 25.11.7). Growing there would take the controller down.
    static const char *grow_unsupported();
    // An allocation of `add` nodes with --dependency=expand:<parent>, shaped like one
    // node of the parent (partition, QOS, account, GPUs, CPUs and memory per node), named
    // and commented so that whoever finds it knows whose it is and until when it may
    // wait. Returns its job id; it may be pending.
    std::uint32_t allocate_expansion(const JobInfo &parent, std::uint32_t add,
                                     const std::string &name, const std::string &comment);
    void set_node_count(std::uint32_t job_id, std::uint32_t nodes);  // NumNodes=
    void set_node_list(std::uint32_t job_id, const std::string &hostlist);
    // AdminComment: where the suite's tools say what they did to a job (SystemComment
    // belongs to slurmctld and the select plugin; clients cannot set it).
    void set_admin_comment(std::uint32_t job_id, const std::string &text);
    // batch_only: the batch shell alone (a batch job's script); else every step.
    void signal(std::uint32_t job_id, int signal, bool batch_only);
    void cancel(std::uint32_t job_id);

  private:
    template <class F>
    void with_retry(const char *what, std::uint32_t job_id, F &&call);
    // slurm_update_job of one job, with what `fill` sets on the update message.
    template <class F>
    void update_job(const char *what, std::uint32_t job_id, F &&fill);
    int retry_s_;
};

}  // namespace slurm_ai
