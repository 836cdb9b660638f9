#include "slurm_ai/elastic/elastic_view.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "slurm_ai/common/file_io.hpp"
#include "slurm_ai/common/hostlist.hpp"
#include "slurm_ai/common/json_number.hpp"
#include "slurm_ai/common/json_text.hpp"
#include "slurm_ai/common/state_paths.hpp"

namespace slurm_ai {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

void give_to(const fs::path &p, long uid) {
    if (uid >= 0 && geteuid() == 0 && chown(p.c_str(), static_cast<uid_t>(uid), -1) != 0)
        throw std::runtime_error("cannot give " + p.string() + " to uid " + std::to_string(uid) +
                                 ": " + std::strerror(errno));
}

// Readable by all (the job's tasks read it), owned by `uid` when given.
void write_file(const fs::path &target, const std::string &text, long uid) {
    write_text_file_atomically(target.string(), text, [&](int fd) {
        if (::fchmod(fd, 0644) != 0)
            throw std::runtime_error("cannot make " + target.string() +
                                     " readable: " + std::strerror(errno));
        if (uid >= 0 && geteuid() == 0 && ::fchown(fd, static_cast<uid_t>(uid), -1) != 0)
            throw std::runtime_error("cannot give " + target.string() + " to uid " +
                                     std::to_string(uid) + ": " + std::strerror(errno));
    });
}

}  // namespace

void to_json(json &j, const ResizeView &v) {
    j = json{{"job_id", v.job_id},
             {"generation", v.generation},
             {"grows", v.grows},
             {"shrinks", v.shrinks},
             {"nodes", v.nodes},
             {"nodelist", compress_hostlist(v.nodes)},
             {"num_nodes", v.nodes.size()},
             {"procs_per_node", v.procs_per_node},
             {"world_size", v.world_size()},
             {"master_addr", v.nodes.empty() ? std::string() : v.nodes.front()},
             {"updated_at", v.updated_at},
             {"reason", v.reason}};
}

Parsed<ResizeView> parse_job_view(std::string_view text, std::string_view source) {
    auto bad = [&](std::string field, std::string expected) {
        return InputError{std::move(field), std::string(text.substr(0, 80)), std::move(expected),
                          std::string(source), 0};
    };
    json j = json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object())
        return bad("view", "a JSON object");
    try {
        ResizeView v;
        v.job_id = json_whole<std::uint32_t>(j, "job_id");
        v.generation = json_whole<std::uint64_t>(j, "generation");
        v.grows = json_whole<std::uint64_t>(j, "grows", 0);
        v.shrinks = json_whole<std::uint64_t>(j, "shrinks", 0);
        v.nodes = j.at("nodes").get<std::vector<std::string>>();
        v.procs_per_node = json_whole<std::uint32_t>(j, "procs_per_node");
        v.updated_at = json_whole<std::int64_t>(j, "updated_at", 0);
        v.reason = j.value("reason", std::string());
        return v;
    } catch (const json::exception &e) {
        return bad("view",
                   std::string("job_id, generation, nodes and procs_per_node (") + e.what() + ")");
    }
}

std::string hostfile_text(const ResizeView &v) {
    std::string out;
    for (const auto &n : v.nodes)
        out += n + " slots=" + std::to_string(v.procs_per_node) + "\n";
    return out;
}

std::string env_text(const ResizeView &v) {
    const std::string list = compress_hostlist(v.nodes);
    std::string out;
    auto line = [&](const char *name, const std::string &value) {
        out += "export " + std::string(name) + "=\"" + value + "\"\n";
    };
    line("SLURM_JOB_NODELIST", list);
    line("SLURM_NODELIST", list);
    line("SLURM_NNODES", std::to_string(v.nodes.size()));
    line("SLURM_JOB_NUM_NODES", std::to_string(v.nodes.size()));
    line("WORLD_SIZE", std::to_string(v.world_size()));
    line("MASTER_ADDR", v.nodes.empty() ? std::string() : v.nodes.front());
    line("SLURM_AI_ELASTIC_GENERATION", std::to_string(v.generation));
    // Task counts from before the resize no longer hold (as Slurm's own resize script).
    out += "unset SLURM_NTASKS SLURM_NPROCS SLURM_TASKS_PER_NODE\n";
    return out;
}

std::string resolve_view_dir(std::string_view configured, std::string_view state_save_location) {
    if (!configured.empty())
        return std::string(configured);
    return state_paths::elastic_views(std::string(state_save_location));
}

std::string job_view_dir(std::string_view view_dir, std::uint32_t job_id) {
    return (fs::path(view_dir) / std::to_string(job_id)).string();
}

std::optional<ResizeView> read_view(std::string_view job_dir) {
    auto path = fs::path(job_dir) / "view.json";
    std::error_code ec;
    if (!fs::exists(path, ec))
        return std::nullopt;
    auto text = read_text_file(path.string(), 1 << 20);
    if (!text)
        return std::nullopt;
    auto v = parse_job_view(text.value(), path.string());
    if (!v)
        return std::nullopt;
    return std::move(v).value();
}

ResizeView publish_view(std::string_view job_dir, ResizeView view, long owner_uid) {
    const fs::path dir{std::string(job_dir)};
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec)
        throw std::runtime_error("cannot create " + dir.string() + ": " + ec.message());
    give_to(dir, owner_uid);
    auto old = read_view(job_dir);
    if (old && old->job_id != view.job_id)
        old.reset();  // another job's files (a reused directory): start over
    view.generation = view.grows = view.shrinks = 0;
    if (old) {
        const bool changed = old->nodes != view.nodes;
        view.generation = old->generation + (changed ? 1 : 0);
        view.grows = old->grows + (changed && view.nodes.size() > old->nodes.size() ? 1 : 0);
        view.shrinks = old->shrinks + (changed && view.nodes.size() < old->nodes.size() ? 1 : 0);
    }
    if (old && old->nodes == view.nodes && old->procs_per_node == view.procs_per_node)
        return *old;  // nothing changed: the files stay as they are
    // The files a reader polls for come first, view.json (the generation) last.
    write_file(dir / "hostfile", hostfile_text(view), owner_uid);
    write_file(dir / "env", env_text(view), owner_uid);
    write_file(dir / "view.json", json_text(json(view), 1) + "\n", owner_uid);
    return view;
}

std::string signal_name(int signal) {
    const char *abbrev = sigabbrev_np(signal);
    return abbrev ? abbrev : std::to_string(signal);
}

std::vector<std::pair<std::string, std::string>> elastic_task_env(const ElasticSpec *spec,
                                                                  std::uint32_t job_id,
                                                                  std::string_view view_dir) {
    const std::string dir = job_view_dir(view_dir, job_id);
    std::vector<std::pair<std::string, std::string>> env{
        {"SLURM_AI_ELASTIC_VIEW", dir + "/view.json"},
        {"SLURM_AI_ELASTIC_HOSTFILE", dir + "/hostfile"},
        {"SLURM_AI_ELASTIC_ENV", dir + "/env"},
    };
    if (spec) {
        env.emplace_back("SLURM_AI_ELASTIC_MIN", std::to_string(spec->min_nodes));
        env.emplace_back("SLURM_AI_ELASTIC_MAX", std::to_string(spec->max_nodes));
        if (spec->signal > 0)
            env.emplace_back("SLURM_AI_ELASTIC_SIGNAL", signal_name(spec->signal));
    }
    return env;
}

}  // namespace slurm_ai
