#include "slurm_ai/lease/node_tasks.hpp"

#include <signal.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string_view>

namespace slurm_ai::lease {
namespace {

namespace fs = std::filesystem;

// environ holds NAME=VALUE entries separated by NUL bytes.
std::string_view env_value(std::string_view environ, std::string_view name) {
    while (!environ.empty()) {
        const auto end = std::min(environ.find('\0'), environ.size());
        const std::string_view entry = environ.substr(0, end);
        if (entry.size() > name.size() && entry.starts_with(name) && entry[name.size()] == '=')
            return entry.substr(name.size() + 1);
        environ.remove_prefix(std::min(end + 1, environ.size()));
    }
    return {};
}

template <typename T>
bool whole_number(std::string_view text, T &out) {
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc() && end == text.data() + text.size() && !text.empty();
}

}  // namespace

std::vector<NodeTask> node_tasks(const std::string &proc_root, const std::string &node) {
    std::vector<NodeTask> out;
    std::error_code ec;
    for (auto it = fs::directory_iterator(proc_root, ec); !ec && it != fs::directory_iterator();
         it.increment(ec)) {
        NodeTask t;
        if (!whole_number(it->path().filename().string(), t.pid))
            continue;
        std::ifstream in(it->path() / "environ", std::ios::binary);
        const std::string environ{std::istreambuf_iterator<char>(in), {}};
        if (env_value(environ, "SLURMD_NODENAME") != node ||
            !whole_number(env_value(environ, "SLURM_JOB_ID"), t.job))
            continue;
        t.checkpointing = !env_value(environ, "AI_CHECKPOINT_DIR").empty();
        out.push_back(t);
    }
    std::sort(out.begin(), out.end(), [](const auto &a, const auto &b) { return a.pid < b.pid; });
    return out;
}

std::vector<std::uint32_t> checkpointing_jobs(const std::vector<NodeTask> &tasks) {
    std::vector<std::uint32_t> out;
    for (const auto &t : tasks)
        if (t.checkpointing)
            out.push_back(t.job);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

std::vector<pid_t> signal_jobs(const std::vector<NodeTask> &tasks,
                               const std::vector<std::uint32_t> &jobs, int signal) {
    std::vector<pid_t> reached;
    for (const auto &t : tasks)
        if (std::binary_search(jobs.begin(), jobs.end(), t.job) && ::kill(t.pid, signal) == 0)
            reached.push_back(t.pid);
    return reached;
}

}  // namespace slurm_ai::lease
