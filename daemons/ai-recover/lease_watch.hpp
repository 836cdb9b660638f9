// ai-recover's side of the leases (docs/checkpoint.md, "Leases"), a thread of `watch`: it
// takes every node's renewals on LeasePort, grants them, and when a node's lease lapses,
// or a node's agent reports a fatal GPU event, or a job's task reports a peer lost, it
// starts `ai-recover lease-down` for the node: a process of its own, which confirms the
// failure (slurmd's port; a health event is its own confirmation), sets the node DOWN
// and recovers its jobs at once. The thread itself never waits on Slurm, so grants go on
// while a recovery runs.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "slurm_ai/config/plugin_config.hpp"
#include "slurm_ai/lease/datagram.hpp"
#include "slurm_ai/lease/lease.hpp"
#include "slurm_ai/slurm/slurm_client.hpp"

namespace slurm_ai::recover {

class LeaseWatch {
  public:
    using Log = std::function<void(const std::string &)>;
    // `program`: how to start ai-recover with the options of this one (before the
    // lease-down subcommand). Throws std::runtime_error when LeasePort cannot be bound.
    // `controller`: SlurmUser (trusted besides root) and Slurm's munged. `book`: the file
    // that keeps the lease book across restarts (state_paths::lease_book), read here.
    LeaseWatch(LeaseConfig conf, ControllerAddress controller, std::vector<std::string> program,
               std::string book, Log log);
    // Until `stop` is set.
    void run(const std::atomic<bool> &stop);

  private:
    struct Child {
        std::string node;  // a lease or health event: the node taken over on success
        std::uint32_t job = 0;  // a task's report: its job
    };
    void on_message(const std::string &credential, const lease::Peer &from, double now);
    void on_report(const lease::Report &r, std::uint32_t uid, double now);
    bool repeated_health(const lease::Report &r, double now);
    void check_lapses(double now);
    void reap();
    bool busy(const std::string &node, std::uint32_t job) const;
    void spawn(std::vector<std::string> args, Child child);
    void restore_book();
    void save_book();
    bool trusted(std::uint32_t uid) const { return uid == 0 || uid == ctl_.slurm_user; }

    LeaseConfig conf_;
    ControllerAddress ctl_;
    std::vector<std::string> program_;
    Log log_;
    lease::Datagram socket_;
    lease::LeaseBook book_;
    std::string book_path_;
    bool save_failed_ = false;
    std::map<pid_t, Child> children_;
    std::size_t refused_ = 0;  // credentials refused since the last note in the log
    std::map<std::string, double> health_seen_;  // "node why" -> when first acted on
};

}  // namespace slurm_ai::recover
