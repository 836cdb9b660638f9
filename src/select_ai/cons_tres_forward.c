/*
 * Loading select/cons_tres as a library. Up to 24.11, Slurm's select_g_init(0) (slurmctld
 * and client commands) loads every select plugin of PluginDir, cons_tres among them, and
 * calls its init(); select_g_init(1) (slurmd) loads only ours, and from 25.05 slurmctld
 * loads only ours too. So we open the very same file: if Slurm has it open already,
 * dlopen returns Slurm's handle and its state is shared; if not, we are the ones who must
 * call its init() and fini().
 *
 * RTLD_LAZY is required: cons_tres refers to slurmctld-only symbols, which do not exist in
 * slurmd or in the client commands and must never be resolved there.
 */
#include "config.h"

#include <dlfcn.h>
#include <string.h>
#include <unistd.h>

#include "src/common/slurm_xlator.h"

#include "cons_tres_forward.h"
#include "src/common/log.h"
#include "src/common/read_config.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"

#ifndef SLURM_AI_CONS_TRES_PATH
#define SLURM_AI_CONS_TRES_PATH "select_cons_tres.so"
#endif

ai_select_ops_t cons_tres;

/* In the order of ai_select_ops_t (and of node_select_syms[] in Slurm's select.c). */
static const char *syms[] = {AI_SELECT_SYMS};

static void *handle;
static bool we_called_init;

_Static_assert(sizeof(syms) / sizeof(syms[0]) == sizeof(ai_select_ops_t) / sizeof(void *),
               "syms[] must list every member of ai_select_ops_t");
_Static_assert(sizeof(syms) / sizeof(syms[0]) == AI_SELECT_ENTRY_POINTS + 1,
               "one plugin_id and AI_SELECT_ENTRY_POINTS entry points");

/* First select_cons_tres.so in PluginDir (a colon-separated list), else the build's. */
static char *_find_cons_tres(void) {
    char *dirs = xstrdup(slurm_conf.plugindir), *save = NULL, *dir;
    char *found = NULL;

    for (dir = dirs ? strtok_r(dirs, ":", &save) : NULL; dir && !found;
         dir = strtok_r(NULL, ":", &save)) {
        char *path = xstrdup_printf("%s/select_cons_tres.so", dir);
        if (access(path, R_OK) == 0)
            found = path;
        else
            xfree(path);
    }
    xfree(dirs);
    return found ? found : xstrdup(SLURM_AI_CONS_TRES_PATH);
}

extern int cons_tres_load(void) {
    char *path;
    int (*init_fn)(void);

    if (handle)
        return SLURM_SUCCESS;

    path = _find_cons_tres();
    handle = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
    we_called_init = (handle == NULL);
    if (!handle)
        handle = dlopen(path, RTLD_LAZY);
    if (!handle) {
        error("select/ai_cons_tres: cannot load %s: %s", path, dlerror());
        xfree(path);
        return SLURM_ERROR;
    }
    for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
        void *fn = dlsym(handle, syms[i]);
        if (!fn) {
            error("select/ai_cons_tres: %s has no symbol %s", path, syms[i]);
            dlclose(handle);
            handle = NULL;
            xfree(path);
            return SLURM_ERROR;
        }
        ((void **)&cons_tres)[i] = fn;
    }
    debug("select/ai_cons_tres: forwarding to %s%s", path,
          we_called_init ? "" : " (already loaded by Slurm)");
    xfree(path);

    if (we_called_init && (init_fn = dlsym(handle, "init")) && init_fn() != SLURM_SUCCESS) {
        error("select/ai_cons_tres: init() of select/cons_tres failed");
        return SLURM_ERROR;
    }
    return SLURM_SUCCESS;
}

extern void cons_tres_unload(void) {
    int (*fini_fn)(void);

    if (!handle)
        return;
    if (we_called_init && (fini_fn = dlsym(handle, "fini")))
        fini_fn();
    dlclose(handle);
    handle = NULL;
    memset(&cons_tres, 0, sizeof(cons_tres));
}
