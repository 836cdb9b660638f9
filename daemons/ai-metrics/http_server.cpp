#include "http_server.hpp"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>

#include "slurm_ai/common/unique_fd.hpp"

namespace slurm_ai::metrics_daemon {
namespace {

constexpr std::size_t kMaxRequest = 16 * 1024;
constexpr int kClientTimeoutS = 5;

int bind_listen(const std::string &listen) {
    const auto colon = listen.rfind(':');
    if (colon == std::string::npos)
        throw std::runtime_error("--listen " + listen + ": expected HOST:PORT or :PORT");
    std::string host = listen.substr(0, colon);
    if (host.size() > 1 && host.front() == '[' && host.back() == ']')
        host = host.substr(1, host.size() - 2);
    const std::string port = listen.substr(colon + 1);
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    addrinfo *found = nullptr;
    if (int rc = getaddrinfo(host.empty() ? nullptr : host.c_str(), port.c_str(), &hints, &found))
        throw std::runtime_error("--listen " + listen + ": " + gai_strerror(rc));
    std::string why = "no address";
    for (addrinfo *a = found; a; a = a->ai_next) {
        int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0)
            continue;
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 16) == 0) {
            freeaddrinfo(found);
            return fd;
        }
        why = std::strerror(errno);
        ::close(fd);
    }
    freeaddrinfo(found);
    throw std::runtime_error("--listen " + listen + ": " + why);
}

// The request line and the Accept header; nullopt-like empty method on a bad request.
Request parse_request(std::string_view text) {
    Request r;
    const auto line_end = text.find("\r\n");
    std::string_view line = text.substr(0, line_end);
    const auto sp1 = line.find(' '), sp2 = line.rfind(' ');
    if (sp1 == std::string_view::npos || sp2 == sp1 || !line.substr(sp2 + 1).starts_with("HTTP/"))
        return r;
    r.method = std::string(line.substr(0, sp1));
    std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
    r.path = std::string(target.substr(0, target.find('?')));
    for (std::size_t at = line_end; at != std::string_view::npos && at + 2 < text.size();) {
        const auto next = text.find("\r\n", at + 2);
        std::string_view header = text.substr(at + 2, next - at - 2);
        const auto colon = header.find(':');
        if (colon != std::string_view::npos) {
            std::string name(header.substr(0, colon));
            for (auto &c : name)
                c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            if (name == "accept") {
                auto value = header.substr(colon + 1);
                while (!value.empty() && value.front() == ' ')
                    value.remove_prefix(1);
                r.accept = std::string(value);
            }
        }
        at = next;
    }
    return r;
}

std::string_view status_text(int status) {
    switch (status) {
        case 200: return "OK";
        case 400: return "Bad Request";
        case 404: return "Not Found";
        case 405: return "Method Not Allowed";
        default: return "Internal Server Error";
    }
}

void send_all(int fd, std::string_view data) {
    while (!data.empty()) {
        const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
        if (n <= 0)
            return;  // the client went away or stalled: nothing to do about it
        data.remove_prefix(static_cast<std::size_t>(n));
    }
}

void answer(int fd, const std::function<Response(const Request &)> &handle) {
    timeval tv{kClientTimeoutS, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    std::string text;
    char buf[4096];
    while (text.find("\r\n\r\n") == std::string::npos && text.size() < kMaxRequest) {
        const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0)
            return;
        text.append(buf, static_cast<std::size_t>(n));
    }
    Request req = parse_request(text);
    Response resp;
    if (req.method.empty())
        resp = {400, "text/plain; charset=utf-8", "bad request\n"};
    else if (req.method != "GET" && req.method != "HEAD")
        resp = {405, "text/plain; charset=utf-8", "only GET and HEAD\n"};
    else
        try {
            resp = handle(req);
        } catch (const std::exception &e) {  // one bad request never stops the daemon
            resp = {500, "text/plain; charset=utf-8", std::string("error: ") + e.what() + "\n"};
        }
    std::string head = fmt::format(
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nCache-Control: no-store\r\n"
        "Connection: close\r\n\r\n",
        resp.status, status_text(resp.status), resp.content_type, resp.body.size());
    send_all(fd, head);
    if (req.method != "HEAD")
        send_all(fd, resp.body);
}

}  // namespace

void serve(const std::string &listen, const std::function<Response(const Request &)> &handle,
           const std::atomic<bool> &stop) {
    UniqueFd server(bind_listen(listen));
    while (!stop) {
        pollfd p{server.get(), POLLIN, 0};
        if (::poll(&p, 1, 500) <= 0)
            continue;  // a timeout, or a signal: look at `stop` again
        UniqueFd client(::accept4(server.get(), nullptr, nullptr, SOCK_CLOEXEC));
        if (client.get() >= 0)
            answer(client.get(), handle);
    }
}

}  // namespace slurm_ai::metrics_daemon
