/*
 * The C face of the --ai-* option table and its validation, for the SPANK adapter.
 * The table lives in C++ (slurm_ai/job/job_hints.hpp) so that the select plugin parses the
 * values with the very same code; so do the names of the variables that carry them
 * (slurm_ai/job/spank_env.hpp), so that the select plugin reads what this plugin writes.
 */
#ifndef SLURM_AI_SPANK_OPTIONS_BRIDGE_H
#define SLURM_AI_SPANK_OPTIONS_BRIDGE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

size_t ai_spank_option_count(void);
/* Name (without "--"), argument description and help text of option i; NULL past the end. */
const char *ai_spank_option_name(size_t i);
const char *ai_spank_option_arginfo(size_t i);
const char *ai_spank_option_usage(size_t i);

/* Validates value for option i. Returns 0, or -1 with a message naming option and value. */
int ai_spank_option_check(size_t i, const char *value, char *err, size_t errlen);

/* The variable sbatch, salloc and srun read option i's value from in their own environment,
 * as Slurm names it (SLURM_SPANK_ + the option's variable: slurm_ai/job/spank_env.hpp);
 * NULL past the end. */
const char *ai_spank_option_command_env_name(size_t i);
/* The name under which the compact task DAG joins the job's SPANK environment. */
const char *ai_spank_dag_env_name(void);

#ifdef __cplusplus
}
#endif

#endif
