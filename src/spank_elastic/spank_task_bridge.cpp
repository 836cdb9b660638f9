#include "spank_task_bridge.h"

#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "slurm_ai/common/c_boundary.hpp"
#include "slurm_ai/job/job_hints.hpp"
#include "slurm_ai/job/spank_env.hpp"
#include "slurm_ai/spank_elastic/spank_step.hpp"

using namespace slurm_ai;

namespace {

// One per process: sbatch/srun's (configure, compact_dag) or one slurmstepd's step.
SpankStep &step() {
    static SpankStep s;
    return s;
}

}  // namespace

extern "C" int ai_spank_configure(int argc, char **argv, char *err, size_t errlen) {
    return guarded(err, errlen, [&] {
        std::vector<std::string_view> args(argv, argv + (argc > 0 ? argc : 0));
        if (auto e = step().configure(args)) {
            copy_message(err, errlen, e->message());
            return -1;
        }
        return 0;
    });
}

extern "C" int ai_spank_compact_dag(const char *path, char **compact, char *err, size_t errlen) {
    return guarded(err, errlen, [&] {
        *compact = nullptr;
        auto text = compact_dag_for_job(path ? path : "");
        if (!text) {
            copy_message(err, errlen, "--ai-dag: " + text.error().message());
            return -1;
        }
        *compact = strdup(text.value().c_str());
        return *compact ? 0 : -1;
    });
}

extern "C" const char *ai_spank_option_env_var(size_t i, const char *program) {
    static thread_local std::string name;
    auto table = hint_options();
    if (i >= table.size() || !program)
        return nullptr;
    auto var = option_input_env_name(program, table[i].name);
    if (!var)
        return nullptr;
    name = std::move(*var);
    return name.c_str();
}

extern "C" int ai_spank_step_setup(const char *slurm_conf_path, const char *state_save_location,
                                   const char *node_name, uint32_t job_id, uint32_t step_id,
                                   char *note, size_t notelen) {
    return guarded(note, notelen, [&] {
        const std::string notes =
            step().setup(slurm_conf_path ? slurm_conf_path : "",
                         state_save_location ? state_save_location : "",
                         node_name ? node_name : "", job_id, step_id);
        copy_message(note, notelen, notes);
        return notes.empty() ? 0 : 1;
    });
}

extern "C" int ai_spank_remember_option(const char *name, const char *value, char *err,
                                        size_t errlen) {
    return guarded(err, errlen, [&] {
        if (name && value)
            step().remember_option(name, value);
        return 0;
    });
}

extern "C" int ai_spank_step_cleanup(char *err, size_t errlen) {
    return guarded(err, errlen, [&] {
        if (auto e = step().cleanup()) {
            copy_message(err, errlen, *e);
            return -1;
        }
        return 0;
    });
}

extern "C" int ai_spank_task_setup(void *ctx, ai_getenv_fn get, ai_setenv_fn set,
                                   ai_resolve_fn resolve, uint32_t job_id, int batch,
                                   uint32_t local_id, char *note, size_t notelen) {
    return guarded(note, notelen, [&] {
        TaskIo io;
        io.get = [&](const char *name) { return get(ctx, name); };
        io.set = [&](const char *name, const char *value) { return set(ctx, name, value) == 0; };
        if (resolve)
            io.resolve = [&](const char *node) { return resolve(node); };
        auto notes = step().task_setup(io, job_id, batch != 0, local_id);
        if (!notes) {
            copy_message(note, notelen, notes.error().message());
            return -1;
        }
        copy_message(note, notelen, notes.value());
        return notes.value().empty() ? 0 : 1;
    });
}
