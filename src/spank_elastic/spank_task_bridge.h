/*
 * The C face of the SPANK plugin's C++ work: its plugstack.conf arguments, the --ai-dag
 * compaction at submit time, options from environment variables, and each task's
 * environment in slurmstepd (all of it in SpankStep, spank_step.hpp: this face only
 * translates). Every function catches every exception: a failure is a return code and a
 * message, which spank_ai.c logs, never a crash of sbatch, srun or slurmstepd.
 */
#ifndef SLURM_AI_SPANK_TASK_BRIDGE_H
#define SLURM_AI_SPANK_TASK_BRIDGE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Parses the plugstack.conf arguments and keeps them. 0, or -1 with a message. */
int ai_spank_configure(int argc, char **argv, char *err, size_t errlen);

/* Reads and checks a --ai-dag file; on success writes its compact form (malloc'ed, the
 * caller frees) to *compact. 0, or -1 with a message naming the file and the field. */
int ai_spank_compact_dag(const char *path, char **compact, char *err, size_t errlen);

/* The environment variable that may give option i's value for this program ("sbatch",
 * "salloc" or "srun"), e.g. SBATCH_AI_COMM; NULL when the program has none. */
const char *ai_spank_option_env_var(size_t i, const char *program);

/* slurmstepd, once per step: loads the fabric and this node's topology (config beside
 * slurm_conf_path unless the arguments name one), finds where elastic jobs' views live
 * (ElasticViewDir, else under state_save_location) and, where enabled, writes the NCCL
 * topology file. Never fails the step: a problem is returned as a note (1) for the log,
 * and tasks then get what can still be computed. 0 when all went well. */
int ai_spank_step_setup(const char *slurm_conf_path, const char *state_save_location,
                        const char *node_name, uint32_t job_id, uint32_t step_id, char *note,
                        size_t notelen);

/* slurmstepd: an --ai-* option's value as Slurm handed it to the plugin's option callback
 * (Slurm removes the options from the tasks' environment before they start). */
int ai_spank_remember_option(const char *name, const char *value, char *err, size_t errlen);

/* Removes what step setup wrote (the NCCL topology file). 0, or -1 with a message. */
int ai_spank_step_cleanup(char *err, size_t errlen);

typedef const char *(*ai_getenv_fn)(void *ctx, const char *name);
typedef int (*ai_setenv_fn)(void *ctx, const char *name, const char *value);
typedef const char *(*ai_resolve_fn)(const char *node_name);

/* In one task, before exec: computes its environment from the variables Slurm set (read
 * with get), exports it with set, and narrows the CPU affinity to its GPUs' NUMA node.
 * resolve maps a node name to its address (NULL: the name itself). 0 when done; 1 when
 * something was skipped (note says what); -1 on error (message in note). */
int ai_spank_task_setup(void *ctx, ai_getenv_fn get, ai_setenv_fn set, ai_resolve_fn resolve,
                        uint32_t job_id, int batch, uint32_t local_id, char *note, size_t notelen);

#ifdef __cplusplus
}
#endif

#endif
