// The node's side of the lease (docs/checkpoint.md, "Leases"): ai-lease renews the node's
// lease with ai-recover every LeasePeriod, naming the --ai-checkpoint jobs it runs, and
// fences them when the node is cut off from the controller:
//   - no grant for LeaseFence and slurmctld's host silent: every process of those jobs on
//     the node is frozen (SIGSTOP), before ai-recover can count the lease lapsed
//     (LeaseLapse) and start the jobs elsewhere;
//   - a grant again: frozen jobs go on (SIGCONT), unless the grant revokes them (ai-recover
//     took them over): those, and any of their processes still here, are killed;
//   - frozen for LeaseKill: killed.
// It also reads the admin's HealthEventFile and reports fatal GPU Xids.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "slurm_ai/config/plugin_config.hpp"
#include "slurm_ai/lease/datagram.hpp"
#include "slurm_ai/lease/health.hpp"
#include "slurm_ai/lease/lease.hpp"
#include "slurm_ai/lease/node_tasks.hpp"

namespace slurm_ai::lease_agent {

struct AgentOptions {
    std::string node;  // this node's name in Slurm
    std::string proc_root = "/proc";
    std::string controller_host;  // where slurmctld and ai-recover listen
    std::uint16_t controller_port = 0;  // slurmctld's, probed before fencing
    std::uint32_t slurm_user = 0;
    std::string munge_socket;  // Slurm's munged (AuthInfo socket=); "": the default
    LeaseConfig lease;
};

class Agent {
  public:
    using Log = std::function<void(const std::string &)>;
    Agent(AgentOptions options, Log log);
    void run(const std::atomic<bool> &stop);

  private:
    void renew();
    void on_datagram(const std::string &credential, double now);
    void on_grant(const lease::Grant &g);
    void fence(double now);
    void read_health();
    void send_sealed(const std::string &text);
    // A socket toward the controller, made again when its name may point elsewhere now
    // (a controller that came back with another address).
    bool connect();

    AgentOptions opt_;
    Log log_;
    std::optional<lease::Datagram> socket_;
    // The controller's address as last resolved, numeric: the fence's probe must not wait
    // on a name server the cut took away too.
    std::string controller_address_;
    std::string connect_error_;  // the last reason connect() failed, logged once
    lease::LeaseHolder holder_;
    // The node's job processes, read from /proc once per renewal: what fencing, thawing
    // and killing act on.
    std::vector<lease::NodeTask> tasks_;
    std::vector<std::uint32_t> jobs_;     // their checkpointing jobs, sorted
    std::vector<std::uint32_t> frozen_;   // fenced jobs, sorted
    bool killed_ = false;                 // frozen_ killed already
    double last_probe_ = -1e9;
    bool noted_unfenced_ = false;
    bool noted_seal_error_ = false;
    std::optional<lease::FileTail> health_;
    // Health reports go out again with the next renewals (a datagram can be lost);
    // ai-recover acts once on the copies.
    struct Resend {
        std::string text;
        int left = 0;
    };
    std::vector<Resend> resend_;
};

}  // namespace slurm_ai::lease_agent
