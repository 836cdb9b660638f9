// How ai-recover talks to Slurm: every question through the suite's one client
// (slurm_ai::SlurmClient, libslurm); the actions an admin would type (scancel --signal,
// scontrol requeue and update, scancel STEP) as Slurm's own commands, so that slurmctld's
// log shows them as an admin's. No command's output is parsed.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "slurm_ai/checkpoint/checkpoint_recovery.hpp"
#include "slurm_ai/common/command.hpp"
#include "slurm_ai/slurm/slurm_client.hpp"

namespace slurm_ai::recover {

struct NodeDown {
    std::string reason;      // "Not responding", an admin's reason, ...
    std::int64_t since = 0;  // when Slurm stamped the reason (epoch s); 0: unknown
    bool back = false;       // neither DOWN nor drained: back in service when Slurm was asked
};

// A job as the recovery logic reads it, from the client's record.
checkpoint::JobView job_view(const JobInfo &job);

class Slurm {
  public:
    Slurm();

    std::vector<checkpoint::JobView> jobs() const;  // every job slurmctld knows
    std::optional<checkpoint::JobView> job(std::uint32_t id) const;
    NodeDown node_down(const std::string &node) const;
    std::optional<NodeInfo> node(const std::string &name) const;
    std::optional<std::uint32_t> job_user(std::uint32_t id) const;  // the job's uid
    ControllerAddress controller() const;
    std::vector<std::string> down_nodes() const;  // nodes in state DOWN now
    std::vector<std::string> partition_nodes(const std::string &partition) const;
    std::string state_save_location() const;

    // Each throws SlurmError with the command's message when it fails.
    void signal_steps(std::uint32_t job, int signal) const;  // scancel --signal
    void requeue(std::uint32_t job) const;                   // scontrol requeue
    void update(std::uint32_t job, const std::vector<std::string> &settings) const;
    // The job's running steps that spanned any of `nodes` ("12.0"), batch and extern steps
    // left out; and ending one of them (scancel STEP).
    std::vector<std::string> steps_on(std::uint32_t job,
                                      const std::vector<std::string> &nodes) const;
    void cancel_step(const std::string &step) const;
    // scontrol update NodeName=NODE State=DOWN|DRAIN Reason=REASON
    void set_node_state(const std::string &node, const char *state,
                        const std::string &reason) const;

  private:
    CommandResult must(const std::vector<std::string> &argv) const;
    std::shared_ptr<SlurmClient> client_;
};

}  // namespace slurm_ai::recover
