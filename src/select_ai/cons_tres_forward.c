/*
 * Loading select/cons_tres as a library. Up to 24.11, Slurm's select_g_init(0) (slurmctld
 * and client commands) loads every select plugin of PluginDir, cons_tres among them, and
 * calls its init(); select_g_init(1) (slurmd) loads only ours, and from 25.05 slurmctld
 * loads only ours too. So we open the very same file: if Slurm has it open already,
 * dlopen returns Slurm's handle and its state is shared; if not, we are the ones who must
 * call its init() and fini(). Installed as select/cons_tres (the as-cons-tres build, first
 * in PluginDir), this plugin is the only select_cons_tres.so Slurm loads: Slurm's own is
 * the next one in PluginDir, which we open and init.
 *
 * RTLD_LAZY is required: cons_tres refers to slurmctld-only symbols, which do not exist in
 * slurmd or in the client commands and must never be resolved there.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr */
#endif
#include "config.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
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

/* Whether PATH is the very file this code was loaded from. */
static bool _is_this_file(const char *path) {
    Dl_info self;
    struct stat a, b;

    return dladdr((void *)_is_this_file, &self) && self.dli_fname &&
           stat(self.dli_fname, &a) == 0 && stat(path, &b) == 0 && a.st_dev == b.st_dev &&
           a.st_ino == b.st_ino;
}

/*
 * Opens PATH if it is Slurm's own cons_tres, not a build of the suite (the as-cons-tres
 * build is a select_cons_tres.so too, first in PluginDir, and select_ai_cons_tres.so may be
 * loaded beside it). *loaded_before: the file was open already (Slurm, or the suite's
 * other build, called its init()). NULL, with *why set, if it cannot or must not be used.
 */
static void *_open_cons_tres(const char *path, bool *loaded_before, char **why) {
    void *h;
    const char *name;

    if (_is_this_file(path)) {
        *why = xstrdup_printf("%s is this plugin", path);
        return NULL;
    }
    h = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
    *loaded_before = (h != NULL);
    if (!h && !(h = dlopen(path, RTLD_LAZY))) {
        *why = xstrdup_printf("cannot load %s: %s", path, dlerror());
        return NULL;
    }
    name = dlsym(h, "plugin_name");
    if (name && !strncmp(name, AI_PLUGIN_NAME, strlen(AI_PLUGIN_NAME))) {
        *why = xstrdup_printf("%s is the suite's (%s)", path, name);
        dlclose(h);
        return NULL;
    }
    return h;
}

/* The first Slurm cons_tres in PluginDir (a colon-separated list), else the build's. */
static int _find_cons_tres(char **path_out) {
    char *dirs = xstrdup(slurm_conf.plugindir), *save = NULL, *dir, *why = NULL;
    bool loaded_before = false;

    for (dir = dirs ? strtok_r(dirs, ":", &save) : NULL; dir && !handle;
         dir = strtok_r(NULL, ":", &save)) {
        char *path = xstrdup_printf("%s/select_cons_tres.so", dir);
        if (access(path, R_OK) == 0) {
            xfree(why);
            if ((handle = _open_cons_tres(path, &loaded_before, &why)))
                *path_out = xstrdup(path);
            else
                debug("%s: skipping %s", AI_LOG, why);
        }
        xfree(path);
    }
    xfree(dirs);
    if (!handle) {
        xfree(why);
        if ((handle = _open_cons_tres(SLURM_AI_CONS_TRES_PATH, &loaded_before, &why)))
            *path_out = xstrdup(SLURM_AI_CONS_TRES_PATH);
    }
    if (!handle) {
        error("%s: no select_cons_tres.so of Slurm's own in PluginDir=%s or at %s (last: %s)",
              AI_LOG, slurm_conf.plugindir, SLURM_AI_CONS_TRES_PATH, why);
        xfree(why);
        return SLURM_ERROR;
    }
    xfree(why);
    we_called_init = !loaded_before;
    return SLURM_SUCCESS;
}

extern int cons_tres_load(void) {
    char *path = NULL;
    int (*init_fn)(void);

    if (handle)
        return SLURM_SUCCESS;
    if (_find_cons_tres(&path) != SLURM_SUCCESS)
        return SLURM_ERROR;
    for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
        void *fn = dlsym(handle, syms[i]);
        if (!fn) {
            error("%s: %s has no symbol %s", AI_LOG, path, syms[i]);
            dlclose(handle);
            handle = NULL;
            xfree(path);
            return SLURM_ERROR;
        }
        ((void **)&cons_tres)[i] = fn;
    }
    debug("%s: forwarding to %s%s", AI_LOG, path, we_called_init ? "" : " (already loaded)");
    xfree(path);

    if (we_called_init && (init_fn = dlsym(handle, "init")) && init_fn() != SLURM_SUCCESS) {
        error("%s: init() of select/cons_tres failed", AI_LOG);
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
