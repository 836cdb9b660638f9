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

#include <inttypes.h>
#include <string.h>
#include <time.h>
#include "cons_tres_forward.h"
#include "select_bridge.h"
#include "slurm/slurm.h"
#include "src/common/log.h"
#include "src/common/read_config.h"

#include "src/common/bitstring.h"
#include "src/common/gres.h"
#include "src/common/job_resources.h"
#include "src/common/list.h"
#include "src/common/node_conf.h"
#include "src/common/select.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"

const char plugin_name[] = "AI topology-aware selection (forwarding to cons_tres)";
const char plugin_type[] = "select/ai_cons_tres";
/* Unused by Slurm's own plugins (101-110); select_g_init() insists on uniqueness. */
const uint32_t plugin_id = 190;
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

/*
 * init() also runs in every client command (select_g_init(0) loads all select plugins),
 * whose users would see anything logged at info level: log at debug only. The topology
 * is loaded later, in select_p_node_init(), which only slurmctld calls.
 */
int init(void) {
    debug("%s: loading", plugin_type);
    return cons_tres_load();
}

int fini(void) {
    cons_tres_unload();
    return SLURM_SUCCESS;
}

/* ai_select.conf and the default fabric (topology.conf) sit beside slurm.conf. */
static char *_beside_slurm_conf(const char *name) {
    char *dir = xstrdup(slurm_conf.slurm_conf), *slash = dir ? strrchr(dir, '/') : NULL;
    char *path;

    if (slash)
        *slash = '\0';
    path = xstrdup_printf("%s/%s", slash ? dir : ".", name);
    xfree(dir);
    return path;
}

/* (Re)reads the plugin's configuration and topology; a bad one keeps the last good. */
static void _load_topology(void) {
    char err[1024] = "";
    char *conf = _beside_slurm_conf("ai_select.conf");
    char *fabric = _beside_slurm_conf("topology.conf");
    const char **names = xcalloc(node_record_count + 1, sizeof(char *));
    node_record_t *node_ptr;

    for (int i = 0; (node_ptr = next_node(&i)); i++)
        names[node_ptr->index] = node_ptr->name;
    for (int i = 0; i < node_record_count; i++)
        if (!names[i])
            names[i] = "";
    if (ai_select_load(conf, fabric, names, node_record_count, err, sizeof(err)) < 0)
        error("%s: %s: %s; jobs are placed by %s", plugin_type, conf, err,
              "the last good configuration, or plain cons_tres if there is none");
    else
        verbose("%s: loaded %s (fabric default %s)", plugin_type, conf, fabric);
    xfree(names);
    xfree(conf);
    xfree(fabric);
}

/* The job's request as the engine sees it: nodes, tasks and GPUs. */
static bool _job_request(job_record_t *job_ptr, uint32_t min_nodes, uint32_t max_nodes,
                         ai_job_t *req) {
    ListIterator it;
    gres_state_t *gs;
    bool supported = true;

    memset(req, 0, sizeof(*req));
    req->job_id = job_ptr->job_id;
    req->min_nodes = min_nodes ? min_nodes : 1;
    req->max_nodes = max_nodes ? max_nodes : req->min_nodes;
    req->tasks = job_ptr->details && job_ptr->details->num_tasks ? job_ptr->details->num_tasks : 1;
    req->env = (const char *const *)job_ptr->spank_job_env;
    req->env_size = job_ptr->spank_job_env_size;
    if (job_ptr->details && job_ptr->details->submit_time &&
        time(NULL) > job_ptr->details->submit_time)
        req->pending_s = (uint32_t)(time(NULL) - job_ptr->details->submit_time);
    if (!job_ptr->gres_list_req)
        return true;
    it = list_iterator_create(job_ptr->gres_list_req);
    while ((gs = list_next(it))) {
        gres_job_state_t *js = gs->gres_data;
        if (xstrcmp(gs->gres_name, "gpu") || !js)
            continue;
        if (js->gres_per_node)
            req->gpus_per_node = (uint32_t)js->gres_per_node;
        if (js->gres_per_job)
            req->total_gpus = (uint32_t)js->gres_per_job;
        else if (js->gres_per_task)
            req->total_gpus = (uint32_t)(js->gres_per_task * req->tasks);
        else if (js->gres_per_socket)
            supported = false; /* per-socket requests: cons_tres alone */
    }
    list_iterator_destroy(it);
    if (req->gpus_per_node && !req->total_gpus)
        req->total_gpus = req->gpus_per_node * req->min_nodes;
    return supported;
}

/* Free GPUs of a node as a bit mask, from its GRES state. */
static uint64_t _free_gpus(node_record_t *node_ptr) {
    ListIterator it;
    gres_state_t *gs;
    uint64_t mask = 0;

    if (!node_ptr->gres_list)
        return 0;
    it = list_iterator_create(node_ptr->gres_list);
    while ((gs = list_next(it))) {
        gres_node_state_t *ns = gs->gres_data;
        uint64_t avail;
        if (xstrcmp(gs->gres_name, "gpu") || !ns)
            continue;
        avail = ns->gres_cnt_avail > 64 ? 64 : ns->gres_cnt_avail;
        if (ns->gres_bit_alloc) {
            for (uint64_t g = 0; g < avail && g < (uint64_t)bit_size(ns->gres_bit_alloc); g++)
                if (!bit_test(ns->gres_bit_alloc, g))
                    mask |= (uint64_t)1 << g;
        } else {
            uint64_t free_cnt = ns->gres_cnt_avail > ns->gres_cnt_alloc
                                    ? ns->gres_cnt_avail - ns->gres_cnt_alloc
                                    : 0;
            for (uint64_t g = 0; g < free_cnt && g < 64; g++)
                mask |= (uint64_t)1 << g;
        }
    }
    list_iterator_destroy(it);
    return mask;
}

/* "n1:0,1 n2:2,3": the GPUs cons_tres allocated to the job, per node. */
static char *_allocated_gpus(job_record_t *job_ptr) {
    char *out = NULL;
    ListIterator it;
    gres_state_t *gs;
    job_resources_t *res = job_ptr->job_resrcs;

    if (!job_ptr->gres_list_alloc || !res || !res->node_bitmap)
        return NULL;
    it = list_iterator_create(job_ptr->gres_list_alloc);
    while ((gs = list_next(it))) {
        gres_job_state_t *js = gs->gres_data;
        int node_i = -1;
        if (xstrcmp(gs->gres_name, "gpu") || !js || !js->gres_bit_alloc)
            continue;
        for (uint32_t j = 0; j < js->node_cnt; j++) {
            node_record_t *node_ptr;
            /* The job's j-th node is the j-th set bit of its node bitmap. */
            do
                node_i++;
            while (node_i < bit_size(res->node_bitmap) && !bit_test(res->node_bitmap, node_i));
            if (node_i >= bit_size(res->node_bitmap) || !(node_ptr = node_record_table_ptr[node_i]))
                break;
            if (!js->gres_bit_alloc[j])
                continue;
            xstrfmtcat(out, "%s%s:", out ? " " : "", node_ptr->name);
            for (int64_t g = 0, first = 1; g < bit_size(js->gres_bit_alloc[j]); g++)
                if (bit_test(js->gres_bit_alloc[j], g)) {
                    xstrfmtcat(out, "%s%" PRId64, first ? "" : ",", g);
                    first = 0;
                }
        }
    }
    list_iterator_destroy(it);
    return out;
}

/*
 * Nodes that went DOWN since the last look count as failures in the risk model's history
 * (kept across restarts by state_save). Looked at from the job tests, once per change of
 * any node's state (slurmctld's last_node_update).
 */
static void _note_down_nodes(void) {
    static bitstr_t *was_down;
    static time_t looked_at;
    node_record_t *node_ptr;

    /* Node states change far less often than jobs are tested. */
    if (was_down && looked_at == last_node_update)
        return;
    looked_at = last_node_update;
    if (!was_down || bit_size(was_down) != node_record_count) {
        FREE_NULL_BITMAP(was_down);
        was_down = bit_alloc(node_record_count);
    }
    for (int i = 0; (node_ptr = next_node(&i)); i++) {
        bool down = IS_NODE_DOWN(node_ptr);
        if (down && !bit_test(was_down, node_ptr->index)) {
            bit_set(was_down, node_ptr->index);
            ai_select_note_failure(node_ptr->name);
            log_flag(SELECT_TYPE, "%s: %s is down: counted in its failure history", plugin_type,
                     node_ptr->name);
        } else if (!down) {
            bit_clear(was_down, node_ptr->index);
        }
    }
}

static bitstr_t *_bitmap_of(const int *nodes, uint32_t count) {
    bitstr_t *b = bit_alloc(node_record_count);
    for (uint32_t i = 0; i < count; i++)
        if (nodes[i] >= 0 && nodes[i] < node_record_count)
            bit_set(b, nodes[i]);
    return b;
}

int select_p_state_save(char *dir_name) {
    char err[512] = "";
    if (ai_select_state_save(dir_name, err, sizeof(err)) < 0)
        error("%s: cannot save state in %s: %s", plugin_type, dir_name, err);
    return cons_tres.state_save(dir_name);
}

int select_p_state_restore(char *dir_name) {
    char err[512] = "";
    if (ai_select_state_restore(dir_name, err, sizeof(err)) < 0)
        error("%s: %s", plugin_type, err);
    return cons_tres.state_restore(dir_name);
}

int select_p_job_init(List job_list) {
    return cons_tres.job_init(job_list);
}

int select_p_node_init(void) {
    int rc = cons_tres.node_init();
    _load_topology();
    return rc;
}

/*
 * Whether a node has the CPUs and memory left that one node of the job needs, from the
 * counts cons_tres keeps in each node's select_nodeinfo. They are refreshed lazily, so
 * they may lag; cons_tres has the last word, and the widening steps cover a stale view.
 */
static bool _has_room(node_record_t *node_ptr, uint16_t cpus, uint64_t mem) {
    uint16_t alloc_cpus = 0;
    uint64_t alloc_mem = 0;

    /* select_nodeinfo wraps cons_tres's own record, as Slurm's select_g_ layer does. */
    if (!node_ptr->select_nodeinfo || !node_ptr->select_nodeinfo->data)
        return true;
    if (cons_tres.nodeinfo_get(node_ptr->select_nodeinfo->data, SELECT_NODEDATA_SUBCNT,
                               NODE_STATE_ALLOCATED, &alloc_cpus) != SLURM_SUCCESS ||
        cons_tres.nodeinfo_get(node_ptr->select_nodeinfo->data, SELECT_NODEDATA_MEM_ALLOC,
                               NODE_STATE_ALLOCATED, &alloc_mem) != SLURM_SUCCESS)
        return true;
    if (node_ptr->cpus_efctv && alloc_cpus + cpus > node_ptr->cpus_efctv)
        return false;
    if (mem && node_ptr->real_memory && alloc_mem + mem > node_ptr->real_memory)
        return false;
    return true;
}

/*
 * The job's --ai-locality value as the job's SPANK environment carries it: 0 none,
 * 1 soft, 2 hard.
 */
static int _locality(job_record_t *job_ptr) {
    static const char key[] = "_SLURM_SPANK_OPTION_ai_ai_locality=";
    for (uint32_t i = 0; i < job_ptr->spank_job_env_size; i++) {
        const char *v = job_ptr->spank_job_env[i] ? strstr(job_ptr->spank_job_env[i], key) : NULL;
        if (v)
            return xstrncasecmp(v + sizeof(key) - 1, "hard", 4) ? 1 : 2;
    }
    return 0;
}

/*
 * Asks the engine about a job, with the candidate nodes of `bitmap` and slurmctld's GRES
 * state. Fills `out` (when given; its buffers are the caller's to xfree) and returns
 * AI_PLACED, AI_WAIT or AI_PASSTHROUGH; an engine error is a passthrough.
 */
static int _decide(job_record_t *job_ptr, bitstr_t *bitmap, ai_job_t *req, ai_outcome_t *out) {
    ai_outcome_t local;
    uint16_t cpus = 1;
    uint64_t mem = 0;
    struct job_details *d = job_ptr->details;
    ai_node_t *view = xcalloc(node_record_count + 1, sizeof(*view));
    node_record_t *node_ptr;
    char err[512] = "";

    /* What one node must have left: CPUs and memory per node of the request. */
    if (d && req->min_nodes) {
        uint32_t per_node = d->min_cpus / req->min_nodes;
        cpus = per_node > 1 ? (uint16_t)MIN(per_node, UINT16_MAX) : 1;
        if (d->pn_min_memory & MEM_PER_CPU)
            mem = (d->pn_min_memory & ~MEM_PER_CPU) * cpus;
        else
            mem = d->pn_min_memory;
    }
    if (!out)
        out = &local;
    memset(out, 0, sizeof(*out));
    out->nodes = xcalloc(node_record_count + 1, sizeof(int));
    out->widen = xcalloc(node_record_count + 1, sizeof(int));
    /* Only candidates are looked at: the rest stay unusable and cost nothing. */
    for (int i = 0; (node_ptr = next_node(&i)); i++) {
        if (!bit_test(bitmap, node_ptr->index) || !_has_room(node_ptr, cpus, mem))
            continue;
        view[node_ptr->index].usable = 1;
        view[node_ptr->index].free_gpus = _free_gpus(node_ptr);
        view[node_ptr->index].weight = node_ptr->weight;
    }
    if (ai_select_decide(req, view, node_record_count, out, err, sizeof(err)) < 0) {
        out->kind = AI_PASSTHROUGH;
        out->log_reason = 1;
        snprintf(out->reason, sizeof(out->reason), "engine error: %s", err);
    }
    xfree(view);
    if (out == &local) {
        xfree(local.nodes);
        xfree(local.widen);
    }
    return out->kind;
}

/*
 * Run-now: the engine picks the nodes from the candidates and cons_tres allocates on
 * exactly those. If cons_tres refuses them, it gets the engine's whole subtree, and then
 * the full candidate bitmap. Will-run (backfill) and test-only go to cons_tres
 * unchanged, so that their start times are the ones run-now will meet: the engine always
 * finds a placement when cons_tres does, unless the job asked for locality.
 */
int select_p_job_test(job_record_t *job_ptr, bitstr_t *bitmap, uint32_t min_nodes,
                      uint32_t max_nodes, uint32_t req_nodes, uint16_t mode,
                      List preemptee_candidates, List *preemptee_job_list,
                      bitstr_t *exc_core_bitmap) {
    ai_job_t req;
    ai_outcome_t out;
    int rc, locality;
    bitstr_t *orig, *attempt;

    _note_down_nodes();
    /*
     * Backfill must not reserve nodes for a job that waits for locality: the engine would
     * not start it there, and the reservation would hold back every job behind it. When
     * hard locality will be met cannot be foreseen, so such jobs get no reservation and
     * start when run-now finds them a compact placement; soft locality waits only while
     * the engine says so.
     */
    if (mode == SELECT_MODE_WILL_RUN && (locality = _locality(job_ptr))) {
        if (locality == 2)
            return SLURM_ERROR;
        if (_job_request(job_ptr, min_nodes, max_nodes, &req) &&
            _decide(job_ptr, bitmap, &req, NULL) == AI_WAIT)
            return SLURM_ERROR;
    }
    if (mode != SELECT_MODE_RUN_NOW || !_job_request(job_ptr, min_nodes, max_nodes, &req))
        return cons_tres.job_test(job_ptr, bitmap, min_nodes, max_nodes, req_nodes, mode,
                                  preemptee_candidates, preemptee_job_list, exc_core_bitmap);

    _decide(job_ptr, bitmap, &req, &out);

    if (out.kind == AI_WAIT) {
        log_flag(SELECT_TYPE, "%s: %pJ waits: %s", plugin_type, job_ptr, out.reason);
        rc = SLURM_ERROR;
        goto done;
    }
    if (out.kind == AI_PASSTHROUGH) {
        if (out.log_reason)
            info("%s: %pJ placed by plain cons_tres: %s", plugin_type, job_ptr, out.reason);
        rc = cons_tres.job_test(job_ptr, bitmap, min_nodes, max_nodes, req_nodes, mode,
                                preemptee_candidates, preemptee_job_list, exc_core_bitmap);
        goto done;
    }

    orig = bit_copy(bitmap);
    if (ai_select_debug()) {
        /* What plain cons_tres would choose, for the record; run-now selects, allocates not. */
        bitstr_t *stock = bit_copy(orig);
        if (cons_tres.job_test(job_ptr, stock, min_nodes, max_nodes, req_nodes, mode,
                               preemptee_candidates, NULL, exc_core_bitmap) == SLURM_SUCCESS) {
            char *names = bitmap2node_name(stock);
            ai_select_note_stock(job_ptr->job_id, names);
            log_flag(SELECT_TYPE, "%s: %pJ: cons_tres alone would choose %s", plugin_type, job_ptr,
                     names);
            xfree(names);
        }
        FREE_NULL_BITMAP(stock);
    }
    for (int step = 0; step < 3; step++) {
        if (step == 0)
            attempt = _bitmap_of(out.nodes, out.nodes_len);
        else if (step == 1)
            attempt = _bitmap_of(out.widen, out.widen_len);
        else
            attempt = bit_copy(orig);
        bit_and(attempt, orig);
        rc = cons_tres.job_test(job_ptr, attempt, min_nodes, max_nodes, req_nodes, mode,
                                preemptee_candidates, preemptee_job_list, exc_core_bitmap);
        if (rc == SLURM_SUCCESS) {
            bit_copybits(bitmap, attempt);
            if (step > 0)
                info("%s: %pJ: cons_tres refused the engine's nodes; placed on the %s", plugin_type,
                     job_ptr, step == 1 ? "engine's subtree" : "full candidate set");
            else
                log_flag(SELECT_TYPE, "%s: %pJ %s", plugin_type, job_ptr, out.reason);
            FREE_NULL_BITMAP(attempt);
            break;
        }
        FREE_NULL_BITMAP(attempt);
    }
    FREE_NULL_BITMAP(orig);
done:
    xfree(out.nodes);
    xfree(out.widen);
    return rc;
}

int select_p_job_begin(job_record_t *job_ptr) {
    return cons_tres.job_begin(job_ptr);
}

/*
 * cons_tres allocates a starting job's cores, memory and GPUs here (also for running jobs
 * at a slurmctld restart), so this is where the plugin records what the job got: the
 * per-job record that ai-explain shows and a one-line SystemComment.
 */
static void _record(job_record_t *job_ptr) {
    char err[512] = "", summary[512] = "";
    ai_job_t req;
    const char *nodes = job_ptr->job_resrcs ? job_ptr->job_resrcs->nodes : job_ptr->nodes;
    char *gpus = _allocated_gpus(job_ptr);

    _job_request(job_ptr, job_ptr->details ? job_ptr->details->min_nodes : 1,
                 job_ptr->details ? job_ptr->details->max_nodes : 1, &req);
    /* Failing to write the record never fails the job. */
    if (ai_select_record(slurm_conf.state_save_location, &req, nodes, gpus, summary,
                         sizeof(summary), err, sizeof(err)) < 0) {
        error("%s: %pJ: cannot record placement: %s", plugin_type, job_ptr, err);
    } else if (summary[0]) {
        xfree(job_ptr->system_comment);
        job_ptr->system_comment = xstrdup(summary);
        verbose("%s: %pJ %s; GPUs %s", plugin_type, job_ptr, summary, gpus ? gpus : "none");
    }
    xfree(gpus);
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
    ai_select_forget(job_ptr->job_id);
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
    int rc = cons_tres.nodeinfo_set(job_ptr);
    if (rc == SLURM_SUCCESS && IS_JOB_RUNNING(job_ptr))
        _record(job_ptr);
    return rc;
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

/* scontrol reconfigure: reread ai_select.conf and the topology; a bad file keeps the last good. */
int select_p_reconfigure(void) {
    int rc = cons_tres.reconfigure();
    _load_topology();
    return rc;
}

bitstr_t *select_p_resv_test(resv_desc_msg_t *resv_desc_ptr, uint32_t node_cnt,
                             bitstr_t *avail_bitmap, bitstr_t **core_bitmap) {
    return cons_tres.resv_test(resv_desc_ptr, node_cnt, avail_bitmap, core_bitmap);
}
