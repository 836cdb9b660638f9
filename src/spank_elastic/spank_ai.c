/*
 * The suite's SPANK plugin ("ai"): gives sbatch, salloc and srun the --ai-* options.
 *
 * Options are registered with spank_option_register() from slurm_spank_init() in every
 * context: in the allocator context (sbatch/salloc) Slurm never reads a static
 * spank_options table. A value is checked where the user types it, so a bad one stops
 * sbatch/salloc/srun before any job exists; a good one travels in the job's SPANK
 * environment as _SLURM_SPANK_OPTION_ai_<option>, where the select plugin reads it.
 *
 * Every callback is safe to call more than once.
 */
#include <slurm/spank.h>
#include <stddef.h>

#include "spank_options_bridge.h"

/* Expands to the plugin_name/plugin_type/plugin_version symbols Slurm looks for. */
SPANK_PLUGIN(ai, 1);

#define AI_MAX_OPTIONS 16

static struct spank_option options[AI_MAX_OPTIONS];

static int _check_option(int val, const char *optarg, int remote) {
    char err[512];

    (void)remote;
    if (ai_spank_option_check((size_t)val, optarg, err, sizeof(err)) == 0)
        return 0;
    slurm_error("ai: %s", err);
    return -1;
}

int slurm_spank_init(spank_t sp, int ac, char **av) {
    size_t n = ai_spank_option_count();
    spank_context_t ctx = spank_context();

    (void)ac;
    (void)av;
    if (n > AI_MAX_OPTIONS)
        n = AI_MAX_OPTIONS;
    for (size_t i = 0; i < n; i++) {
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
    return 0;
}
