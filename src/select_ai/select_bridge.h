/*
 * The C face of the suite's C++ for the select plugin. Plain C types only; every function
 * catches all exceptions and reports them as a return code plus a message in err.
 */
#ifndef SLURM_AI_SELECT_BRIDGE_H
#define SLURM_AI_SELECT_BRIDGE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Reads a job's --ai-* hints from its SPANK environment (job_ptr->spank_job_env).
 * Returns 1 when the job has hints (a one-line summary is written to summary), 0 when it
 * has none, -1 when one is invalid (err names the option and value; valid ones are still
 * summarised).
 */
int ai_select_read_hints(const char *const *env, uint32_t env_size, char *summary,
                         size_t summary_len, char *err, size_t errlen);

/*
 * Writes what the plugin saw and decided for a job to
 * <state_dir>/ai_select/jobs/<job_id>.json, atomically (write, then rename), so that the
 * record can be read while the job runs and after it ends. Returns 0 or -1 (err set).
 */
int ai_select_record_job(const char *state_dir, uint32_t job_id, const char *nodes,
                         const char *const *env, uint32_t env_size, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
