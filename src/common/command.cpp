#include "slurm_ai/common/command.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "slurm_ai/common/unique_fd.hpp"

extern char **environ;

namespace slurm_ai {

std::string command_line(const std::vector<std::string> &argv) {
    std::string s;
    for (const auto &a : argv)
        s += (s.empty() ? "" : " ") + a;
    return s;
}

namespace {

// Both ends of a pipe whose descriptors close on exec; both -1 when none could be made.
struct Pipe {
    UniqueFd reader, writer;
    Pipe() {
        int fds[2];
        if (pipe2(fds, O_CLOEXEC) == 0) {
            reader = UniqueFd(fds[0]);
            writer = UniqueFd(fds[1]);
        }
    }
};

}  // namespace

CommandResult run_command(const std::vector<std::string> &argv, double timeout_s) {
    CommandResult r;
    Pipe out, err;
    if (out.reader.get() < 0 || err.reader.get() < 0)
        return r;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, out.writer.get(), 1);
    posix_spawn_file_actions_adddup2(&fa, err.writer.get(), 2);
    std::vector<char *> args;
    for (const auto &a : argv)
        args.push_back(const_cast<char *>(a.c_str()));
    args.push_back(nullptr);
    pid_t pid = -1;
    int rc = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    out.writer.reset();
    err.writer.reset();
    if (rc != 0) {
        r.spawn_error = rc;
        r.err = argv[0] + ": " + std::strerror(rc);
        return r;
    }
    auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    UniqueFd *ends[2] = {&out.reader, &err.reader};
    pollfd fds[2] = {{ends[0]->get(), POLLIN, 0}, {ends[1]->get(), POLLIN, 0}};
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
                ends[i]->reset();
                fds[i].fd = -1;
                --open_fds;
            }
        }
    }
    for (auto *end : ends)  // before the wait: a child still writing is not left on a full pipe
        end->reset();
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (timed_out)
        r.err += command_line(argv) + ": no answer within " + std::to_string(int(timeout_s)) + " s";
    else if (WIFEXITED(status))
        r.status = WEXITSTATUS(status);
    return r;
}

}  // namespace slurm_ai
