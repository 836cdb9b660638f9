// Whether a host answers, by a TCP connection to a daemon's port: ai-recover's second,
// independent look at a node whose lease lapsed (slurmd's port), and the agent's look at
// the controller before it fences (slurmctld's port).
#pragma once

#include <cstdint>
#include <string>

namespace slurm_ai::lease {

enum class Reach {
    kAnswers,  // the connection was accepted: the host and the daemon are up
    kRefuses,  // the host answered that nothing listens there: the host is up
    kSilent,   // no answer within the time, no route, or a name that does not resolve
};
const char *to_string(Reach r);

Reach probe_tcp(const std::string &host, std::uint16_t port, double timeout_s);

}  // namespace slurm_ai::lease
