/*
 * The C face of the --ai-* option table and its validation, for the SPANK adapter.
 * The table lives in C++ (slurm_ai/job_hints.hpp) so that the select plugin parses the
 * values with the very same code.
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

#ifdef __cplusplus
}
#endif

#endif
