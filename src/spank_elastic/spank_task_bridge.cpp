#include "spank_task_bridge.h"

#include <sched.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "slurm_ai/checkpoint/checkpoint.hpp"
#include "slurm_ai/common/c_boundary.hpp"
#include "slurm_ai/common/hostlist.hpp"
#include "slurm_ai/common/text_scan.hpp"
#include "slurm_ai/config/plugin_config.hpp"
#include "slurm_ai/elastic/elastic_view.hpp"
#include "slurm_ai/job/job_hints.hpp"
#include "slurm_ai/job/spank_env.hpp"
#include "slurm_ai/job/task_dag.hpp"
#include "slurm_ai/placement/placement.hpp"
#include "slurm_ai/spank_elastic/spank_config.hpp"
#include "slurm_ai/spank_elastic/task_env.hpp"
#include "slurm_ai/topology/cluster_files.hpp"

using namespace slurm_ai;

namespace {

// The compact DAG travels in the job's SPANK environment, which slurmctld keeps with the
// job record and copies into every launch message: keep it small.
constexpr std::size_t kMaxCompactDag = 64 * 1024;

SpankConfig g_config;

// What one slurmstepd learned once for its step; tasks fork from it.
struct StepState {
    std::optional<ClusterGraph> fabric;
    std::optional<NodeTopology> node;
    std::string nccl_topo_file;
    bool wrote_nccl_topo = false;
    std::string elastic_view_dir;  // where ai-resize/ai-elasticd publish resized jobs' views
};
StepState g_step;
// --ai-* values slurmstepd passed to the option callback, by option name.
std::map<std::string, std::string, std::less<>> g_options;

std::string beside(const std::string &file, const char *name) {
    auto dir = std::filesystem::path(file).parent_path();
    return (dir.empty() ? std::filesystem::path(".") : dir) / name;
}

void append_note(std::string &notes, const std::string &note) {
    if (!notes.empty())
        notes += "; ";
    notes += note;
}

// This node's topology: the plugstack argument, else the one ai_select.conf gives the
// node, else what hwloc finds on the live node.
std::optional<NodeTopology> load_node(const std::string &node_name, std::string &notes) {
    if (!g_config.node_topology.empty()) {
        auto t = load_node_topology(g_config.node_topology);
        if (t)
            return std::move(t).value();
        append_note(notes, t.error().message());
    }
    if (g_step.fabric) {
        int h = g_step.fabric->host_index(node_name);
        if (h >= 0 && !g_step.fabric->node(h).source.empty())
            return g_step.fabric->node(h);
    }
    auto live = discover_local_node();
    if (live)
        return std::move(live).value();
    append_note(notes, "live topology discovery: " + live.error().message());
    return std::nullopt;
}

// Tasks need NCCL's format; a node described in it is handed over as it is.
void prepare_nccl_topo(std::uint32_t job_id, std::uint32_t step_id, const std::string &node_name,
                       std::string &notes) {
    if (!g_config.nccl_topo || !g_step.node)
        return;
    const NodeTopology &t = *g_step.node;
    if (t.format == "nccl-xml") {
        g_step.nccl_topo_file = t.source;
        return;
    }
    auto path = std::filesystem::path(g_config.nccl_topo_dir) /
                ("ai-nccl-topo-" + std::to_string(job_id) + "." + std::to_string(step_id) + "." +
                 node_name + ".xml");
    std::ofstream out(path, std::ios::trunc);
    out << write_nccl_topo(t);
    if (!out.flush()) {
        append_note(notes, "cannot write " + path.string());
        return;
    }
    g_step.nccl_topo_file = path;
    g_step.wrote_nccl_topo = true;
}

std::string env_text(void *ctx, ai_getenv_fn get, const char *name) {
    const char *v = get(ctx, name);
    return v ? v : "";
}

// An --ai-* option's value: as slurmstepd gave it to the option callback, else as the
// task's environment carries it (a batch job's environment holds sbatch's copy).
std::optional<std::string> option_value(void *ctx, ai_getenv_fn get, std::string_view option) {
    if (auto it = g_options.find(option); it != g_options.end())
        return it->second;
    for (auto copy : {SpankEnvCopy::kJob, SpankEnvCopy::kCommand})
        if (const char *v = get(ctx, spank_option_env_name(option, copy).c_str()))
            return std::string(v);
    return std::nullopt;
}

// A job with --ai-checkpoint: its directory and, at every start, its newest complete
// checkpoint. Read in the task itself (the job's user), so a directory only the user can
// read (root-squashed NFS) is seen as the job sees it.
void checkpoint_env(void *ctx, ai_getenv_fn get, std::uint32_t job_id, EnvList &out,
                    std::string &notes) {
    auto text = option_value(ctx, get, "ai-checkpoint");
    if (!text)
        return;
    auto spec = parse_checkpoint(*text);
    if (!spec) {
        append_note(notes, spec.error().message());
        return;
    }
    std::uint32_t restarts = 0;
    if (const char *r = get(ctx, "SLURM_RESTART_COUNT"))
        restarts = static_cast<std::uint32_t>(std::strtoul(r, nullptr, 10));
    for (auto &kv : checkpoint::checkpoint_task_env(*spec, std::to_string(job_id), restarts))
        out.push_back(std::move(kv));
}

// The resize view of an elastic job, or of a job that was resized by hand.
void elastic_env(void *ctx, ai_getenv_fn get, std::uint32_t job_id, EnvList &out,
                 std::string &notes) {
    if (g_step.elastic_view_dir.empty())
        return;
    std::optional<ElasticSpec> spec;
    if (auto text = option_value(ctx, get, "ai-elastic")) {
        auto parsed = parse_elastic(*text);
        if (parsed)
            spec = parsed.value();
        else
            append_note(notes, parsed.error().message());
    }
    std::error_code ec;
    if (!spec && !std::filesystem::exists(job_view_dir(g_step.elastic_view_dir, job_id), ec))
        return;
    for (auto &kv : elastic_task_env(spec ? &*spec : nullptr, job_id, g_step.elastic_view_dir))
        out.push_back(std::move(kv));
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

extern "C" int ai_spank_configure(int argc, char **argv, char *err, size_t errlen) {
    return guarded(err, errlen, [&] {
        std::vector<std::string_view> args(argv, argv + (argc > 0 ? argc : 0));
        auto parsed = parse_spank_args(args);
        if (!parsed) {
            copy_message(err, errlen, parsed.error().message());
            return -1;
        }
        g_config = std::move(parsed).value();
        return 0;
    });
}

extern "C" int ai_spank_compact_dag(const char *path, char **compact, char *err, size_t errlen) {
    return guarded(err, errlen, [&] {
        *compact = nullptr;
        auto dag = load_task_dag(path ? path : "");
        if (!dag) {
            copy_message(err, errlen, "--ai-dag: " + dag.error().message());
            return -1;
        }
        std::string text = compact_task_dag(dag.value());
        if (text.size() > kMaxCompactDag) {
            copy_message(err, errlen,
                         "--ai-dag='" + std::string(path) +
                             "': expected a DAG whose compact "
                             "form fits " +
                             format_size(kMaxCompactDag) + ", got " + format_size(text.size()));
            return -1;
        }
        *compact = strdup(text.c_str());
        return *compact ? 0 : -1;
    });
}

extern "C" const char *ai_spank_option_env_var(size_t i, const char *program) {
    static thread_local std::string name;
    auto table = hint_options();
    if (i >= table.size() || !program)
        return nullptr;
    std::string_view prog(program);
    const char *prefix = prog == "sbatch"   ? "SBATCH_"
                         : prog == "salloc" ? "SALLOC_"
                         : prog == "srun"   ? "SLURM_"
                                            : nullptr;
    if (!prefix)
        return nullptr;
    name = prefix;
    for (const char *c = table[i].name; *c; ++c)
        name += *c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(*c)));
    return name.c_str();
}

extern "C" int ai_spank_step_setup(const char *slurm_conf_path, const char *state_save_location,
                                   const char *node_name, uint32_t job_id, uint32_t step_id,
                                   char *note, size_t notelen) {
    return guarded(note, notelen, [&] {
        std::string notes;
        const std::string node = node_name ? node_name : "";
        std::string conf_file = g_config.config;
        if (conf_file.empty() && slurm_conf_path && *slurm_conf_path)
            conf_file = beside(slurm_conf_path, "ai_select.conf");
        if (!conf_file.empty() && std::filesystem::exists(conf_file)) {
            auto conf = load_plugin_config(conf_file, beside(conf_file, "topology.conf"));
            if (!conf) {
                append_note(notes, conf.error().message());
            } else {
                g_step.elastic_view_dir = resolve_view_dir(
                    conf->elastic.view_dir, state_save_location ? state_save_location : "");
                if (auto graph = load_cluster(conf->cluster); graph)
                    g_step.fabric = std::move(graph).value();
                else
                    append_note(notes, graph.error().message());
            }
        } else {
            append_note(notes, "no ai_select.conf" +
                                   (conf_file.empty() ? std::string() : " at " + conf_file) +
                                   ": ranks in Slurm's node order");
        }
        g_step.node = load_node(node, notes);
        prepare_nccl_topo(job_id, step_id, node, notes);
        copy_message(note, notelen, notes);
        return notes.empty() ? 0 : 1;
    });
}

extern "C" void ai_spank_remember_option(const char *name, const char *value) {
    try {
        if (name && value)
            g_options[name] = value;
    } catch (...) {  // out of memory: the task goes without this option's variables
    }
}

extern "C" void ai_spank_step_cleanup(void) {
    if (g_step.wrote_nccl_topo) {
        std::error_code ec;
        std::filesystem::remove(g_step.nccl_topo_file, ec);
        g_step.wrote_nccl_topo = false;
    }
}

extern "C" int ai_spank_task_setup(void *ctx, ai_getenv_fn get, ai_setenv_fn set,
                                   ai_resolve_fn resolve, uint32_t job_id, int batch,
                                   uint32_t local_id, char *note, size_t notelen) {
    return guarded(note, notelen, [&] {
        std::string notes;
        // The batch step runs where the job runs: its nodes are the job's.
        const char *list_var = batch ? "SLURM_JOB_NODELIST" : "SLURM_STEP_NODELIST";
        const char *tasks_var = batch ? "SLURM_TASKS_PER_NODE" : "SLURM_STEP_TASKS_PER_NODE";
        std::string tasks_text = env_text(ctx, get, tasks_var);
        if (batch) {
            // The job's task counts may be absent (no -n): one "task" per node then.
            auto nodes = expand_hostlist(env_text(ctx, get, list_var), list_var);
            if (nodes && tasks_text.empty())
                tasks_text = "1(x" + std::to_string(nodes->size()) + ")";
        }
        auto step = parse_step_info(job_id, batch != 0, env_text(ctx, get, list_var), tasks_text);
        if (!step) {
            copy_message(note, notelen, step.error().message());
            return -1;
        }
        RankLayout layout = rank_layout(*step, g_step.fabric ? &*g_step.fabric : nullptr);

        TaskPlace place;
        place.node = env_text(ctx, get, "SLURMD_NODENAME");
        place.local_id = local_id;
        const char *gpus_var = batch ? "SLURM_JOB_GPUS" : "SLURM_STEP_GPUS";
        auto gpus = parse_gpu_list(gpus_var, env_text(ctx, get, gpus_var));
        if (gpus)
            place.node_gpus = std::move(gpus).value();
        else
            append_note(notes, gpus.error().message());
        if (g_step.fabric)
            if (int h = g_step.fabric->host_index(place.node); h >= 0)
                place.gpu_rails = host_gpu_rails(*g_step.fabric, h);
        for (auto id : text::split(env_text(ctx, get, "CUDA_VISIBLE_DEVICES"), ','))
            if (!text::trim(id).empty())
                place.cuda_ids.emplace_back(text::trim(id));

        const std::string &first = step->nodes[layout.order.front()];
        const char *addr = resolve ? resolve(first.c_str()) : nullptr;
        TaskEnv env =
            task_environment(g_config, *step, layout, place, g_step.node ? &*g_step.node : nullptr,
                             addr && *addr ? addr : first, g_step.nccl_topo_file);
        elastic_env(ctx, get, job_id, env.set, notes);
        checkpoint_env(ctx, get, job_id, env.set, notes);
        for (const auto &[name, value] : env.set)
            if (set(ctx, name.c_str(), value.c_str()) != 0)
                append_note(notes, "cannot set " + name);
        apply_affinity(env.cpus, notes);
        for (const auto &n : env.notes)
            append_note(notes, n);
        copy_message(note, notelen, notes);
        return notes.empty() ? 0 : 1;
    });
}
