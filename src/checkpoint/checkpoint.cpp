#include "slurm_ai/checkpoint/checkpoint.hpp"

#include "slurm_ai/common/file_io.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <system_error>
#include <tuple>

namespace slurm_ai::checkpoint {
namespace {

namespace fs = std::filesystem;

// The marker's modification time, or nullopt when there is no marker.
std::optional<double> marker_time(const fs::path &marker) {
    struct stat st {};
    if (::stat(marker.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
        return std::nullopt;
    return static_cast<double>(st.st_mtim.tv_sec) + st.st_mtim.tv_nsec * 1e-9;
}

bool older(const Checkpoint &a, const Checkpoint &b) {
    return std::tie(a.step, a.completed_at, a.name) < std::tie(b.step, b.completed_at, b.name);
}

}  // namespace

std::optional<std::uint64_t> step_of(std::string_view name) {
    std::size_t end = name.size();
    while (end > 0 && !std::isdigit(static_cast<unsigned char>(name[end - 1])))
        --end;
    std::size_t begin = end;
    while (begin > 0 && std::isdigit(static_cast<unsigned char>(name[begin - 1])))
        --begin;
    if (begin == end)
        return std::nullopt;
    while (begin + 1 < end && name[begin] == '0')  // leading zeros of "step-000120"
        ++begin;
    if (end - begin > 18)
        return std::nullopt;
    std::uint64_t v = 0;
    for (std::size_t i = begin; i < end; ++i)
        v = v * 10 + static_cast<std::uint64_t>(name[i] - '0');
    return v;
}

std::string expand_dir(std::string_view dir, std::string_view job_id) {
    std::string out;
    for (std::size_t i = 0; i < dir.size(); ++i) {
        if (dir[i] == '%' && i + 1 < dir.size() && dir[i + 1] == 'j') {
            out += job_id;
            ++i;
        } else {
            out += dir[i];
        }
    }
    return out;
}

Parsed<std::vector<Checkpoint>> scan(const std::string &dir) {
    std::vector<Checkpoint> out;
    std::error_code ec;
    if (!fs::exists(dir, ec) && !ec)
        return out;
    if (!fs::is_directory(dir, ec))
        return InputError{"--ai-checkpoint DIR", dir, "a directory", "", 0};
    fs::directory_iterator it(dir, ec);
    if (ec)
        return InputError{"--ai-checkpoint DIR", dir,
                          "a directory this process can read (" + ec.message() + ")", "", 0};
    for (; it != fs::directory_iterator(); it.increment(ec)) {
        if (ec)
            return InputError{"--ai-checkpoint DIR", dir,
                              "a directory that stays readable (" + ec.message() + ")", "", 0};
        std::string name = it->path().filename().string();
        if (name.empty() || name.front() == '.' || name.ends_with(kMarkerSuffix))
            continue;
        auto step = step_of(name);
        if (!step)
            continue;
        Checkpoint c;
        c.path = it->path().string();
        c.name = name;
        c.step = *step;
        c.directory = it->is_directory(ec);
        auto marker = marker_time(fs::path(dir) / (name + std::string(kMarkerSuffix)));
        if (!marker && c.directory)
            marker = marker_time(it->path() / kMarkerInside);
        c.complete = marker.has_value();
        c.completed_at = marker.value_or(0);
        out.push_back(std::move(c));
    }
    std::sort(out.begin(), out.end(), older);
    return out;
}

std::optional<Checkpoint> newest_complete(const std::vector<Checkpoint> &all) {
    std::optional<Checkpoint> best;
    for (const auto &c : all)
        if (c.complete && (!best || older(*best, c)))
            best = c;
    return best;
}

bool advanced(const std::optional<Checkpoint> &before, const std::optional<Checkpoint> &after) {
    if (!after || !after->complete)
        return false;
    if (!before)
        return true;
    return std::tie(after->step, after->completed_at) >
           std::tie(before->step, before->completed_at);
}

std::vector<Checkpoint> plan_prune(const std::vector<Checkpoint> &all, std::uint32_t keep) {
    std::vector<Checkpoint> complete;
    for (const auto &c : all)
        if (c.complete)
            complete.push_back(c);
    std::sort(complete.begin(), complete.end(), older);
    std::size_t n_keep = std::max<std::uint32_t>(keep, 1);
    if (complete.empty())
        return {};
    std::size_t first_kept = complete.size() > n_keep ? complete.size() - n_keep : 0;
    const Checkpoint &oldest_kept = complete[first_kept];
    std::vector<Checkpoint> doomed(complete.begin(), complete.begin() + first_kept);
    for (const auto &c : all)
        if (!c.complete && c.step < oldest_kept.step)
            doomed.push_back(c);
    std::sort(doomed.begin(), doomed.end(), older);
    return doomed;
}

std::vector<std::string> apply_prune(const std::vector<Checkpoint> &doomed,
                                     std::optional<std::uint32_t> owner) {
    std::vector<std::string> errors;
    for (const auto &c : doomed) {
        const fs::path p(c.path);
        const std::string dir = p.parent_path().string(), name = p.filename().string();
        std::error_code ec = remove_beneath(dir, name + std::string(kMarkerSuffix), owner);
        if (!ec && c.directory) {
            ec = remove_beneath(dir, name + "/" + std::string(kMarkerInside), owner);
            if (ec == std::errc::too_many_symbolic_link_levels ||
                ec == std::errc::not_a_directory)
                ec.clear();  // a link now: it goes below, nothing it names is touched
        }
        if (!ec)
            ec = remove_beneath(dir, name, owner);
        if (ec == not_owner_error())
            errors.push_back(c.path + ": not removed: keep=N removes only what uid " +
                             std::to_string(*owner) + ", the job's user, owns");
        else if (ec)
            errors.push_back(c.path + ": " + ec.message());
    }
    return errors;
}

EnvPairs checkpoint_task_env(const CheckpointSpec &spec, std::string_view job_id,
                             std::uint32_t restart_count, const std::optional<Checkpoint> &newest) {
    EnvPairs env;
    env.emplace_back("AI_CHECKPOINT_DIR", expand_dir(spec.dir, job_id));
    if (newest && newest->complete) {
        env.emplace_back("AI_CHECKPOINT_RESUME", newest->path);
        env.emplace_back("AI_CHECKPOINT_STEP", std::to_string(newest->step));
    }
    env.emplace_back("AI_CHECKPOINT_SIGNAL", std::to_string(spec.signal));
    env.emplace_back("AI_CHECKPOINT_KEEP", std::to_string(spec.keep));
    env.emplace_back("AI_RESTART_COUNT", std::to_string(restart_count));
    return env;
}

EnvPairs checkpoint_task_env(const CheckpointSpec &spec, std::string_view job_id,
                             std::uint32_t restart_count) {
    auto all = scan(expand_dir(spec.dir, job_id));
    std::optional<Checkpoint> newest;
    if (all)
        newest = newest_complete(all.value());
    return checkpoint_task_env(spec, job_id, restart_count, newest);
}

}  // namespace slurm_ai::checkpoint
