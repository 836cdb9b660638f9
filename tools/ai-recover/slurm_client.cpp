#include "slurm_client.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <ctime>

#include "slurm_ai/hostlist.hpp"
#include "slurm_ai/text_scan.hpp"

extern char **environ;

namespace slurm_ai::recover {
namespace {

std::string joined(const std::vector<std::string> &argv) {
    std::string s;
    for (const auto &a : argv)
        s += (s.empty() ? "" : " ") + a;
    return s;
}

// "[slurm@2026-11-22T13:05:02]" at the end of a node's Reason, as local time.
std::int64_t reason_stamp(const std::string &line) {
    auto at = line.find(" Reason=");
    if (at == std::string::npos)
        return 0;
    auto open = line.find('@', line.find(" [", at));
    if (open == std::string::npos)
        return 0;
    std::tm tm{};
    if (!strptime(line.c_str() + open + 1, "%Y-%m-%dT%H:%M:%S", &tm))
        return 0;
    tm.tm_isdst = -1;
    return static_cast<std::int64_t>(std::mktime(&tm));
}

}  // namespace

CommandResult run_command(const std::vector<std::string> &argv, double timeout_s) {
    CommandResult r;
    int out_pipe[2], err_pipe[2];
    if (pipe2(out_pipe, O_CLOEXEC) != 0)
        return r;
    if (pipe2(err_pipe, O_CLOEXEC) != 0) {
        close(out_pipe[0]);
        close(out_pipe[1]);
        return r;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, out_pipe[1], 1);
    posix_spawn_file_actions_adddup2(&fa, err_pipe[1], 2);
    std::vector<char *> args;
    for (const auto &a : argv)
        args.push_back(const_cast<char *>(a.c_str()));
    args.push_back(nullptr);
    pid_t pid = -1;
    int rc = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    close(out_pipe[1]);
    close(err_pipe[1]);
    if (rc != 0) {
        r.err = argv[0] + ": " + std::strerror(rc);
        close(out_pipe[0]);
        close(err_pipe[0]);
        return r;
    }
    auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
    std::string *sinks[2] = {&r.out, &r.err};
    bool timed_out = false;
    for (int open_fds = 2; open_fds > 0;) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            timed_out = true;
            kill(pid, SIGKILL);
            break;
        }
        if (poll(fds, 2, static_cast<int>(left.count())) < 0 && errno != EINTR)
            break;
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            char buf[4096];
            ssize_t n = read(fds[i].fd, buf, sizeof buf);
            if (n > 0) {
                sinks[i]->append(buf, static_cast<std::size_t>(n));
            } else if (n == 0 || errno != EINTR) {
                close(fds[i].fd);
                fds[i].fd = -1;
                --open_fds;
            }
        }
    }
    for (auto &f : fds)
        if (f.fd >= 0)
            close(f.fd);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (timed_out)
        r.err += joined(argv) + ": no answer within " + std::to_string(int(timeout_s)) + " s";
    else if (WIFEXITED(status))
        r.status = WEXITSTATUS(status);
    return r;
}

CommandResult Slurm::must(const std::vector<std::string> &argv) const {
    auto r = run_command(argv);
    if (r.status != 0)
        throw SlurmError(joined(argv) + ": " +
                         std::string(text::trim(r.err.empty() ? r.out : r.err)));
    return r;
}

std::vector<checkpoint::JobView> Slurm::jobs() const {
    auto r = run_command({"scontrol", "-o", "show", "job"});
    if (r.status != 0) {
        // An empty queue is not an error.
        if (r.err.find("No jobs") != std::string::npos ||
            r.out.find("No jobs") != std::string::npos)
            return {};
        throw SlurmError("scontrol -o show job: " + std::string(text::trim(r.err)));
    }
    std::vector<checkpoint::JobView> out;
    text::LineReader lines(r.out);
    for (std::string_view line; lines.next(line);)
        if (auto j = checkpoint::parse_job_line(line))
            out.push_back(std::move(j).value());
    return out;
}

std::optional<checkpoint::JobView> Slurm::job(std::uint32_t id) const {
    auto r = run_command({"scontrol", "-o", "show", "job", std::to_string(id)});
    if (r.status != 0)
        return std::nullopt;
    auto j = checkpoint::parse_job_line(text::trim(r.out));
    if (!j)
        return std::nullopt;
    return std::move(j).value();
}

NodeDown Slurm::node_down(const std::string &node) const {
    auto r = run_command({"scontrol", "-o", "show", "node", node});
    if (r.status != 0)
        return {};
    return NodeDown{checkpoint::node_reason(r.out), reason_stamp(r.out)};
}

std::vector<std::string> Slurm::down_nodes() const {
    auto r = must({"sinfo", "-h", "-N", "-t", "down", "-o", "%N"});
    std::vector<std::string> out;
    text::LineReader lines(r.out);
    for (std::string_view line; lines.next(line);)
        if (auto n = text::trim(line); !n.empty())
            out.emplace_back(n);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

std::vector<std::string> Slurm::partition_nodes(const std::string &partition) const {
    if (partition.empty())
        return {};
    auto r = run_command({"scontrol", "-o", "show", "partition", partition});
    auto at = r.out.find(" Nodes=");
    if (r.status != 0 || at == std::string::npos)
        return {};
    auto end = r.out.find(' ', at + 7);
    auto names = expand_hostlist(
        std::string_view(r.out).substr(at + 7, end == std::string::npos ? end : end - at - 7),
        "Nodes");
    return names ? std::move(names).value() : std::vector<std::string>{};
}

std::string Slurm::state_save_location() const {
    auto r = must({"scontrol", "show", "config"});
    text::LineReader lines(r.out);
    for (std::string_view line; lines.next(line);) {
        auto t = text::trim(line);
        if (!t.starts_with("StateSaveLocation"))
            continue;
        auto eq = t.find('=');
        if (eq != std::string_view::npos)
            return std::string(text::trim(t.substr(eq + 1)));
    }
    throw SlurmError("scontrol show config: no StateSaveLocation");
}

void Slurm::signal_steps(std::uint32_t job, int signal) const {
    must({"scancel", "--signal=" + std::to_string(signal), std::to_string(job)});
}

void Slurm::requeue(std::uint32_t job) const {
    must({"scontrol", "requeue", std::to_string(job)});
}

void Slurm::update(std::uint32_t job, const std::vector<std::string> &settings) const {
    std::vector<std::string> argv{"scontrol", "update", "JobId=" + std::to_string(job)};
    argv.insert(argv.end(), settings.begin(), settings.end());
    must(argv);
}

std::vector<std::string> Slurm::steps_on(std::uint32_t job,
                                         const std::vector<std::string> &nodes) const {
    auto r = must({"squeue", "-h", "-s", "-j", std::to_string(job), "-o", "%i %N"});
    std::vector<std::string> out;
    text::LineReader lines(r.out);
    for (std::string_view line; lines.next(line);) {
        auto t = text::trim(line);
        auto blank = t.find(' ');
        if (blank == std::string_view::npos)
            continue;
        auto id = t.substr(0, blank);
        if (id.ends_with(".batch") || id.ends_with(".extern"))
            continue;
        auto names = expand_hostlist(text::trim(t.substr(blank + 1)), "step nodes");
        if (!names)
            continue;
        if (std::any_of(names->begin(), names->end(), [&](const std::string &n) {
                return std::find(nodes.begin(), nodes.end(), n) != nodes.end();
            }))
            out.emplace_back(id);
    }
    return out;
}

void Slurm::cancel_step(const std::string &step) const {
    must({"scancel", step});
}

}  // namespace slurm_ai::recover
