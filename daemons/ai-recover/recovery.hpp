// ai-recover's actions: what happens when a node goes down (the strigger program), the
// periodic work of `watch` (time-limit checkpoint requests, keep=N, the nodes each run
// held) and the on-demand checkpoint request. The decisions themselves are
// slurm_ai::checkpoint::plan_recovery's; this file gathers facts and carries plans out.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "recover_slurm.hpp"

namespace slurm_ai::recover {

struct Options {
    std::string state_dir;        // Slurm's StateSaveLocation
    std::string log_path;         // ai-recover's own log (appended)
    double grace_s = 60;          // how long the survivors get to checkpoint
    double requeue_wait_s = 60;   // how long a requeue may take to settle
    double running_wait_s = 120;  // how long to wait for the job to run again
    double interval_s = 5;        // watch: seconds between looks
    bool release_begin = true;    // lift the start delay Slurm puts on requeued jobs
};

// `ai-recover lease-down`: what the lease watch starts when a node's lease lapsed or a
// failure was reported (lease_watch.hpp).
struct LeaseDown {
    std::vector<std::string> nodes;  // the suspects; empty with a job: its nodes but `from`
    std::string why;                 // the signal, for the node's reason
    bool probe = false;              // confirm first: slurmd on the node must not answer
    bool drain = false;              // then DRAIN too: out until an admin resumes it
    std::uint32_t job = 0;           // a task's report: its job, its sealer and its node
    std::uint32_t uid = 0;
    std::string from;
};

class Recovery {
  public:
    Recovery(Slurm slurm, Options options);

    // The strigger program: nodes went down. Returns 0, or 1 when an action failed.
    int node_down(const std::vector<std::string> &nodes);
    // Confirms the suspects, sets them DOWN with a reason naming the signal and recovers
    // their jobs. 0: a suspect is DOWN (now or already); 3: none confirmed; 1: failed.
    int lease_down(const LeaseDown &d);
    // Sends the job its checkpoint signal now. Returns 0, or 1 with a message.
    int checkpoint_now(std::uint32_t job_id);
    // Loops until `stop` is set. Besides its periodic work it reacts to nodes going DOWN
    // itself: slurmctld runs triggers only every 15 s, and the trigger stays the
    // guarantee (a failure both see is handled once).
    int watch(const std::atomic<bool> &stop);

    void log(const std::string &message) const;

  private:
    struct Job;
    struct Work;
    // A job with --ai-checkpoint, from the select plugin's record of it; nullopt otherwise.
    std::optional<Job> checkpoint_job(checkpoint::JobView view) const;
    std::vector<Job> checkpoint_jobs() const;
    std::vector<std::string> lost_nodes(const Job &job, const std::vector<std::string> &failed,
                                        std::int64_t failed_at,
                                        const std::set<std::string> &back) const;
    void ask_survivors(std::vector<Work> &work);
    void act(Work &w);
    void release_pending(std::uint32_t job_id, const std::string &excluded);
    void record_failure(const Work &w, const std::map<std::string, NodeDown> &down);
    void await_running(const Work &w, double failed_at, double deadline);
    void watch_once(double now);
    void react_to_down_nodes();
    std::vector<std::string> reported_suspects(const LeaseDown &d) const;

    Slurm slurm_;
    Options opt_;
    std::optional<std::set<std::string>> known_down_;  // watch: DOWN at the last look
};

}  // namespace slurm_ai::recover
