// Runs a program without a shell and with a time limit, its output captured. Two uses:
// the Slurm commands whose actions must reach slurmctld's log as an admin's command would
// (ai-recover's requeue and updates; every question to slurmctld goes through SlurmClient,
// and no Slurm command's output is parsed), and Graphviz's dot, whose picture ai-topo draw
// writes as it writes every output file (file_io.hpp).
#pragma once

#include <string>
#include <vector>

namespace slurm_ai {

struct CommandResult {
    int status = -1;       // exit status; -1 when it could not run or ran out of time
    int spawn_error = 0;   // posix_spawnp's error when the program could not be started
    std::string out, err;  // err then says why, with argv[0]
};

// Runs argv[0] (looked up in PATH) with the rest as arguments; kills it after timeout_s.
CommandResult run_command(const std::vector<std::string> &argv, double timeout_s = 30);

// "scontrol requeue 12": argv joined by blanks, for messages.
std::string command_line(const std::vector<std::string> &argv);

}  // namespace slurm_ai
