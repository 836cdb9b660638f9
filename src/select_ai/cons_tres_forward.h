/*
 * The stock select/cons_tres plugin, loaded beside this one so that every entry point
 * can be forwarded to it. Only select_ai.c uses this.
 */
#ifndef SLURM_AI_CONS_TRES_FORWARD_H
#define SLURM_AI_CONS_TRES_FORWARD_H

#include "select_api.h"

/* cons_tres's entry points, in the order of slurm_select_ops_t; valid after load. */
extern ai_select_ops_t cons_tres;

/*
 * Finds select_cons_tres.so (PluginDir first, then the path the suite was built with),
 * opens it and resolves all its entry points (AI_SELECT_ENTRY_POINTS). Calls its init() unless
 * Slurm itself has already loaded it. Returns SLURM_SUCCESS or SLURM_ERROR (logged).
 */
extern int cons_tres_load(void);

/* Calls cons_tres's fini() if cons_tres_load() called its init(), and closes it. */
extern void cons_tres_unload(void);

#endif
