// How ai-recover talks to Slurm: through its own commands (scontrol, scancel), run
// without a shell and with a time limit, so that what the tool does is what an admin
// would type and shows up in slurmctld's log as such.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "slurm_ai/checkpoint_recovery.hpp"

namespace slurm_ai::recover {

struct CommandResult {
    int status = -1;  // exit status; -1 when it could not run or ran out of time
    std::string out, err;
};

// Runs argv[0] (looked up in PATH) with the rest as arguments; kills it after timeout_s.
CommandResult run_command(const std::vector<std::string> &argv, double timeout_s = 30);

struct SlurmError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct NodeDown {
    std::string reason;      // "Not responding", an admin's reason, ...
    std::int64_t since = 0;  // when Slurm stamped the reason (epoch s); 0: unknown
};

class Slurm {
  public:
    // Every job slurmctld knows (`scontrol -o show job`). Lines it cannot read are skipped.
    std::vector<checkpoint::JobView> jobs() const;
    std::optional<checkpoint::JobView> job(std::uint32_t id) const;
    NodeDown node_down(const std::string &node) const;
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

  private:
    CommandResult must(const std::vector<std::string> &argv) const;
};

}  // namespace slurm_ai::recover
