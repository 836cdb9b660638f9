#include "slurm_ai/spank_elastic/spank_step.hpp"

#include <sched.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "slurm_ai/checkpoint/checkpoint.hpp"
#include "slurm_ai/common/file_io.hpp"
#include "slurm_ai/common/hostlist.hpp"
#include "slurm_ai/common/text_scan.hpp"
#include "slurm_ai/config/plugin_config.hpp"
#include "slurm_ai/elastic/elastic_view.hpp"
#include "slurm_ai/job/job_hints.hpp"
#include "slurm_ai/job/spank_env.hpp"
#include "slurm_ai/job/task_dag.hpp"
#include "slurm_ai/placement/placement.hpp"
#include "slurm_ai/topology/cluster_files.hpp"

namespace slurm_ai {
namespace {

std::string beside(const std::string &file, const char *name) {
    auto dir = std::filesystem::path(file).parent_path();
    return (dir.empty() ? std::filesystem::path(".") : dir) / name;
}

void append_note(std::string &notes, const std::string &note) {
    if (!notes.empty())
        notes += "; ";
    notes += note;
}

std::string env_text(const TaskIo &io, const char *name) {
    const char *v = io.get(name);
    return v ? v : "";
}

void apply_affinity(const std::vector<int> &cpus, std::string &notes) {
    if (cpus.empty())
        return;
    cpu_set_t current, wanted;
    if (sched_getaffinity(0, sizeof current, &current) != 0)
        return;
    CPU_ZERO(&wanted);
    int n = 0;
    for (int c : cpus)
        if (c >= 0 && c < CPU_SETSIZE && CPU_ISSET(c, &current)) {
            CPU_SET(c, &wanted);
            ++n;
        }
    // The GPU's CPUs are not among those Slurm gave the task: Slurm's binding stands.
    if (n == 0) {
        append_note(notes, "none of the GPU's CPUs is allowed to the task; affinity kept");
        return;
    }
    if (sched_setaffinity(0, sizeof wanted, &wanted) != 0)
        append_note(notes, std::string("sched_setaffinity: ") + std::strerror(errno));
}

}  // namespace

Parsed<std::string> compact_dag_for_job(const std::string &path) {
    auto dag = load_task_dag(path);
    if (!dag)
        return dag.error();
    std::string text = compact_task_dag(dag.value());
    if (text.size() > kMaxCompactDag)
        return InputError{"--ai-dag", path,
                          "a DAG whose compact form fits " + format_size(kMaxCompactDag) +
                              ", got " + format_size(text.size()),
                          "", 0};
    return text;
}

std::optional<InputError> SpankStep::configure(std::span<const std::string_view> args) {
    auto parsed = parse_spank_args(args);
    if (!parsed)
        return parsed.error();
    config_ = std::move(parsed).value();
    return std::nullopt;
}

// This node's topology: the plugstack argument, else the one ai_select.conf gives the
// node, else what hwloc finds on the live node.
std::optional<NodeTopology> SpankStep::load_node(const std::string &node_name,
                                                 std::string &notes) {
    if (!config_.node_topology.empty()) {
        auto t = load_node_topology(config_.node_topology);
        if (t)
            return std::move(t).value();
        append_note(notes, t.error().message());
    }
    if (fabric_) {
        int h = fabric_->host_index(node_name);
        if (h >= 0 && !fabric_->node(h).source.empty())
            return fabric_->node(h);
    }
    auto live = discover_local_node();
    if (live)
        return std::move(live).value();
    append_note(notes, "live topology discovery: " + live.error().message());
    return std::nullopt;
}

// Tasks need NCCL's format; a node described in it is handed over as it is.
void SpankStep::prepare_nccl_topo(std::uint32_t job_id, std::uint32_t step_id,
                                  const std::string &node_name, std::string &notes) {
    if (!config_.nccl_topo || !node_)
        return;
    const NodeTopology &t = *node_;
    if (t.format == "nccl-xml") {
        nccl_topo_file_ = t.source;
        return;
    }
    auto path = std::filesystem::path(config_.nccl_topo_dir) /
                ("ai-nccl-topo-" + std::to_string(job_id) + "." + std::to_string(step_id) + "." +
                 node_name + ".xml");
    try {
        // Whole or not at all: NCCL reads it as the tasks start.
        write_text_file_atomically(path.string(), write_nccl_topo(t));
    } catch (const std::runtime_error &e) {
        append_note(notes, e.what());
        return;
    }
    nccl_topo_file_ = path;
    wrote_nccl_topo_ = true;
}

std::string SpankStep::setup(const std::string &slurm_conf_path,
                             const std::string &state_save_location, const std::string &node,
                             std::uint32_t job_id, std::uint32_t step_id) {
    std::string notes;
    std::string conf_file = config_.config;
    if (conf_file.empty() && !slurm_conf_path.empty())
        conf_file = beside(slurm_conf_path, "ai_select.conf");
    if (!conf_file.empty() && std::filesystem::exists(conf_file)) {
        auto conf = load_plugin_config(conf_file, beside(conf_file, "topology.conf"));
        if (!conf) {
            append_note(notes, conf.error().message());
        } else {
            elastic_view_dir_ = resolve_view_dir(conf->elastic.view_dir, state_save_location);
            if (auto graph = load_cluster(conf->cluster); graph)
                fabric_ = std::move(graph).value();
            else
                append_note(notes, graph.error().message());
        }
    } else {
        append_note(notes, "no ai_select.conf" +
                               (conf_file.empty() ? std::string() : " at " + conf_file) +
                               ": ranks in Slurm's node order");
    }
    node_ = load_node(node, notes);
    prepare_nccl_topo(job_id, step_id, node, notes);
    return notes;
}

void SpankStep::remember_option(std::string name, std::string value) {
    options_[std::move(name)] = std::move(value);
}

std::optional<std::string> SpankStep::cleanup() {
    if (!wrote_nccl_topo_)
        return std::nullopt;
    wrote_nccl_topo_ = false;
    std::error_code ec;
    std::filesystem::remove(nccl_topo_file_, ec);
    if (ec)
        return "cannot remove " + nccl_topo_file_ + ": " + ec.message();
    return std::nullopt;
}

// An --ai-* option's value: as slurmstepd gave it to the option callback, else as the
// task's environment carries it (a batch job's environment holds sbatch's copy).
std::optional<std::string> SpankStep::option_value(const TaskIo &io,
                                                   std::string_view option) const {
    if (auto it = options_.find(option); it != options_.end())
        return it->second;
    for (auto copy : {SpankEnvCopy::kJob, SpankEnvCopy::kCommand})
        if (const char *v = io.get(spank_option_env_name(option, copy).c_str()))
            return std::string(v);
    return std::nullopt;
}

// A job with --ai-checkpoint: its directory and, at every start, its newest complete
// checkpoint. Read in the task itself (the job's user), so a directory only the user can
// read (root-squashed NFS) is seen as the job sees it.
void SpankStep::checkpoint_env(const TaskIo &io, std::uint32_t job_id, EnvList &out,
                               std::string &notes) const {
    auto text = option_value(io, "ai-checkpoint");
    if (!text)
        return;
    auto spec = parse_checkpoint(*text);
    if (!spec) {
        append_note(notes, spec.error().message());
        return;
    }
    std::uint32_t restarts = 0;
    if (const char *r = io.get("SLURM_RESTART_COUNT"))
        restarts = static_cast<std::uint32_t>(std::strtoul(r, nullptr, 10));
    for (auto &kv : checkpoint::checkpoint_task_env(*spec, std::to_string(job_id), restarts))
        out.push_back(std::move(kv));
    // How the task tells ai-recover it lost a peer (docs/checkpoint.md, "Leases").
    out.emplace_back("AI_REPORT_FAILURE", config_.lease_program + " report");
}

// The resize view of an elastic job, or of a job that was resized by hand.
void SpankStep::elastic_env(const TaskIo &io, std::uint32_t job_id, EnvList &out,
                            std::string &notes) const {
    if (elastic_view_dir_.empty())
        return;
    std::optional<ElasticSpec> spec;
    if (auto text = option_value(io, "ai-elastic")) {
        auto parsed = parse_elastic(*text);
        if (parsed)
            spec = parsed.value();
        else
            append_note(notes, parsed.error().message());
    }
    std::error_code ec;
    if (!spec && !std::filesystem::exists(job_view_dir(elastic_view_dir_, job_id), ec))
        return;
    for (auto &kv : elastic_task_env(spec ? &*spec : nullptr, job_id, elastic_view_dir_))
        out.push_back(std::move(kv));
}

Parsed<std::string> SpankStep::task_setup(const TaskIo &io, std::uint32_t job_id, bool batch,
                                           std::uint32_t local_id) {
    std::string notes;
    // The batch step runs where the job runs: its nodes are the job's.
    const char *list_var = batch ? "SLURM_JOB_NODELIST" : "SLURM_STEP_NODELIST";
    const char *tasks_var = batch ? "SLURM_TASKS_PER_NODE" : "SLURM_STEP_TASKS_PER_NODE";
    std::string tasks_text = env_text(io, tasks_var);
    if (batch) {
        // The job's task counts may be absent (no -n): one "task" per node then.
        auto nodes = expand_hostlist(env_text(io, list_var), list_var);
        if (nodes && tasks_text.empty())
            tasks_text = "1(x" + std::to_string(nodes->size()) + ")";
    }
    auto step = parse_step_info(job_id, batch, env_text(io, list_var), tasks_text);
    if (!step)
        return step.error();
    RankLayout layout = rank_layout(*step, fabric_ ? &*fabric_ : nullptr);

    TaskPlace place;
    place.node = env_text(io, "SLURMD_NODENAME");
    place.local_id = local_id;
    const char *gpus_var = batch ? "SLURM_JOB_GPUS" : "SLURM_STEP_GPUS";
    auto gpus = parse_gpu_list(gpus_var, env_text(io, gpus_var));
    if (gpus)
        place.node_gpus = std::move(gpus).value();
    else
        append_note(notes, gpus.error().message());
    if (fabric_)
        if (int h = fabric_->host_index(place.node); h >= 0)
            place.gpu_rails = host_gpu_rails(*fabric_, h);
    for (auto id : text::split(env_text(io, "CUDA_VISIBLE_DEVICES"), ','))
        if (!text::trim(id).empty())
            place.cuda_ids.emplace_back(text::trim(id));

    const std::string &first = step->nodes[layout.order.front()];
    const char *addr = io.resolve ? io.resolve(first.c_str()) : nullptr;
    TaskEnv env =
        task_environment(config_, *step, layout, place, node_ ? &*node_ : nullptr,
                         addr && *addr ? addr : first, nccl_topo_file_);
    elastic_env(io, job_id, env.set, notes);
    checkpoint_env(io, job_id, env.set, notes);
    for (const auto &[name, value] : env.set)
        if (!io.set(name.c_str(), value.c_str()))
            append_note(notes, "cannot set " + name);
    apply_affinity(env.cpus, notes);
    for (const auto &n : env.notes)
        append_note(notes, n);
    return notes;
}

}  // namespace slurm_ai
