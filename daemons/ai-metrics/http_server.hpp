// The few lines of HTTP/1.1 ai-metrics speaks: GET (and HEAD) of a path, one request per
// connection, one connection at a time. A scraper or a browser is all that calls it; a
// client that sends nothing, or too much, is cut off after a few seconds or 16 KiB and
// never stops the daemon, nor does a handler that throws (the client gets a 500 with the
// message).
#pragma once

#include <atomic>
#include <functional>
#include <string>

namespace slurm_ai::metrics_daemon {

struct Request {
    std::string method, path, accept;  // path without the query
};
struct Response {
    int status = 200;
    std::string content_type = "text/plain; charset=utf-8";
    std::string body;
};

// Binds "HOST:PORT" (HOST may be empty or 0.0.0.0 for every address, a name or an IP)
// and serves until `stop`. Throws std::runtime_error naming the address when it cannot
// bind.
void serve(const std::string &listen, const std::function<Response(const Request &)> &handle,
           const std::atomic<bool> &stop);

}  // namespace slurm_ai::metrics_daemon
