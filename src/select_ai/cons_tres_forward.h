/*
 * The stock select/cons_tres plugin, loaded beside this one so that every entry point
 * can be forwarded to it. Only select_ai.c uses this.
 */
#ifndef SLURM_AI_CONS_TRES_FORWARD_H
#define SLURM_AI_CONS_TRES_FORWARD_H

#include "select_api.h"

/* How plugin_name begins in every build of the suite's select plugin. */
#define AI_PLUGIN_NAME "AI topology-aware selection"
/*
 * What every log line of the plugin starts with, whichever name it is installed under
 * (select/ai_cons_tres, or select/cons_tres in the as-cons-tres build): an admin tells the
 * suite's lines from Slurm's own by it.
 */
#define AI_LOG "select/ai_cons_tres"

/* cons_tres's entry points, in the order of slurm_select_ops_t; valid after load. */
extern ai_select_ops_t cons_tres;

/*
 * Finds Slurm's own select_cons_tres.so (the first in PluginDir that is not one of the
 * suite's builds, else the path the suite was built with), opens it and resolves all its
 * entry points (AI_SELECT_ENTRY_POINTS). Calls its init() unless Slurm itself, or the
 * suite's other build, has already loaded it. Returns SLURM_SUCCESS or SLURM_ERROR (logged).
 */
extern int cons_tres_load(void);

/* Calls cons_tres's fini() if cons_tres_load() called its init(), and closes it. */
extern void cons_tres_unload(void);

#endif
