// The one way the suite's C++ is entered from C (slurmctld, slurmstepd, the SPANK and
// select adapters): every extern "C" function runs its body through guarded(), so that no
// exception ever unwinds into Slurm. A failure becomes a return code and a message in the
// caller's buffer, which the adapter logs once, with the job id, and then falls back to
// Slurm's own behaviour.
#pragma once

#include <cstddef>
#include <cstring>
#include <exception>
#include <string_view>

namespace slurm_ai {

inline void copy_message(char *buf, std::size_t len, std::string_view msg) noexcept {
    if (!buf || len == 0)
        return;
    std::size_t n = msg.size() < len - 1 ? msg.size() : len - 1;
    std::memcpy(buf, msg.data(), n);
    buf[n] = '\0';
}

// Runs body() (which returns an int status) and maps any exception to -1 with its text.
template <class F>
int guarded(char *err, std::size_t errlen, F &&body) noexcept {
    try {
        return body();
    } catch (const std::exception &e) {
        copy_message(err, errlen, e.what());
    } catch (...) {
        copy_message(err, errlen, "unknown exception");
    }
    return -1;
}

}  // namespace slurm_ai
