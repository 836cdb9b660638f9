/*
 * The suite's SPANK plugin ("ai").
 *
 * sbatch, salloc, srun (allocator and local contexts): the --ai-* options. They are
 * registered with spank_option_register() from slurm_spank_init(), since the allocator
 * context never reads a static spank_options table. A value is checked where the user
 * types it, so a bad one stops the command before any job exists; a good one travels in
 * the job's SPANK environment (under Slurm's name for it: slurm_ai/job/spank_env.hpp),
 * where the select plugin reads it. SBATCH_AI_*, SALLOC_AI_* and SLURM_AI_* (srun) give
 * the same values from the environment; the command line wins. --ai-dag's file is read and
 * checked here, and its compact form joins the job's SPANK environment, so slurmctld never
 * needs to read the user's file.
 *
 * slurmstepd (remote context): every task gets the environment PyTorch, DeepSpeed and
 * NCCL read (ranks in the placement's order, GPU/NIC/CPU binding, NCCL hints). A problem
 * there is logged and the task runs with what could be computed: the plugin never fails
 * a step for its own sake.
 *
 * Arguments on the plugstack.conf line (key=value; unknown keys are an error): see
 * slurm_ai/spank_config.hpp and docs/user-guide.md.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <slurm/slurm.h>
#include <slurm/spank.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spank_options_bridge.h"
#include "spank_task_bridge.h"

/* Expands to the plugin_name/plugin_type/plugin_version symbols Slurm looks for. */
SPANK_PLUGIN(ai, 1);

#define AI_MAX_OPTIONS 16
#define AI_MSG 1024

static struct spank_option options[AI_MAX_OPTIONS];
static size_t option_count;
/* Where an option's value came from when it was an SBATCH_AI_-style variable. */
static const char *from_env[AI_MAX_OPTIONS];
static int step_ready;
/* The last --ai-dag value taken (spank_option_getopt is not available in init_post_opt). */
static char *dag_path;

static int _check_option(int val, const char *optarg, int remote) {
    char err[AI_MSG];

    if (ai_spank_option_check((size_t)val, optarg, err, sizeof(err)) == 0) {
        if (remote && val >= 0 && (size_t)val < option_count)
            if (ai_spank_remember_option(options[val].name, optarg, err, sizeof(err)) < 0)
                slurm_error("ai: --%s not kept for the tasks: %s", options[val].name, err);
        if (val >= 0 && (size_t)val < option_count && strcmp(options[val].name, "ai-dag") == 0) {
            free(dag_path);
            dag_path = optarg ? strdup(optarg) : NULL;
        }
        return 0;
    }
    if (val >= 0 && val < AI_MAX_OPTIONS && from_env[val])
        slurm_error("ai: %s (from %s)", err, from_env[val]);
    else
        slurm_error("ai: %s", err);
    return -1;
}

/*
 * SBATCH_AI_COMM=... works like --ai-comm=...: copied to the variable Slurm's own option
 * processing reads from the environment (before the command line, which thus wins).
 */
static void _options_from_env(void) {
    for (size_t i = 0; i < option_count; i++) {
        const char *var = ai_spank_option_env_var(i, program_invocation_short_name);
        const char *value = var ? getenv(var) : NULL;
        /* The variable Slurm itself reads the option's value from in the environment. */
        const char *slurm_var = ai_spank_option_command_env_name(i);

        if (!value || !slurm_var || getenv(slurm_var))
            continue;
        from_env[i] = strdup(var);
        if (setenv(slurm_var, value, 1) != 0)
            slurm_error("ai: cannot take %s from the environment: %s", var, strerror(errno));
    }
}

int slurm_spank_init(spank_t sp, int ac, char **av) {
    spank_context_t ctx = spank_context();
    char err[AI_MSG];

    if (ai_spank_configure(ac, av, err, sizeof(err)) != 0) {
        slurm_error("ai: %s", err);
        return -1;
    }
    option_count = ai_spank_option_count();
    if (option_count > AI_MAX_OPTIONS)
        option_count = AI_MAX_OPTIONS;
    for (size_t i = 0; i < option_count; i++) {
        spank_err_t rc;

        options[i] = (struct spank_option){
            .name = (char *)ai_spank_option_name(i),
            .arginfo = (char *)ai_spank_option_arginfo(i),
            .usage = (char *)ai_spank_option_usage(i),
            .has_arg = 1,
            .val = (int)i,
            .cb = _check_option,
        };
        rc = spank_option_register(sp, &options[i]);
        /* slurmd and job-script contexts have no options to take. */
        if (rc != ESPANK_SUCCESS &&
            (ctx == S_CTX_ALLOCATOR || ctx == S_CTX_LOCAL || ctx == S_CTX_REMOTE)) {
            slurm_error("ai: cannot register --%s: %s", options[i].name, spank_strerror(rc));
            return -1;
        }
    }
    if (ctx == S_CTX_ALLOCATOR || ctx == S_CTX_LOCAL)
        _options_from_env();
    return 0;
}

/*
 * Reads, checks and compacts the --ai-dag file of a new job. A step inside an existing
 * allocation inherits the option from the job's environment: its DAG was read at submit
 * time, and the file may be gone by now.
 */
static int _compact_dag(spank_t sp) {
    const char *path = dag_path;
    char *compact = NULL, err[AI_MSG];
    spank_err_t rc;

    if (!path)
        return 0;
    if (spank_context() == S_CTX_LOCAL && getenv("SLURM_JOB_ID"))
        return 0;
    if (ai_spank_compact_dag(path, &compact, err, sizeof(err)) != 0) {
        slurm_error("ai: %s", err);
        return -1;
    }
    rc = spank_job_control_setenv(sp, ai_spank_dag_env_name(), compact, 1);
    free(compact);
    if (rc != ESPANK_SUCCESS) {
        slurm_error("ai: cannot attach the DAG of %s to the job: %s", path, spank_strerror(rc));
        return -1;
    }
    return 0;
}

int slurm_spank_init_post_opt(spank_t sp, int ac, char **av) {
    spank_context_t ctx = spank_context();

    (void)ac;
    (void)av;
    if (ctx == S_CTX_ALLOCATOR || ctx == S_CTX_LOCAL)
        return _compact_dag(sp);
    return 0;
}

/* slurm.conf as slurmstepd knows it (its library's copy; NULL in a process without one). */
static const slurm_conf_t *_slurm_conf(void) {
    return dlsym(RTLD_DEFAULT, "slurm_conf");
}

/* slurm.conf's path; ai_select.conf and topology.conf sit beside it. */
static const char *_slurm_conf_path(void) {
    const slurm_conf_t *conf = _slurm_conf();
    const char *env = getenv("SLURM_CONF");

    if (conf && conf->slurm_conf && conf->slurm_conf[0])
        return conf->slurm_conf;
    return env ? env : "/etc/slurm/slurm.conf";
}

/*
 * A node's address from slurm.conf (NodeAddr), where the Slurm library loaded into this
 * process can tell (slurmstepd always can); the result is Slurm-allocated, so Slurm's
 * own xfree releases it.
 */
static const char *_node_addr(const char *node) {
    static char addr[256];
    char *(*get_address)(const char *) =
        (char *(*)(const char *))dlsym(RTLD_DEFAULT, "slurm_conf_get_address");
    void (*release)(void **) = (void (*)(void **))dlsym(RTLD_DEFAULT, "slurm_xfree");
    char *found;

    if (!get_address || !release || !(found = get_address(node)))
        return NULL;
    snprintf(addr, sizeof(addr), "%s", found);
    release((void **)&found);
    return addr;
}

/* Once per step in slurmstepd, before its tasks are forked. */
int slurm_spank_user_init(spank_t sp, int ac, char **av) {
    uint32_t job_id = 0, step_id = 0;
    char note[AI_MSG];
    const char *node = getenv("SLURMD_NODENAME");

    (void)ac;
    (void)av;
    if (spank_context() != S_CTX_REMOTE)
        return 0;
    spank_get_item(sp, S_JOB_ID, &job_id);
    spank_get_item(sp, S_JOB_STEPID, &step_id);
    const slurm_conf_t *conf = _slurm_conf();

    if (ai_spank_step_setup(_slurm_conf_path(), conf ? conf->state_save_location : NULL,
                            node ? node : "", job_id, step_id, note, sizeof(note)) != 0)
        slurm_verbose("ai: job %u step %u on %s: %s", job_id, step_id, node ? node : "?", note);
    step_ready = 1;
    return 0;
}

static const char *_task_getenv(void *ctx, const char *name) {
    /* Node lists of large jobs can be long; a task calls this from one thread. */
    static char value[1 << 16];

    if (spank_getenv((spank_t)ctx, name, value, sizeof(value)) != ESPANK_SUCCESS)
        return NULL;
    return value;
}

static int _task_setenv(void *ctx, const char *name, const char *value) {
    return spank_setenv((spank_t)ctx, name, value, 1) == ESPANK_SUCCESS ? 0 : -1;
}

/* In each task, after Slurm set its environment and binding, before exec. */
int slurm_spank_task_init(spank_t sp, int ac, char **av) {
    uint32_t job_id = 0, step_id = 0, local_id = 0;
    char note[AI_MSG];
    int rc;

    (void)ac;
    (void)av;
    if (spank_context() != S_CTX_REMOTE || !step_ready)
        return 0;
    spank_get_item(sp, S_JOB_ID, &job_id);
    spank_get_item(sp, S_JOB_STEPID, &step_id);
    spank_get_item(sp, S_TASK_ID, &local_id);
    rc = ai_spank_task_setup(sp, _task_getenv, _task_setenv, _node_addr, job_id,
                             step_id == SLURM_BATCH_SCRIPT, local_id, note, sizeof(note));
    if (rc < 0)
        slurm_error("ai: job %u step %u task %u: environment not set: %s", job_id, step_id,
                    local_id, note);
    else if (rc > 0)
        slurm_verbose("ai: job %u step %u task %u: %s", job_id, step_id, local_id, note);
    return 0;
}

int slurm_spank_exit(spank_t sp, int ac, char **av) {
    char err[AI_MSG];

    (void)sp;
    (void)ac;
    (void)av;
    if (spank_context() == S_CTX_REMOTE && ai_spank_step_cleanup(err, sizeof(err)) < 0)
        slurm_error("ai: %s", err);
    return 0;
}
