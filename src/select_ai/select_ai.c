/*
 * select/ai_cons_tres: the suite's select plugin, as slurmctld, slurmd and the client
 * commands load it. This file holds the plugin's identity and its entry points; each one
 * forwards to select/cons_tres, which keeps doing the exact core, memory and GRES
 * accounting. The job test reads the job's --ai-* hints (from the SPANK environment that
 * sbatch/salloc/srun attached to the job); the placement engine hooks in there.
 *
 * The type contains "cons_tres" on purpose: Slurm enables its GPU/GRES code paths by
 * looking for that substring in SelectType.
 */
#include "select_ai_internal.h"

#include <limits.h> /* PATH_MAX */

#ifdef AI_SELECT_AS_CONS_TRES
/*
 * The as-cons-tres build: the same plugin under cons_tres's own type and id, installed in a
 * directory that comes before Slurm's in PluginDir, with SelectType=select/cons_tres. Slurm
 * loads a plugin name once, from the first directory that has it, so Slurm's own
 * cons_tres is then only reached through this plugin, and every check Slurm makes on the
 * select plugin's name or id (22.05's scontrol for CoreCnt= reservations, slurmd's node
 * layout) sees cons_tres. docs/admin-guide.md, "Installing as select/cons_tres".
 */
const char plugin_name[] = AI_PLUGIN_NAME " (installed as select/cons_tres)";
const char plugin_type[] = "select/cons_tres";
const uint32_t plugin_id = SELECT_PLUGIN_CONS_TRES;
#else
const char plugin_name[] = AI_PLUGIN_NAME " (forwarding to cons_tres)";
const char plugin_type[] = "select/ai_cons_tres";
const uint32_t plugin_id = AI_SELECT_PLUGIN_ID; /* select_api.h: per generation */
#endif
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

/*
 * init() also runs in every client command (select_g_init(0) loads all select plugins),
 * whose users would see anything logged at info level: log at debug only. The topology
 * is loaded later, in select_p_node_init(), which only slurmctld calls.
 */
int init(void) {
    debug("%s: loading as %s (plugin id %u)", AI_LOG, plugin_type, plugin_id);
    return cons_tres_load();
}

/*
 * slurmctld-only symbols. slurmd and the client commands load this plugin too, where
 * they do not exist, and Slurm opens plugins with RTLD_NOW: a direct reference would
 * keep the plugin from loading there. They are looked up in select_p_node_init(), which
 * only slurmctld calls; until then (and if one is missing) gangs, expansion placement and
 * the GRES merge are off and Slurm's own behaviour applies.
 */
struct ai_ctld_symbols ai_ctld;

static void _find_ctld_symbols(void) {
    ai_ctld.job_list = dlsym(RTLD_DEFAULT, "job_list");
    ai_ctld.avail_node_bitmap = dlsym(RTLD_DEFAULT, "avail_node_bitmap");
    ai_ctld.share_node_bitmap = dlsym(RTLD_DEFAULT, "share_node_bitmap");
    *(void **)&ai_ctld.find_job_record = dlsym(RTLD_DEFAULT, "find_job_record");
    /* slurmctld's GRES bookkeeping: the names select_api.h gives for this release. */
    *(void **)&ai_ctld.gres_job_merge = dlsym(RTLD_DEFAULT, AI_GRES_SYMBOL(job_merge));
    *(void **)&ai_ctld.gres_job_alloc = dlsym(RTLD_DEFAULT, AI_GRES_SYMBOL(job_alloc));
    *(void **)&ai_ctld.gres_job_build_details =
        dlsym(RTLD_DEFAULT, AI_GRES_SYMBOL(job_build_details));
    ai_ctld.found = ai_ctld.job_list && ai_ctld.avail_node_bitmap && ai_ctld.share_node_bitmap &&
                    ai_ctld.find_job_record && ai_ctld.gres_job_merge && ai_ctld.gres_job_alloc &&
                    ai_ctld.gres_job_build_details;
    if (!ai_ctld.found)
        error(
            "%s: slurmctld symbols not found (%s); gangs, expansion placement and GPU job "
            "expansion are off",
            AI_LOG, dlerror());
}

int fini(void) {
    cons_tres_unload();
    return SLURM_SUCCESS;
}

/* (Re)reads the plugin's configuration and topology; a bad one keeps the last good. */
static void _load_topology(void) {
    char err[1024] = "", conf[PATH_MAX] = "", fabric[PATH_MAX] = "";
    /* Slurm 25.05+ reads topology.yaml where it exists and ignores topology.conf. */
    int reads_yaml = SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 5, 0);

    if (ai_select_beside_slurm_conf(slurm_conf.slurm_conf, reads_yaml, conf, sizeof(conf),
                                    fabric, sizeof(fabric), err, sizeof(err)) < 0) {
        error("%s: the files beside slurm.conf: %s", AI_LOG, err);
        return;
    }
    const char **names = xcalloc(node_record_count + 1, sizeof(char *));
    node_record_t *node_ptr;

    for (int i = 0; (node_ptr = next_node(&i)); i++)
        names[node_ptr->index] = node_ptr->name;
    for (int i = 0; i < node_record_count; i++)
        if (!names[i])
            names[i] = "";
    int rc = ai_select_load(conf, fabric, names, node_record_count, err, sizeof(err));
    if (rc < 0)
        error("%s: %s: %s; jobs are placed by %s", AI_LOG, conf, err,
              "the last good configuration, or plain cons_tres if there is none");
    else
        verbose("%s: loaded %s (fabric default %s)", AI_LOG, conf, fabric);
    if (rc > 0)
        info("%s: %s: %s", AI_LOG, conf, err);
    xfree(names);
}

/*
 * The failure history is read back, and written at once, also after a clean start: from
 * the first start on, a missing file is a lost one.
 */
static void _restore_state(const char *dir_name) {
    char err[512] = "";
    if (ai_select_state_restore(dir_name, err, sizeof(err)) < 0)
        error("%s: %s", AI_LOG, err);
    if (ai_select_state_save(dir_name, err, sizeof(err)) < 0)
        error("%s: cannot save state in %s: %s", AI_LOG, dir_name, err);
}

/* Expansion jobs of a restarted slurmctld get their link to the job they grow back. */
static void _restore_expansion_links(list_t *job_list) {
    list_itr_t *it;
    job_record_t *job_ptr;

    if (!job_list)
        return;
    it = list_iterator_create(job_list);
    while ((job_ptr = list_next(it)))
        ai_restore_expansion_link(job_ptr);
    list_iterator_destroy(it);
}

#if AI_SELECT_API < 2505
int select_p_state_save(char *dir_name) {
    char err[512] = "";
    if (ai_select_state_save(dir_name, err, sizeof(err)) < 0)
        error("%s: cannot save state in %s: %s", AI_LOG, dir_name, err);
    return cons_tres.state_save(dir_name);
}

/* slurmctld calls this at start and at every reconfigure. */
int select_p_state_restore(char *dir_name) {
    _restore_state(dir_name);
    return cons_tres.state_restore(dir_name);
}

int select_p_job_init(list_t *job_list) {
    _restore_expansion_links(job_list);
    return cons_tres.job_init(job_list);
}
#endif

int select_p_node_init(void) {
    int rc = cons_tres.node_init();
    _find_ctld_symbols();
    _load_topology();
#if AI_SELECT_API >= 2505
    /*
     * From 25.05 there are no state_restore and job_init calls. node_init comes at start
     * and at every reconfigure, as state_restore did, and after slurmctld has loaded its
     * jobs (read_slurm_conf). The history changes only at a failure, which saves it
     * (select_ai_nodes.c): nothing is left to save at shutdown.
     */
    _restore_state(slurm_conf.state_save_location);
    if (ai_ctld.job_list)
        _restore_expansion_links(*ai_ctld.job_list);
#endif
    return rc;
}

/* The job test: see select_ai_place.c. */
int select_p_job_test(job_record_t *job_ptr, bitstr_t *bitmap, uint32_t min_nodes,
                      uint32_t max_nodes, uint32_t req_nodes, uint16_t mode,
                      list_t *preemptee_candidates, list_t **preemptee_job_list,
                      AI_TEST_EXTRA_PARAMS) {
    ai_test_extra_t extra = AI_TEST_EXTRA_INIT;
    return ai_job_test(job_ptr, bitmap, min_nodes, max_nodes, req_nodes, mode, preemptee_candidates,
                       preemptee_job_list, &extra);
}

int select_p_job_begin(job_record_t *job_ptr) {
    return cons_tres.job_begin(job_ptr);
}

int select_p_job_ready(job_record_t *job_ptr) {
    return cons_tres.job_ready(job_ptr);
}

/* Growing a job by merging an expansion job into it: see select_ai_expand.c. */
int select_p_job_expand(job_record_t *from_job_ptr, job_record_t *to_job_ptr) {
    return ai_job_expand(from_job_ptr, to_job_ptr);
}

int select_p_job_resized(job_record_t *job_ptr, node_record_t *node_ptr) {
    return cons_tres.job_resized(job_ptr, node_ptr);
}

#if AI_SELECT_API < 2302
/*
 * Without a database (AccountingStorageType=accounting_storage/none) a resized job keeps
 * db_index NO_VAL64 ("being set") for ever, and slurmctld refuses every later update of
 * it, a second resize included. Nothing would ever set it: once the resize is over (the
 * resizer signals the job), the job is given the index a job without a database has.
 */
int select_p_job_signal(job_record_t *job_ptr, int signal) {
    if (job_ptr->db_index == NO_VAL64 && !IS_JOB_RESIZING(job_ptr) &&
        !xstrcmp(slurm_conf.accounting_storage_type, "accounting_storage/none")) {
        job_ptr->db_index = 0;
        debug("%s: %pJ: accounting index reset after its resize", AI_LOG, job_ptr);
    }
    return cons_tres.job_signal(job_ptr, signal);
}
#endif

#if AI_SELECT_API >= 2605
void select_p_job_mem_reduce(job_record_t *job_ptr) {
    cons_tres.job_mem_reduce(job_ptr);
}
#endif

int select_p_job_fini(job_record_t *job_ptr) {
    char err[256];
    if (ai_select_forget(job_ptr->job_id, err, sizeof(err)) < 0)
        error("%s: %pJ: its decisions not forgotten: %s", AI_LOG, job_ptr, err);
    else if (slurm_conf.state_save_location &&
             ai_select_save_pending(slurm_conf.state_save_location, err, sizeof(err)) < 0)
        error("%s: %pJ: pending notes not saved: %s", AI_LOG, job_ptr, err);
    return cons_tres.job_fini(job_ptr);
}

int select_p_job_suspend(job_record_t *job_ptr, bool indf_susp) {
    return cons_tres.job_suspend(job_ptr, indf_susp);
}

int select_p_job_resume(job_record_t *job_ptr, bool indf_susp) {
    return cons_tres.job_resume(job_ptr, indf_susp);
}

#if AI_SELECT_API < 2505
bitstr_t *select_p_step_pick_nodes(job_record_t *job_ptr, select_jobinfo_t *jobinfo,
                                   uint32_t node_count, bitstr_t **avail_nodes) {
    return cons_tres.step_pick_nodes(job_ptr, jobinfo, node_count, avail_nodes);
}

int select_p_step_start(step_record_t *step_ptr) {
    return cons_tres.step_start(step_ptr);
}

int select_p_step_finish(step_record_t *step_ptr, bool killing_step) {
    return cons_tres.step_finish(step_ptr, killing_step);
}

int select_p_select_nodeinfo_pack(select_nodeinfo_t *nodeinfo, buf_t *buffer,
                                  uint16_t protocol_version) {
    return cons_tres.nodeinfo_pack(nodeinfo, buffer, protocol_version);
}

int select_p_select_nodeinfo_unpack(select_nodeinfo_t **nodeinfo, buf_t *buffer,
                                    uint16_t protocol_version) {
    return cons_tres.nodeinfo_unpack(nodeinfo, buffer, protocol_version);
}

select_nodeinfo_t *select_p_select_nodeinfo_alloc(void) {
    return cons_tres.nodeinfo_alloc();
}

int select_p_select_nodeinfo_free(select_nodeinfo_t *nodeinfo) {
    return cons_tres.nodeinfo_free(nodeinfo);
}
#endif

int select_p_select_nodeinfo_set_all(void) {
    ai_note_down_nodes();
    return cons_tres.nodeinfo_set_all();
}

int select_p_select_nodeinfo_set(job_record_t *job_ptr) {
    int rc = cons_tres.nodeinfo_set(job_ptr);
    if (rc == SLURM_SUCCESS && IS_JOB_RUNNING(job_ptr))
        ai_record(job_ptr);
    return rc;
}

#if AI_SELECT_API < 2505
int select_p_select_nodeinfo_get(select_nodeinfo_t *nodeinfo, enum select_nodedata_type dinfo,
                                 enum node_states state, void *data) {
    return cons_tres.nodeinfo_get(nodeinfo, dinfo, state, data);
}

select_jobinfo_t *select_p_select_jobinfo_alloc(void) {
    return cons_tres.jobinfo_alloc();
}

int select_p_select_jobinfo_free(select_jobinfo_t *jobinfo) {
    return cons_tres.jobinfo_free(jobinfo);
}

int select_p_select_jobinfo_set(select_jobinfo_t *jobinfo, enum select_jobdata_type data_type,
                                void *data) {
    return cons_tres.jobinfo_set(jobinfo, data_type, data);
}

int select_p_select_jobinfo_get(select_jobinfo_t *jobinfo, enum select_jobdata_type data_type,
                                void *data) {
    return cons_tres.jobinfo_get(jobinfo, data_type, data);
}

select_jobinfo_t *select_p_select_jobinfo_copy(select_jobinfo_t *jobinfo) {
    return cons_tres.jobinfo_copy(jobinfo);
}

int select_p_select_jobinfo_pack(select_jobinfo_t *jobinfo, buf_t *buffer,
                                 uint16_t protocol_version) {
    return cons_tres.jobinfo_pack(jobinfo, buffer, protocol_version);
}

int select_p_select_jobinfo_unpack(select_jobinfo_t **jobinfo, buf_t *buffer,
                                   uint16_t protocol_version) {
    return cons_tres.jobinfo_unpack(jobinfo, buffer, protocol_version);
}

#if AI_SELECT_API < 2302
char *select_p_select_jobinfo_sprint(select_jobinfo_t *jobinfo, char *buf, size_t size, int mode) {
    return cons_tres.jobinfo_sprint(jobinfo, buf, size, mode);
}
#endif

#if AI_SELECT_API < 2302
char *select_p_select_jobinfo_xstrdup(select_jobinfo_t *jobinfo, int mode) {
    return cons_tres.jobinfo_xstrdup(jobinfo, mode);
}
#endif

int select_p_get_info_from_plugin(enum select_plugindata_info dinfo, job_record_t *job_ptr,
                                  void *data) {
    return cons_tres.get_info_from_plugin(dinfo, job_ptr, data);
}
#endif

#if AI_SELECT_API < 2302
int select_p_update_node_config(int index) {
    return cons_tres.update_node_config(index);
}
#endif

/* scontrol reconfigure: reread ai_select.conf and the topology; a bad file keeps the last good. */
int select_p_reconfigure(void) {
    int rc = cons_tres.reconfigure();
    _load_topology();
    return rc;
}

#if AI_SELECT_API < 2311
bitstr_t *select_p_resv_test(resv_desc_msg_t *resv_desc_ptr, uint32_t node_cnt,
                             bitstr_t *avail_bitmap, bitstr_t **core_bitmap) {
    return cons_tres.resv_test(resv_desc_ptr, node_cnt, avail_bitmap, core_bitmap);
}
#endif
