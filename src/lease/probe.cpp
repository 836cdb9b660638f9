#include "slurm_ai/lease/probe.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>

#include "slurm_ai/common/unique_fd.hpp"

namespace slurm_ai::lease {
namespace {

// One address: a non-blocking connect, waited for until `deadline`.
Reach connect_one(const addrinfo &a, std::chrono::steady_clock::time_point deadline) {
    const UniqueFd fd(
        ::socket(a.ai_family, a.ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a.ai_protocol));
    if (fd.get() < 0)
        return Reach::kSilent;
    int rc = ::connect(fd.get(), a.ai_addr, a.ai_addrlen);
    int err = rc == 0 ? 0 : errno;
    if (err == EINPROGRESS) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        pollfd p{fd.get(), POLLOUT, 0};
        if (left.count() > 0 && ::poll(&p, 1, static_cast<int>(left.count())) == 1) {
            socklen_t len = sizeof err;
            ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len);
        } else {
            err = ETIMEDOUT;
        }
    }
    if (err == 0)
        return Reach::kAnswers;
    return err == ECONNREFUSED ? Reach::kRefuses : Reach::kSilent;
}

}  // namespace

const char *to_string(Reach r) {
    switch (r) {
        case Reach::kAnswers: return "answers";
        case Reach::kRefuses: return "refuses";
        case Reach::kSilent: return "silent";
    }
    return "?";
}

Reach probe_tcp(const std::string &host, std::uint16_t port, double timeout_s) {
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                              std::chrono::duration<double>(timeout_s));
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo *found = nullptr;
    if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0)
        return Reach::kSilent;
    Reach best = Reach::kSilent;
    for (addrinfo *a = found; a && best != Reach::kAnswers; a = a->ai_next)
        if (Reach r = connect_one(*a, deadline); r != Reach::kSilent)
            best = r;
    ::freeaddrinfo(found);
    return best;
}

}  // namespace slurm_ai::lease
