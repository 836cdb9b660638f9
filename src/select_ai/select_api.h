/*
 * The select API generation this build targets, chosen from SLURM_VERSION_NUMBER: which
 * entry points slurmctld resolves (and so which this plugin exports and forwards), their
 * signatures, and the few type and header names that moved. Everything else in the
 * plugin is written once, against the names below.
 *
 *   generation   Slurm          select_p_* entry points
 *   22.05        22.05          36 (job_signal, jobinfo_sprint/xstrdup, update_node_config,
 *                                   resv_test among them)
 *   23.02        23.02          32 (those four less resv_test gone; src/interfaces/)
 *   23.11        23.11-24.05    31 (job_test takes resv_exc_t; resv_test gone)
 *   24.11        24.11          31 (job_test also takes will_run_data_t; list_t)
 *   25.05        25.05-25.11    12 (no state save/restore, job_init, step, nodeinfo or
 *                                   jobinfo calls: slurmctld loads only the configured
 *                                   select plugin and keeps that data itself)
 *   26.05        26.05          13 (adds job_mem_reduce)
 *
 * From 25.05 slurmctld asks the plugin's id, not its name, whether cons_tres runs
 * (running_cons_tres(): shared GRES, GPUs per task/socket, CoreCnt reservations, node
 * weights): AI_SELECT_PLUGIN_ID is cons_tres's own there. Before, every select plugin in
 * PluginDir is loaded beside it and ids must differ.
 */
#ifndef SLURM_AI_SELECT_API_H
#define SLURM_AI_SELECT_API_H

#include "slurm/slurm.h"

#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(26, 11, 0)
#error "select/ai_cons_tres: Slurm after 26.05 is not supported yet (select API not checked)"
#elif SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(26, 5, 0)
#define AI_SELECT_API 2605
#elif SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 5, 0)
#define AI_SELECT_API 2505
#elif SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(24, 11, 0)
#define AI_SELECT_API 2411
#elif SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 11, 0)
#define AI_SELECT_API 2311
#elif SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 2, 0)
#define AI_SELECT_API 2302
#elif SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(22, 5, 0)
#define AI_SELECT_API 2205
#else
#error "select/ai_cons_tres: Slurm before 22.05 is not supported"
#endif

#if AI_SELECT_API >= 2302
#include "src/interfaces/gres.h"
#include "src/interfaces/select.h"
#else
#include "src/common/gres.h"
#include "src/common/select.h"
/* 23.02's names for 22.05's list types, so that the plugin is written once. */
typedef struct xlist list_t;
typedef struct listIterator list_itr_t;
typedef struct job_details job_details_t;
#endif
#include "src/slurmctld/slurmctld.h"

/*
 * slurmctld's GRES bookkeeping, which job expansion calls (looked up at run time, see
 * select_ai.c): in the step manager's library from 24.05, and the details builder takes
 * the job's node list from 23.11.
 */
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(24, 5, 0)
#include "src/stepmgr/gres_stepmgr.h"
#define AI_GRES_FN(name) gres_stepmgr_##name
#else
#include "src/slurmctld/gres_ctld.h"
#define AI_GRES_FN(name) gres_ctld_##name
#endif
/* The function's name as dlsym wants it. */
#define AI_STRINGIFY(x) #x
#define AI_GRES_SYMBOL(name) AI_STRINGIFY_EXPANDED(AI_GRES_FN(name))
#define AI_STRINGIFY_EXPANDED(x) AI_STRINGIFY(x)
#define AI_GRES_DETAILS_TAKE_NODES (AI_SELECT_API >= 2311)

#if AI_SELECT_API >= 2505
#define AI_SELECT_PLUGIN_ID SELECT_PLUGIN_CONS_TRES
#else
/* Unused by Slurm's own plugins (101-110); select_g_init() insists on uniqueness. */
#define AI_SELECT_PLUGIN_ID 190
#endif

/*
 * What a run-now test returns for a job the engine holds for a better placement (hard or
 * soft locality: no leaf or domain can take it yet). From 26.05 slurmctld shows the text
 * of a topology error code (ESLURM_TOPO_*) as the pending job's reason, as it does for
 * topology/block's and topology/tree's own refusals; before, any error leaves Resources.
 */
#ifdef IS_TOPO_ERROR
#define AI_TOPOLOGY_WAIT_RC ESLURM_TOPO_NO_FIT
#else
#define AI_TOPOLOGY_WAIT_RC SLURM_ERROR
#endif

/*
 * What a job test carries beyond the job, the bitmap, the node counts, the mode and the
 * preemption lists, passed through to cons_tres unchanged: the parameters, how
 * select_p_job_test keeps them (AI_TEST_EXTRA_INIT) and how they go on.
 */
#if AI_SELECT_API >= 2411
#define AI_TEST_EXTRA_PARAMS resv_exc_t *resv_exc_ptr, will_run_data_t *will_run_ptr
#define AI_TEST_EXTRA_INIT \
    { resv_exc_ptr, will_run_ptr }
#define AI_TEST_EXTRA_ARGS(e) (e)->resv_exc_ptr, (e)->will_run_ptr
typedef struct {
    resv_exc_t *resv_exc_ptr;
    will_run_data_t *will_run_ptr;
} ai_test_extra_t;
#elif AI_SELECT_API >= 2311
#define AI_TEST_EXTRA_PARAMS resv_exc_t *resv_exc_ptr
#define AI_TEST_EXTRA_INIT \
    { resv_exc_ptr }
#define AI_TEST_EXTRA_ARGS(e) (e)->resv_exc_ptr
typedef struct {
    resv_exc_t *resv_exc_ptr;
} ai_test_extra_t;
#else
#define AI_TEST_EXTRA_PARAMS bitstr_t *exc_core_bitmap
#define AI_TEST_EXTRA_INIT \
    { exc_core_bitmap }
#define AI_TEST_EXTRA_ARGS(e) (e)->exc_core_bitmap
typedef struct {
    bitstr_t *exc_core_bitmap;
} ai_test_extra_t;
#endif

/* cons_tres's entry points, in the order of slurmctld's table for this generation. */
typedef int (*ai_job_test_fn)(job_record_t *job_ptr, bitstr_t *bitmap, uint32_t min_nodes,
                              uint32_t max_nodes, uint32_t req_nodes, uint16_t mode,
                              list_t *preemptee_candidates, list_t **preemptee_job_list,
                              AI_TEST_EXTRA_PARAMS);
/* From 25.05 only the members outside the "< 2505" blocks remain, in the same order. */
typedef struct {
    uint32_t *plugin_id;
#if AI_SELECT_API < 2505
    int (*state_save)(char *dir_name);
    int (*state_restore)(char *dir_name);
    int (*job_init)(list_t *job_list);
#endif
    int (*node_init)(void);
    ai_job_test_fn job_test;
    int (*job_begin)(job_record_t *job_ptr);
    int (*job_ready)(job_record_t *job_ptr);
    int (*job_expand)(job_record_t *from_job_ptr, job_record_t *to_job_ptr);
    int (*job_resized)(job_record_t *job_ptr, node_record_t *node_ptr);
#if AI_SELECT_API < 2302
    int (*job_signal)(job_record_t *job_ptr, int signal);
#endif
#if AI_SELECT_API >= 2605
    void (*job_mem_reduce)(job_record_t *job_ptr);
#endif
    int (*job_fini)(job_record_t *job_ptr);
    int (*job_suspend)(job_record_t *job_ptr, bool indf_susp);
    int (*job_resume)(job_record_t *job_ptr, bool indf_susp);
#if AI_SELECT_API < 2505
    bitstr_t *(*step_pick_nodes)(job_record_t *job_ptr, select_jobinfo_t *jobinfo,
                                 uint32_t node_count, bitstr_t **avail_nodes);
    int (*step_start)(step_record_t *step_ptr);
    int (*step_finish)(step_record_t *step_ptr, bool killing_step);
    int (*nodeinfo_pack)(select_nodeinfo_t *nodeinfo, buf_t *buffer, uint16_t protocol_version);
    int (*nodeinfo_unpack)(select_nodeinfo_t **nodeinfo, buf_t *buffer, uint16_t protocol_version);
    select_nodeinfo_t *(*nodeinfo_alloc)(void);
    int (*nodeinfo_free)(select_nodeinfo_t *nodeinfo);
#endif
    int (*nodeinfo_set_all)(void);
    int (*nodeinfo_set)(job_record_t *job_ptr);
#if AI_SELECT_API < 2505
    int (*nodeinfo_get)(select_nodeinfo_t *nodeinfo, enum select_nodedata_type dinfo,
                        enum node_states state, void *data);
    select_jobinfo_t *(*jobinfo_alloc)(void);
    int (*jobinfo_free)(select_jobinfo_t *jobinfo);
    int (*jobinfo_set)(select_jobinfo_t *jobinfo, enum select_jobdata_type data_type, void *data);
    int (*jobinfo_get)(select_jobinfo_t *jobinfo, enum select_jobdata_type data_type, void *data);
    select_jobinfo_t *(*jobinfo_copy)(select_jobinfo_t *jobinfo);
    int (*jobinfo_pack)(select_jobinfo_t *jobinfo, buf_t *buffer, uint16_t protocol_version);
    int (*jobinfo_unpack)(select_jobinfo_t **jobinfo, buf_t *buffer, uint16_t protocol_version);
#if AI_SELECT_API < 2302
    char *(*jobinfo_sprint)(select_jobinfo_t *jobinfo, char *buf, size_t size, int mode);
    char *(*jobinfo_xstrdup)(select_jobinfo_t *jobinfo, int mode);
#endif
    int (*get_info_from_plugin)(enum select_plugindata_info dinfo, job_record_t *job_ptr,
                                void *data);
#endif
#if AI_SELECT_API < 2302
    int (*update_node_config)(int index);
#endif
    int (*reconfigure)(void);
#if AI_SELECT_API < 2311
    bitstr_t *(*resv_test)(resv_desc_msg_t *resv_desc_ptr, uint32_t node_cnt,
                           bitstr_t *avail_bitmap, bitstr_t **core_bitmap);
#endif
} ai_select_ops_t;

/*
 * The names slurmctld resolves, in the order of ai_select_ops_t: 22.05 to 24.11 share
 * runs of them.
 */
#define AI_SELECT_SYMS_JOBS                                                                    \
    "plugin_id", "select_p_state_save", "select_p_state_restore", "select_p_job_init",         \
        "select_p_node_init", "select_p_job_test", "select_p_job_begin", "select_p_job_ready", \
        "select_p_job_expand", "select_p_job_resized"
#define AI_SELECT_SYMS_STEPS_AND_INFO                                              \
    "select_p_job_fini", "select_p_job_suspend", "select_p_job_resume",            \
        "select_p_step_pick_nodes", "select_p_step_start", "select_p_step_finish", \
        "select_p_select_nodeinfo_pack", "select_p_select_nodeinfo_unpack",        \
        "select_p_select_nodeinfo_alloc", "select_p_select_nodeinfo_free",         \
        "select_p_select_nodeinfo_set_all", "select_p_select_nodeinfo_set",        \
        "select_p_select_nodeinfo_get", "select_p_select_jobinfo_alloc",           \
        "select_p_select_jobinfo_free", "select_p_select_jobinfo_set",             \
        "select_p_select_jobinfo_get", "select_p_select_jobinfo_copy",             \
        "select_p_select_jobinfo_pack", "select_p_select_jobinfo_unpack"
#if AI_SELECT_API >= 2505
#if AI_SELECT_API >= 2605
#define AI_SELECT_SYMS_MEM_REDUCE "select_p_job_mem_reduce",
#define AI_SELECT_ENTRY_POINTS 13
#else
#define AI_SELECT_SYMS_MEM_REDUCE
#define AI_SELECT_ENTRY_POINTS 12
#endif
#define AI_SELECT_SYMS                                                                             \
    "plugin_id", "select_p_node_init", "select_p_job_test", "select_p_job_begin",                  \
        "select_p_job_ready", "select_p_job_expand", "select_p_job_resized",                       \
        AI_SELECT_SYMS_MEM_REDUCE "select_p_job_fini", "select_p_job_suspend",                     \
        "select_p_job_resume", "select_p_select_nodeinfo_set_all", "select_p_select_nodeinfo_set", \
        "select_p_reconfigure"
#elif AI_SELECT_API >= 2311
#define AI_SELECT_SYMS                                                                   \
    AI_SELECT_SYMS_JOBS, AI_SELECT_SYMS_STEPS_AND_INFO, "select_p_get_info_from_plugin", \
        "select_p_reconfigure"
#define AI_SELECT_ENTRY_POINTS 31
#elif AI_SELECT_API >= 2302
#define AI_SELECT_SYMS                                                                   \
    AI_SELECT_SYMS_JOBS, AI_SELECT_SYMS_STEPS_AND_INFO, "select_p_get_info_from_plugin", \
        "select_p_reconfigure", "select_p_resv_test"
#define AI_SELECT_ENTRY_POINTS 32
#else
#define AI_SELECT_SYMS                                                                          \
    AI_SELECT_SYMS_JOBS, "select_p_job_signal", AI_SELECT_SYMS_STEPS_AND_INFO,                  \
        "select_p_select_jobinfo_sprint", "select_p_select_jobinfo_xstrdup",                    \
        "select_p_get_info_from_plugin", "select_p_update_node_config", "select_p_reconfigure", \
        "select_p_resv_test"
#define AI_SELECT_ENTRY_POINTS 36
#endif

/* cons_tres's job test with the extras this generation passes. */
#define AI_CONS_TRES_JOB_TEST(ops, job, bitmap, min, max, req, mode, cand, list, extra) \
    (ops).job_test(job, bitmap, min, max, req, mode, cand, list, AI_TEST_EXTRA_ARGS(extra))

#endif
