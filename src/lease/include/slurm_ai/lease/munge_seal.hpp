// Lease messages as munge credentials: sealed by the sender's munged, opened by the
// receiver's, which says who sealed it (uid and gid, checked by the caller against root
// and SlurmUser) and refuses a credential replayed, expired or sealed with another key. A
// user on a node can seal messages too, but as themselves, which the check refuses.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <sys/types.h>

#include "slurm_ai/common/input_error.hpp"

namespace slurm_ai::lease {

// The credential of `payload`, from the munged at `socket` (empty: munge's default socket;
// Slurm's AuthInfo=socket=PATH names another, ControllerAddress::munge_socket); throws
// std::runtime_error with munge's reason (munged not running, no socket).
std::string seal(std::string_view payload, const std::string &socket);

struct Opened {
    std::string payload;
    uid_t uid = 0;
    gid_t gid = 0;
};
// The payload and who sealed it; an error naming munge's reason for a credential it
// refuses (a replay, expired, another key, not a credential).
Parsed<Opened> open_sealed(std::string_view credential, const std::string &socket);

}  // namespace slurm_ai::lease
