// The lease's transport: one UDP datagram per message (a munge credential, well under
// 1 KiB). A lost datagram costs a renewal, which the next one replaces; nothing waits for
// one.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "slurm_ai/common/unique_fd.hpp"

namespace slurm_ai::lease {

struct Peer {
    sockaddr_storage addr{};
    socklen_t len = 0;
    std::string text() const;  // "10.0.0.3:40112"
};

class Datagram {
  public:
    // ai-recover's socket: every address of the host, on `port`. Throws std::runtime_error
    // naming the port when it cannot be bound (taken, not allowed).
    static Datagram listen(std::uint16_t port);
    // An agent's or a reporter's socket, sending to host:port and receiving only from
    // there. Throws std::runtime_error naming the host when it does not resolve.
    static Datagram toward(const std::string &host, std::uint16_t port);

    Datagram(Datagram &&) noexcept = default;
    Datagram &operator=(Datagram &&) = delete;

    std::uint16_t port() const;  // the local port (listen(0) lets the kernel pick one)
    // toward(): the address it sends to, numeric ("10.0.0.3"): what a caller probes when
    // names may no longer resolve (a node cut off from the network, its DNS with it).
    std::string peer_address() const;

    // False when the kernel refused it (no route: the node is cut off).
    bool send(std::string_view message);
    bool send_to(std::string_view message, const Peer &to);
    // The next datagram within timeout_s, and who sent it; nullopt at the timeout.
    std::optional<std::pair<std::string, Peer>> receive(double timeout_s);

  private:
    explicit Datagram(UniqueFd fd) : fd_(std::move(fd)) {}
    UniqueFd fd_;
};

}  // namespace slurm_ai::lease
