#include "slurm_ai/lease/datagram.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace slurm_ai::lease {

std::string Peer::text() const {
    char host[INET6_ADDRSTRLEN] = "?";
    int port = 0;
    if (addr.ss_family == AF_INET) {
        const auto *a = reinterpret_cast<const sockaddr_in *>(&addr);
        inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
        port = ntohs(a->sin_port);
    } else if (addr.ss_family == AF_INET6) {
        const auto *a = reinterpret_cast<const sockaddr_in6 *>(&addr);
        inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
        port = ntohs(a->sin6_port);
    }
    return std::string(host) + ":" + std::to_string(port);
}

Datagram Datagram::listen(std::uint16_t port) {
    // IPv6 with IPv4 mapped in where the kernel has IPv6, else IPv4 alone.
    if (UniqueFd v6(::socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0)); v6.get() >= 0) {
        int off = 0;
        ::setsockopt(v6.get(), IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
        sockaddr_in6 a{};
        a.sin6_family = AF_INET6;
        a.sin6_addr = in6addr_any;
        a.sin6_port = htons(port);
        if (::bind(v6.get(), reinterpret_cast<sockaddr *>(&a), sizeof a) == 0)
            return Datagram(std::move(v6));
    }  // a refused IPv6 socket is closed before the IPv4 one is made
    UniqueFd v4(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    a.sin_port = htons(port);
    if (v4.get() < 0 || ::bind(v4.get(), reinterpret_cast<sockaddr *>(&a), sizeof a) != 0) {
        const std::string why = std::strerror(errno);
        throw std::runtime_error("LeasePort=" + std::to_string(port) +
                                 ": cannot listen for leases (" + why + ")");
    }
    return Datagram(std::move(v4));
}

Datagram Datagram::toward(const std::string &host, std::uint16_t port) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_DGRAM;
    addrinfo *found = nullptr;
    if (int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found))
        throw std::runtime_error("lease host '" + host + "': " + gai_strerror(rc));
    UniqueFd fd;
    for (addrinfo *a = found; a && fd.get() < 0; a = a->ai_next) {
        UniqueFd tried(::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol));
        if (tried.get() >= 0 && ::connect(tried.get(), a->ai_addr, a->ai_addrlen) == 0)
            fd = std::move(tried);
    }
    ::freeaddrinfo(found);
    if (fd.get() < 0)
        throw std::runtime_error("lease host '" + host + "': no address to send to");
    return Datagram(std::move(fd));
}

std::uint16_t Datagram::port() const {
    sockaddr_storage a{};
    socklen_t len = sizeof a;
    if (::getsockname(fd_.get(), reinterpret_cast<sockaddr *>(&a), &len) != 0)
        return 0;
    if (a.ss_family == AF_INET6)
        return ntohs(reinterpret_cast<const sockaddr_in6 *>(&a)->sin6_port);
    return ntohs(reinterpret_cast<const sockaddr_in *>(&a)->sin_port);
}

std::string Datagram::peer_address() const {
    Peer p;
    p.len = sizeof p.addr;
    if (::getpeername(fd_.get(), reinterpret_cast<sockaddr *>(&p.addr), &p.len) != 0)
        return {};
    const std::string text = p.text();
    return text.substr(0, text.rfind(':'));
}

bool Datagram::send(std::string_view message) {
    return ::send(fd_.get(), message.data(), message.size(), MSG_NOSIGNAL) ==
           static_cast<ssize_t>(message.size());
}

bool Datagram::send_to(std::string_view message, const Peer &to) {
    return ::sendto(fd_.get(), message.data(), message.size(), MSG_NOSIGNAL,
                    reinterpret_cast<const sockaddr *>(&to.addr),
                    to.len) == static_cast<ssize_t>(message.size());
}

std::optional<std::pair<std::string, Peer>> Datagram::receive(double timeout_s) {
    pollfd p{fd_.get(), POLLIN, 0};
    const int ms = static_cast<int>(std::ceil(std::max(0.0, timeout_s) * 1000));
    if (::poll(&p, 1, ms) != 1)
        return std::nullopt;
    char buf[8192];
    Peer from;
    from.len = sizeof from.addr;
    // A connected socket's send may have failed asynchronously (ECONNREFUSED): not a
    // message; the caller looks again.
    const ssize_t n = ::recvfrom(fd_.get(), buf, sizeof buf, 0,
                                 reinterpret_cast<sockaddr *>(&from.addr), &from.len);
    if (n < 0)
        return std::make_pair(std::string(), from);
    return std::make_pair(std::string(buf, static_cast<std::size_t>(n)), from);
}

}  // namespace slurm_ai::lease
