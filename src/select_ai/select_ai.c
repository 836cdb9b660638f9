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
#include "config.h"

#include "src/common/slurm_xlator.h"

#include "cons_tres_forward.h"
#include "select_bridge.h"
#include "slurm/slurm.h"
#include "src/common/log.h"
#include "src/common/read_config.h"
#include "src/common/job_resources.h"
#include "src/common/select.h"
#include "src/slurmctld/slurmctld.h"

const char plugin_name[] = "AI topology-aware selection (forwarding to cons_tres)";
const char plugin_type[] = "select/ai_cons_tres";
/* Unused by Slurm's own plugins (101-110); select_g_init() insists on uniqueness. */
const uint32_t plugin_id = 190;
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

/*
 * init() also runs in every client command (select_g_init(0) loads all select plugins),
 * whose users would see anything logged at info level: log at debug only.
 */
int init(void) {
    debug("%s: loading", plugin_type);
    return cons_tres_load();
}

int fini(void) {
    cons_tres_unload();
    return SLURM_SUCCESS;
}

/* Reads the job's hints; logs them under DebugFlags=SelectType. */
static void _read_hints(job_record_t *job_ptr) {
    char summary[1024], err[512] = "";
    int rc = ai_select_read_hints((const char *const *)job_ptr->spank_job_env,
                                  job_ptr->spank_job_env_size, summary, sizeof(summary), err,
                                  sizeof(err));

    if (rc < 0)
        log_flag(SELECT_TYPE, "%s: %pJ: ignoring invalid hint: %s", plugin_type, job_ptr, err);
    else if (rc > 0)
        log_flag(SELECT_TYPE, "%s: %pJ: hints %s", plugin_type, job_ptr, summary);
}

int select_p_state_save(char *dir_name) {
    return cons_tres.state_save(dir_name);
}

int select_p_state_restore(char *dir_name) {
    return cons_tres.state_restore(dir_name);
}

int select_p_job_init(List job_list) {
    return cons_tres.job_init(job_list);
}

int select_p_node_init(void) {
    return cons_tres.node_init();
}

int select_p_job_test(job_record_t *job_ptr, bitstr_t *bitmap, uint32_t min_nodes,
                      uint32_t max_nodes, uint32_t req_nodes, uint16_t mode,
                      List preemptee_candidates, List *preemptee_job_list,
                      bitstr_t *exc_core_bitmap) {
    _read_hints(job_ptr);
    return cons_tres.job_test(job_ptr, bitmap, min_nodes, max_nodes, req_nodes, mode,
                              preemptee_candidates, preemptee_job_list, exc_core_bitmap);
}

int select_p_job_begin(job_record_t *job_ptr) {
    char err[512] = "";
    int rc = cons_tres.job_begin(job_ptr);
    /* job_ptr->nodes is filled in from job_resrcs only after job_begin returns. */
    const char *nodes = job_ptr->job_resrcs ? job_ptr->job_resrcs->nodes : job_ptr->nodes;

    /* The record is what ai-explain shows; failing to write it never fails the job. */
    if (ai_select_record_job(slurm_conf.state_save_location, job_ptr->job_id, nodes,
                             (const char *const *)job_ptr->spank_job_env,
                             job_ptr->spank_job_env_size, err, sizeof(err)) < 0)
        error("%s: %pJ: cannot record placement: %s", plugin_type, job_ptr, err);
    return rc;
}

int select_p_job_ready(job_record_t *job_ptr) {
    return cons_tres.job_ready(job_ptr);
}

int select_p_job_expand(job_record_t *from_job_ptr, job_record_t *to_job_ptr) {
    return cons_tres.job_expand(from_job_ptr, to_job_ptr);
}

int select_p_job_resized(job_record_t *job_ptr, node_record_t *node_ptr) {
    return cons_tres.job_resized(job_ptr, node_ptr);
}

int select_p_job_signal(job_record_t *job_ptr, int signal) {
    return cons_tres.job_signal(job_ptr, signal);
}

int select_p_job_fini(job_record_t *job_ptr) {
    return cons_tres.job_fini(job_ptr);
}

int select_p_job_suspend(job_record_t *job_ptr, bool indf_susp) {
    return cons_tres.job_suspend(job_ptr, indf_susp);
}

int select_p_job_resume(job_record_t *job_ptr, bool indf_susp) {
    return cons_tres.job_resume(job_ptr, indf_susp);
}

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

int select_p_select_nodeinfo_set_all(void) {
    return cons_tres.nodeinfo_set_all();
}

int select_p_select_nodeinfo_set(job_record_t *job_ptr) {
    return cons_tres.nodeinfo_set(job_ptr);
}

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

char *select_p_select_jobinfo_sprint(select_jobinfo_t *jobinfo, char *buf, size_t size, int mode) {
    return cons_tres.jobinfo_sprint(jobinfo, buf, size, mode);
}

char *select_p_select_jobinfo_xstrdup(select_jobinfo_t *jobinfo, int mode) {
    return cons_tres.jobinfo_xstrdup(jobinfo, mode);
}

int select_p_get_info_from_plugin(enum select_plugindata_info dinfo, job_record_t *job_ptr,
                                  void *data) {
    return cons_tres.get_info_from_plugin(dinfo, job_ptr, data);
}

int select_p_update_node_config(int index) {
    return cons_tres.update_node_config(index);
}

int select_p_reconfigure(void) {
    return cons_tres.reconfigure();
}

bitstr_t *select_p_resv_test(resv_desc_msg_t *resv_desc_ptr, uint32_t node_cnt,
                             bitstr_t *avail_bitmap, bitstr_t **core_bitmap) {
    return cons_tres.resv_test(resv_desc_ptr, node_cnt, avail_bitmap, core_bitmap);
}
