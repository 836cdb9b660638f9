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

#include <dlfcn.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
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

/*
 * slurmctld-only symbols. slurmd and the client commands load this plugin too, where
 * they do not exist, and Slurm opens plugins with RTLD_NOW: a direct reference would
 * keep the plugin from loading there. They are looked up in select_p_node_init(), which
 * only slurmctld calls; until then (and if one is missing) gangs, expansion placement and
 * the GRES merge are off and Slurm's own behaviour applies.
 */
static struct {
    List *job_list;
    bitstr_t **avail_node_bitmap, **share_node_bitmap;
    job_record_t *(*find_job_record)(uint32_t job_id);
    void (*gres_job_merge)(List from, bitstr_t *from_nodes, List to, bitstr_t *to_nodes);
    int (*gres_job_alloc)(List req, List *alloc, List node_gres, int node_cnt, int node_index,
                          int node_offset, uint32_t job_id, char *node_name, bitstr_t *cores,
                          bool new_alloc);
    void (*gres_job_build_details)(List alloc, uint32_t *cnt, char ***detail, char **total);
    bool found;
} ctld;

static void _find_ctld_symbols(void) {
    ctld.job_list = dlsym(RTLD_DEFAULT, "job_list");
    ctld.avail_node_bitmap = dlsym(RTLD_DEFAULT, "avail_node_bitmap");
    ctld.share_node_bitmap = dlsym(RTLD_DEFAULT, "share_node_bitmap");
    *(void **)&ctld.find_job_record = dlsym(RTLD_DEFAULT, "find_job_record");
    *(void **)&ctld.gres_job_merge = dlsym(RTLD_DEFAULT, "gres_ctld_job_merge");
    *(void **)&ctld.gres_job_alloc = dlsym(RTLD_DEFAULT, "gres_ctld_job_alloc");
    *(void **)&ctld.gres_job_build_details = dlsym(RTLD_DEFAULT, "gres_ctld_job_build_details");
    ctld.found = ctld.job_list && ctld.avail_node_bitmap && ctld.share_node_bitmap &&
                 ctld.find_job_record && ctld.gres_job_merge && ctld.gres_job_alloc &&
                 ctld.gres_job_build_details;
    if (!ctld.found)
        error(
            "%s: slurmctld symbols not found (%s); gangs, expansion placement and GPU job "
            "expansion are off",
            plugin_type, dlerror());
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

/*
 * Narrows a node range to what the job's tasks allow: with an explicit --ntasks every node
 * runs at least one task, and with --ntasks-per-node too the task count fixes the node
 * count (slurmctld's record may still say 1 node; without --ntasks, Slurm adds tasks with
 * every node instead). max_nodes 0 means no bound.
 */
static void _task_bounds(job_record_t *job_ptr, uint32_t *min_nodes, uint32_t *max_nodes) {
    struct job_details *d = job_ptr->details;
    uint32_t cap;

    if (!d || !(job_ptr->bit_flags & JOB_NTASKS_SET) || !d->num_tasks || d->num_tasks == NO_VAL)
        return;
    cap = d->num_tasks;
    if (d->ntasks_per_node && d->ntasks_per_node != NO_VAL16) {
        cap = (d->num_tasks + d->ntasks_per_node - 1) / d->ntasks_per_node;
        *min_nodes = MAX(*min_nodes, cap);
    }
    cap = MAX(cap, *min_nodes);
    *max_nodes = *max_nodes ? MIN(*max_nodes, cap) : cap;
}

/* The job's request as the engine sees it: nodes, tasks and GPUs. */
static bool _job_request(job_record_t *job_ptr, uint32_t min_nodes, uint32_t max_nodes,
                         ai_job_t *req) {
    ListIterator it;
    gres_state_t *gs;
    bool supported = true;

    memset(req, 0, sizeof(*req));
    req->job_id = job_ptr->job_id;
    req->user_id = job_ptr->user_id;
    if (job_ptr->details && job_ptr->details->expanding_jobid && ctld.found) {
        /* An expansion job: placed next to the job it grows (see _job_request_free). */
        job_record_t *parent = ctld.find_job_record(job_ptr->details->expanding_jobid);
        if (parent && IS_JOB_RUNNING(parent) && parent->node_bitmap) {
            int *nodes = xcalloc(bit_set_count(parent->node_bitmap) + 1, sizeof(int));
            for (int i = 0; i < bit_size(parent->node_bitmap); i++)
                if (bit_test(parent->node_bitmap, i))
                    nodes[req->expands_len++] = i;
            req->expands = nodes;
            req->expands_job_id = parent->job_id;
            req->expands_env = (const char *const *)parent->spank_job_env;
            req->expands_env_size = parent->spank_job_env_size;
        }
    }
    req->min_nodes = min_nodes ? min_nodes : 1;
    req->max_nodes = max_nodes ? max_nodes : req->min_nodes;
    _task_bounds(job_ptr, &req->min_nodes, &req->max_nodes);
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

static void _job_request_free(ai_job_t *req) {
    int *nodes = (int *)req->expands;
    xfree(nodes);
    req->expands = NULL;
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
 * (kept across restarts by state_save). Looked at from the job tests and whenever
 * slurmctld refreshes its node information (scontrol show node, sinfo, health checks):
 * with ReturnToService=2 a node set DOWN is back at the next ping that it answers, so a
 * queue without pending jobs (no job tests) would never show it. Skipped until a node's
 * state changed again (slurmctld's last_node_update).
 */
static void _note_down_nodes(void) {
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static bitstr_t *was_down;
    static time_t looked_at;
    node_record_t *node_ptr;
    bool noted = false;
    char err[512] = "";

    slurm_mutex_lock(&lock);
    /*
     * last_node_update counts whole seconds: a change in the second of the last look may
     * have come after it, so that second is looked at again.
     */
    if (was_down && last_node_update < looked_at) {
        slurm_mutex_unlock(&lock);
        return;
    }
    looked_at = time(NULL);
    if (!was_down || bit_size(was_down) != node_record_count) {
        FREE_NULL_BITMAP(was_down);
        was_down = bit_alloc(node_record_count);
    }
    for (int i = 0; (node_ptr = next_node(&i)); i++) {
        bool down = IS_NODE_DOWN(node_ptr);
        if (down && !bit_test(was_down, node_ptr->index)) {
            bit_set(was_down, node_ptr->index);
            ai_select_note_failure(node_ptr->name);
            noted = true;
            log_flag(SELECT_TYPE, "%s: %s is down: counted in its failure history", plugin_type,
                     node_ptr->name);
        } else if (!down) {
            bit_clear(was_down, node_ptr->index);
        }
    }
    /*
     * Saved now, not at slurmctld's next full state save (every 5 minutes, and at a clean
     * shutdown): a controller that crashes in between must not forget the failure.
     */
    if (noted && ai_select_state_save(slurm_conf.state_save_location, err, sizeof(err)) < 0)
        error("%s: cannot save state in %s: %s", plugin_type, slurm_conf.state_save_location, err);
    slurm_mutex_unlock(&lock);
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
    /*
     * Written at once, also after a clean start: from the first start on, a missing file
     * is a lost one. (slurmctld also calls this at every reconfigure.)
     */
    if (ai_select_state_save(dir_name, err, sizeof(err)) < 0)
        error("%s: cannot save state in %s: %s", plugin_type, dir_name, err);
    return cons_tres.state_restore(dir_name);
}

/*
 * slurmctld keeps an expansion job's link to the job it grows (expanding_jobid) in memory
 * only: after a restart, NumNodes=0 on the expansion job fails ("Node count specification
 * invalid") and the grow can never complete. The link comes back from the job's
 * dependency (expand:<id>, kept while it is pending) or from the name the suite's tools
 * give expansion jobs (ai-expand:<id>): at start-up for every job, and in every test of a
 * pending one.
 */
static void _restore_expansion_link(job_record_t *job_ptr) {
    const char *from = NULL;
    char *end = NULL;
    unsigned long parent;

    if (!job_ptr->details || job_ptr->details->expanding_jobid || IS_JOB_FINISHED(job_ptr))
        return;
    if (job_ptr->details->dependency && (from = strstr(job_ptr->details->dependency, "expand:")))
        from += 7;
    else if (job_ptr->name && !strncmp(job_ptr->name, "ai-expand:", 10))
        from = job_ptr->name + 10;
    if (!from)
        return;
    parent = strtoul(from, &end, 10);
    if (!parent || parent > UINT32_MAX || end == from)
        return;
    job_ptr->details->expanding_jobid = (uint32_t)parent;
    verbose("%s: %pJ expands JobId=%lu again (link restored after a restart)", plugin_type, job_ptr,
            parent);
}

int select_p_job_init(List job_list) {
    ListIterator it = list_iterator_create(job_list);
    job_record_t *job_ptr;
    while ((job_ptr = list_next(it)))
        _restore_expansion_link(job_ptr);
    list_iterator_destroy(it);
    return cons_tres.job_init(job_list);
}

int select_p_node_init(void) {
    int rc = cons_tres.node_init();
    _find_ctld_symbols();
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
 * What the adapter needs of the job's --ai-* options, from the service's decoding. With
 * Debug=yes and DebugFlags=SelectType, every new decoding is logged with the totals (the
 * plugin's debug statistics: a pending job tested at every pass is decoded once).
 */
static void _traits(job_record_t *job_ptr, ai_job_traits_t *t) {
    static uint64_t decodes_seen;
    uint64_t decodes;
    uint32_t cached = 0;

    ai_select_job_traits(job_ptr->job_id, (const char *const *)job_ptr->spank_job_env,
                         job_ptr->spank_job_env_size, t);
    if (!ai_select_debug())
        return;
    decodes = ai_select_option_decodes(&cached);
    if (decodes != decodes_seen) {
        log_flag(SELECT_TYPE,
                 "%s: %pJ: options decoded (%" PRIu64 " decodings in all, %u jobs cached)",
                 plugin_type, job_ptr, decodes, cached);
        decodes_seen = decodes;
    }
}

/* What one node of the job must have left: its CPUs and memory per node. */
static void _per_node_need(job_record_t *job_ptr, uint32_t nodes, uint16_t *cpus, uint64_t *mem) {
    struct job_details *d = job_ptr->details;
    *cpus = 1;
    *mem = 0;
    if (d && nodes) {
        uint32_t per_node = d->min_cpus / nodes;
        *cpus = per_node > 1 ? (uint16_t)MIN(per_node, UINT16_MAX) : 1;
        if (d->pn_min_memory & MEM_PER_CPU)
            *mem = (d->pn_min_memory & ~MEM_PER_CPU) * *cpus;
        else
            *mem = d->pn_min_memory;
    }
}

/* Room on the candidates of `bitmap` for one node of the job, with their free GPUs. */
static ai_node_t *_view_of(job_record_t *job_ptr, bitstr_t *bitmap, uint32_t nodes) {
    ai_node_t *view = xcalloc(node_record_count + 1, sizeof(*view));
    node_record_t *node_ptr;
    uint16_t cpus;
    uint64_t mem;

    _per_node_need(job_ptr, nodes, &cpus, &mem);
    /* Only candidates are looked at: the rest stay unusable and cost nothing. */
    for (int i = 0; (node_ptr = next_node(&i)); i++) {
        if (!bit_test(bitmap, node_ptr->index) || !_has_room(node_ptr, cpus, mem))
            continue;
        view[node_ptr->index].usable = 1;
        view[node_ptr->index].free_gpus = _free_gpus(node_ptr);
        view[node_ptr->index].weight = node_ptr->weight;
    }
    return view;
}

static void _outcome_init(ai_outcome_t *out) {
    memset(out, 0, sizeof(*out));
    out->nodes = xcalloc(node_record_count + 1, sizeof(int));
    out->widen = xcalloc(node_record_count + 1, sizeof(int));
}

static void _outcome_free(ai_outcome_t *out) {
    xfree(out->nodes);
    xfree(out->widen);
}

/*
 * Asks the engine about a job, with the candidate nodes of `bitmap` and slurmctld's GRES
 * state. Fills `out` (when given; _outcome_free releases it) and returns AI_PLACED,
 * AI_WAIT or AI_PASSTHROUGH; an engine error is a passthrough.
 */
static int _decide(job_record_t *job_ptr, bitstr_t *bitmap, ai_job_t *req, ai_outcome_t *out) {
    ai_outcome_t local;
    ai_node_t *view = _view_of(job_ptr, bitmap, req->min_nodes);
    char err[512] = "";

    if (!out)
        out = &local;
    _outcome_init(out);
    if (ai_select_decide(req, view, node_record_count, out, err, sizeof(err)) < 0) {
        out->kind = AI_PASSTHROUGH;
        out->log_reason = 1;
        snprintf(out->reason, sizeof(out->reason), "engine error: %s", err);
    }
    xfree(view);
    if (out == &local)
        _outcome_free(&local);
    return out->kind;
}

/*
 * Node counts for cons_tres: an elastic job (--ai-elastic=MIN:MAX) may start with any
 * count of its range, which the service has already clamped into slurmctld's
 * min_nodes..max_nodes (elastic_within), so the job never gets fewer nodes than Slurm
 * accepts for it.
 */
static void _node_counts(job_record_t *job_ptr, const ai_job_traits_t *traits,
                         const ai_outcome_t *out, uint32_t *min_nodes, uint32_t *max_nodes,
                         uint32_t *req_nodes) {
    uint32_t lo = 0, hi = 0, slurm_min = *min_nodes, slurm_max = *max_nodes;

    if (out && out->min_nodes) {
        *min_nodes = out->min_nodes;
        *max_nodes = out->max_nodes;
        *req_nodes = out->req_nodes;
        return;
    }
    if (!traits->elastic)
        return;
    _task_bounds(job_ptr, &slurm_min, &slurm_max);
    if (ai_select_elastic_range(job_ptr->job_id, (const char *const *)job_ptr->spank_job_env,
                                job_ptr->spank_job_env_size, slurm_min, slurm_max, &lo, &hi) > 0) {
        *min_nodes = lo;
        *max_nodes = hi;
        *req_nodes = hi;
    }
}

/*
 * A placed job: cons_tres allocates on exactly the engine's nodes; if it refuses them,
 * it gets the engine's whole subtree, and then (full_fallback) the full candidate bitmap.
 */
static int _test_placed(job_record_t *job_ptr, bitstr_t *bitmap, const ai_outcome_t *out,
                        uint32_t min_nodes, uint32_t max_nodes, uint32_t req_nodes, uint16_t mode,
                        List preemptee_candidates, List *preemptee_job_list,
                        bitstr_t *exc_core_bitmap, bool full_fallback) {
    bitstr_t *orig = bit_copy(bitmap), *attempt;
    int rc = SLURM_ERROR;

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
    for (int step = 0; step < (full_fallback ? 3 : 2); step++) {
        if (step == 0)
            attempt = _bitmap_of(out->nodes, out->nodes_len);
        else if (step == 1)
            attempt = _bitmap_of(out->widen, out->widen_len);
        else
            attempt = bit_copy(orig);
        bit_and(attempt, orig);
        rc = cons_tres.job_test(
            job_ptr, attempt, min_nodes, max_nodes,
            step == 0 ? MIN(MAX(out->nodes_len, min_nodes), max_nodes) : req_nodes, mode,
            preemptee_candidates, preemptee_job_list, exc_core_bitmap);
        if (rc == SLURM_SUCCESS) {
            bit_copybits(bitmap, attempt);
            if (step > 0)
                info("%s: %pJ: cons_tres refused the engine's nodes; placed on the %s", plugin_type,
                     job_ptr, step == 1 ? "engine's subtree" : "full candidate set");
            else
                log_flag(SELECT_TYPE, "%s: %pJ %s", plugin_type, job_ptr, out->reason);
            FREE_NULL_BITMAP(attempt);
            break;
        }
        FREE_NULL_BITMAP(attempt);
    }
    FREE_NULL_BITMAP(orig);
    return rc;
}

/*
 * Where another member of a gang could run, roughly as slurmctld will see it when it
 * tests that job: its partition's nodes that are up and shareable, less those it
 * excludes, with room for one node of it. The member's own test has the last word.
 */
static uint8_t *_member_usable(job_record_t *m) {
    uint8_t *usable = xcalloc(node_record_count + 1, sizeof(uint8_t));
    bitstr_t *b;
    node_record_t *node_ptr;
    uint16_t cpus;
    uint64_t mem;

    if (!m->part_ptr || !m->part_ptr->node_bitmap)
        return usable;
    b = bit_copy(m->part_ptr->node_bitmap);
    if (*ctld.avail_node_bitmap)
        bit_and(b, *ctld.avail_node_bitmap);
    if (*ctld.share_node_bitmap)
        bit_and(b, *ctld.share_node_bitmap);
    if (m->details && m->details->exc_node_bitmap)
        bit_and_not(b, m->details->exc_node_bitmap);
    _per_node_need(m, m->details ? m->details->min_nodes : 1, &cpus, &mem);
    for (int i = 0; (node_ptr = next_node(&i)); i++)
        if (bit_test(b, node_ptr->index) && _has_room(node_ptr, cpus, mem))
            usable[node_ptr->index] = 1;
    FREE_NULL_BITMAP(b);
    return usable;
}

/*
 * A gang member (--ai-gang): waits, with its reason in SystemComment, until every member
 * is pending; then the whole gang is placed at once and each member starts on its share
 * (see SelectService::decide_gang). Backfill's will-run test only checks the barrier, so
 * that no member gets a reservation before its gang can start.
 */
static int _gang_job_test(job_record_t *job_ptr, const ai_job_traits_t *traits, bitstr_t *bitmap,
                          uint32_t min_nodes, uint32_t max_nodes, uint32_t req_nodes, uint16_t mode,
                          List preemptee_candidates, List *preemptee_job_list,
                          bitstr_t *exc_core_bitmap) {
    ai_gang_member_t *members = NULL;
    uint32_t count = 0, cap = 0;
    ai_job_t req;
    ai_outcome_t out;
    ai_node_t *view;
    job_record_t *m;
    ListIterator it;
    time_t now = time(NULL);
    char err[512] = "";
    int rc;
    const int place = mode == SELECT_MODE_RUN_NOW;

    _job_request(job_ptr, min_nodes, max_nodes, &req);
    it = list_iterator_create(*ctld.job_list);
    while ((m = list_next(it))) {
        ai_job_traits_t mt;
        ai_gang_member_t *gm;
        if (m->user_id != job_ptr->user_id)
            continue;
        _traits(m, &mt);
        if (xstrcmp(mt.gang, traits->gang))
            continue;
        if (count == cap) {
            cap = cap ? 2 * cap : 8;
            xrecalloc(members, cap, sizeof(*members));
        }
        gm = &members[count++];
        _job_request(m, m->details ? m->details->min_nodes : 1,
                     m->details && m->details->max_nodes ? m->details->max_nodes
                     : m->details                        ? m->details->min_nodes
                                                         : 1,
                     &gm->job);
        gm->state = IS_JOB_PENDING(m) && !IS_JOB_COMPLETING(m) ? AI_MEMBER_PENDING
                    : IS_JOB_RUNNING(m) || IS_JOB_SUSPENDED(m) ? AI_MEMBER_RUNNING
                                                               : AI_MEMBER_ENDED;
        gm->eligible =
            gm->state == AI_MEMBER_PENDING && m->priority != 0 &&
            (!m->details || !m->details->begin_time || m->details->begin_time <= now) &&
            (!m->details || !m->details->depend_list || !list_count(m->details->depend_list));
        gm->submit_time = m->details ? m->details->submit_time : 0;
        if (gm->state == AI_MEMBER_PENDING && m != job_ptr && place)
            gm->usable = _member_usable(m);
    }
    list_iterator_destroy(it);

    view = _view_of(job_ptr, bitmap, req.min_nodes);
    if (place) {
        /* Free GPUs of the nodes the other members may use count in the joint placement. */
        for (uint32_t i = 0; i < count; i++)
            for (int n = 0; members[i].usable && n < node_record_count; n++)
                if (members[i].usable[n] && !view[n].usable && node_record_table_ptr[n]) {
                    view[n].free_gpus = _free_gpus(node_record_table_ptr[n]);
                    view[n].weight = node_record_table_ptr[n]->weight;
                }
    }
    _outcome_init(&out);
    if (ai_select_decide_gang(&req, members, count, view, node_record_count, now, place, &out, err,
                              sizeof(err)) < 0) {
        /* An engine failure must not start one member alone: the gang waits. */
        out.kind = AI_WAIT;
        snprintf(out.reason, sizeof(out.reason), "gang engine error: %s", err);
        error("%s: %pJ: %s", plugin_type, job_ptr, out.reason);
    }
    if (out.comment[0] && xstrcmp(job_ptr->system_comment, out.comment)) {
        xfree(job_ptr->system_comment);
        job_ptr->system_comment = xstrdup(out.comment);
        log_flag(SELECT_TYPE, "%s: %pJ %s", plugin_type, job_ptr, out.comment);
    }
    if (ai_select_gangs_save(slurm_conf.state_save_location, now, err, sizeof(err)) < 0)
        error("%s: cannot write the gangs' state: %s", plugin_type, err);

    _node_counts(job_ptr, traits, &out, &min_nodes, &max_nodes, &req_nodes);
    if (out.kind == AI_WAIT)
        rc = SLURM_ERROR;
    else if (out.kind == AI_PASSTHROUGH)
        rc = cons_tres.job_test(job_ptr, bitmap, min_nodes, max_nodes, req_nodes, mode,
                                preemptee_candidates, preemptee_job_list, exc_core_bitmap);
    else
        /* Never the full candidate set: it would reach into the other members' nodes. */
        rc = _test_placed(job_ptr, bitmap, &out, min_nodes, max_nodes, req_nodes, mode,
                          preemptee_candidates, preemptee_job_list, exc_core_bitmap, false);

    _outcome_free(&out);
    xfree(view);
    for (uint32_t i = 0; i < count; i++) {
        _job_request_free(&members[i].job);
        xfree(members[i].usable);
    }
    xfree(members);
    _job_request_free(&req);
    return rc;
}

/*
 * Run-now: the engine picks the nodes from the candidates and cons_tres allocates on
 * exactly those (see _test_placed). Will-run (backfill) and test-only go to cons_tres
 * unchanged, so that their start times are the ones run-now will meet: the engine always
 * finds a placement when cons_tres does, unless the job asked for locality. Gang members
 * go through _gang_job_test; other jobs' run-now tests leave out the nodes planned for
 * gang members that have not started yet.
 */
int select_p_job_test(job_record_t *job_ptr, bitstr_t *bitmap, uint32_t min_nodes,
                      uint32_t max_nodes, uint32_t req_nodes, uint16_t mode,
                      List preemptee_candidates, List *preemptee_job_list,
                      bitstr_t *exc_core_bitmap) {
    ai_job_t req;
    ai_outcome_t out;
    ai_job_traits_t traits;
    int rc;
    uint32_t n_held;

    _note_down_nodes();
    _restore_expansion_link(job_ptr);
    _traits(job_ptr, &traits);
    /* Test-only (may the job ever run: submission, reconfiguration) skips the barrier. */
    if (mode != SELECT_MODE_TEST_ONLY && traits.gang[0] && ctld.found)
        return _gang_job_test(job_ptr, &traits, bitmap, min_nodes, max_nodes, req_nodes, mode,
                              preemptee_candidates, preemptee_job_list, exc_core_bitmap);
    /* Nothing to allocate while no gang has a plan (the common case). */
    if (mode == SELECT_MODE_RUN_NOW &&
        (n_held = ai_select_gang_reserved(job_ptr->job_id, time(NULL), NULL, 0))) {
        int *held = xcalloc(n_held, sizeof(int));
        n_held = MIN(n_held, ai_select_gang_reserved(job_ptr->job_id, time(NULL), held, n_held));
        for (uint32_t i = 0; i < n_held; i++)
            if (held[i] >= 0 && held[i] < bit_size(bitmap))
                bit_clear(bitmap, held[i]);
        xfree(held);
    }
    /*
     * Backfill must not reserve nodes for a job that waits for locality: the engine would
     * not start it there, and the reservation would hold back every job behind it. When
     * hard locality will be met cannot be foreseen, so such jobs get no reservation and
     * start when run-now finds them a compact placement; soft locality waits only while
     * the engine says so.
     */
    if (mode == SELECT_MODE_WILL_RUN && traits.locality) {
        bool wait;
        if (traits.locality == 2)
            return SLURM_ERROR;
        wait = _job_request(job_ptr, min_nodes, max_nodes, &req) &&
               _decide(job_ptr, bitmap, &req, NULL) == AI_WAIT;
        _job_request_free(&req);
        if (wait)
            return SLURM_ERROR;
    }
    if (mode != SELECT_MODE_RUN_NOW || !_job_request(job_ptr, min_nodes, max_nodes, &req)) {
        if (mode == SELECT_MODE_RUN_NOW)
            _job_request_free(&req);
        _node_counts(job_ptr, &traits, NULL, &min_nodes, &max_nodes, &req_nodes);
        return cons_tres.job_test(job_ptr, bitmap, min_nodes, max_nodes, req_nodes, mode,
                                  preemptee_candidates, preemptee_job_list, exc_core_bitmap);
    }

    _decide(job_ptr, bitmap, &req, &out);
    _job_request_free(&req);
    _node_counts(job_ptr, &traits, &out, &min_nodes, &max_nodes, &req_nodes);

    if (out.kind == AI_WAIT) {
        log_flag(SELECT_TYPE, "%s: %pJ waits: %s", plugin_type, job_ptr, out.reason);
        rc = SLURM_ERROR;
    } else if (out.kind == AI_PASSTHROUGH) {
        if (out.log_reason)
            info("%s: %pJ placed by plain cons_tres: %s", plugin_type, job_ptr, out.reason);
        rc = cons_tres.job_test(job_ptr, bitmap, min_nodes, max_nodes, req_nodes, mode,
                                preemptee_candidates, preemptee_job_list, exc_core_bitmap);
    } else {
        rc = _test_placed(job_ptr, bitmap, &out, min_nodes, max_nodes, req_nodes, mode,
                          preemptee_candidates, preemptee_job_list, exc_core_bitmap, true);
    }
    _outcome_free(&out);
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

    /* The node range the job was tested with (see _get_req_features): its own, or its
     * partition's maximum when it gave none. */
    _job_request(job_ptr, job_ptr->details ? job_ptr->details->min_nodes : 1,
                 job_ptr->details && job_ptr->details->max_nodes ? job_ptr->details->max_nodes
                 : job_ptr->part_ptr ? MIN(job_ptr->part_ptr->max_nodes, 500000)
                                     : 0,
                 &req);
    /* Failing to write the record never fails the job. */
    if (ai_select_record(slurm_conf.state_save_location, &req, nodes, gpus, summary,
                         sizeof(summary), err, sizeof(err)) < 0) {
        error("%s: %pJ: cannot record placement: %s", plugin_type, job_ptr, err);
    } else if (summary[0]) {
        xfree(job_ptr->system_comment);
        job_ptr->system_comment = xstrdup(summary);
        verbose("%s: %pJ %s; GPUs %s", plugin_type, job_ptr, summary, gpus ? gpus : "none");
    }
    _job_request_free(&req);
    xfree(gpus);
}

int select_p_job_ready(job_record_t *job_ptr) {
    return cons_tres.job_ready(job_ptr);
}

/*
 * A merged job's GRES total is the sum over its nodes: gres_ctld_job_merge moves the
 * per-node counts but leaves total_gres as the job had it, and a later shrink refuses to
 * take off a node whose count reaches that stale total (ESLURM_UNSUPPORTED_GRES), leaving
 * the job's per-node arrays unshifted and the node's GPUs booked for ever.
 */
static void _sum_total_gres(List gres_list) {
    ListIterator it;
    gres_state_t *gs;

    if (!gres_list)
        return;
    it = list_iterator_create(gres_list);
    while ((gs = list_next(it))) {
        gres_job_state_t *js = gs->gres_data;
        uint64_t total = 0;
        if (!js || !js->gres_cnt_node_alloc || js->total_gres == NO_CONSUME_VAL64)
            continue;
        for (uint32_t n = 0; n < js->node_cnt; n++)
            total += js->gres_cnt_node_alloc[n];
        js->total_gres = total;
    }
    list_iterator_destroy(it);
}

/*
 * The cores a job holds on each node it uses (copy_job_resources_node), by node index,
 * NULL where none; ORed into `by_node` (allocated here when NULL).
 */
static bitstr_t **_cores_by_node(job_record_t *job_ptr, bitstr_t **by_node) {
    job_resources_t *res = job_ptr->job_resrcs;

    if (!res || !res->core_bitmap || !res->node_bitmap || !job_ptr->node_bitmap)
        return by_node;
    if (!by_node)
        by_node = xcalloc(node_record_count, sizeof(bitstr_t *));
    for (int i = 0, n = -1; i < bit_size(res->node_bitmap) && i < node_record_count; i++) {
        bitstr_t *cores;
        if (!bit_test(res->node_bitmap, i))
            continue;
        n++;
        /* A node the job no longer uses (taken off by a shrink) gives nothing. */
        if (!bit_test(job_ptr->node_bitmap, i) || !(cores = copy_job_resources_node(res, n)))
            continue;
        if (!by_node[i])
            by_node[i] = cores;
        else {
            if (bit_size(by_node[i]) == bit_size(cores))
                bit_or(by_node[i], cores);
            FREE_NULL_BITMAP(cores);
        }
    }
    return by_node;
}

/*
 * cons_tres's job_expand in Slurm 22.05 ORs each job's whole core bitmap into the merged
 * job's at its first node (job_resources_bits_copy ignores the node offsets): the merged
 * job lists every core on its first node and none on the added ones, whose CPUs then
 * read as free (CPUAlloc=0) and could be given to another job. Here the merged job's
 * cores are taken off its nodes, laid out again node by node from what each job held
 * before the merge, and booked again, with cons_tres's own bookkeeping for a suspended
 * job (cores only: memory and GRES stay as the merge left them). No core is in use by a
 * step after the merge: cons_tres clears the grown job's, and the expansion job's steps
 * end with it.
 */
static int _cons_tres_expand(job_record_t *from_job_ptr, job_record_t *to_job_ptr) {
    bitstr_t **held = _cores_by_node(to_job_ptr, _cores_by_node(from_job_ptr, NULL));
    job_resources_t *res;
    int rc = cons_tres.job_expand(from_job_ptr, to_job_ptr);

    res = to_job_ptr->job_resrcs;
    if (rc == SLURM_SUCCESS && held && res && res->core_bitmap && res->node_bitmap) {
        (void)cons_tres.job_suspend(to_job_ptr, true);
        bit_clear_all(res->core_bitmap);
        if (res->core_bitmap_used)
            bit_clear_all(res->core_bitmap_used);
        for (int i = 0, n = -1; i < bit_size(res->node_bitmap) && i < node_record_count; i++) {
            int first;
            if (!bit_test(res->node_bitmap, i))
                continue;
            n++;
            if (!held[i] || (first = get_job_resources_offset(res, n, 0, 0)) < 0)
                continue;
            for (int k = 0; k < bit_size(held[i]) && first + k < bit_size(res->core_bitmap); k++)
                if (bit_test(held[i], k))
                    bit_set(res->core_bitmap, first + k);
        }
        (void)cons_tres.job_resume(to_job_ptr, true);
        log_flag(SELECT_TYPE, "%s: %pJ: cores laid out again on its %u nodes after the merge",
                 plugin_type, to_job_ptr, res->nhosts);
    }
    if (held) {
        for (int i = 0; i < node_record_count; i++)
            FREE_NULL_BITMAP(held[i]);
        xfree(held);
    }
    return rc;
}

/*
 * Merges an expansion job's resources into the job it expands (scontrol update
 * NumNodes=0 on the expansion job). cons_tres refuses jobs with GRES ("has allocated
 * GRES"), which rules out every GPU job, so the GRES part is done here: cons_tres merges
 * cores, memory and the allocated-GRES lists with the request lists hidden, then both
 * request lists are merged by node and the merged job's GPUs are booked on its nodes the
 * way slurmctld rebooks a running job at start-up (gres_ctld_job_alloc, new_alloc false).
 */
int select_p_job_expand(job_record_t *from_job_ptr, job_record_t *to_job_ptr) {
    List from_req = from_job_ptr->gres_list_req, to_req = to_job_ptr->gres_list_req;
    bitstr_t *from_nodes, *to_nodes;
    job_resources_t *res;
    int rc;

    if ((!from_req && !to_req) || !ctld.found || !from_job_ptr->job_resrcs ||
        !to_job_ptr->job_resrcs || !from_job_ptr->job_resrcs->node_bitmap ||
        !to_job_ptr->job_resrcs->node_bitmap)
        return _cons_tres_expand(from_job_ptr, to_job_ptr);
    if (!from_req || !to_req) {
        /* The request lists are indexed by each job's own nodes: one alone cannot serve. */
        error("%s: cannot merge %pJ into %pJ: only one of them has GRES", plugin_type, from_job_ptr,
              to_job_ptr);
        return SLURM_ERROR;
    }
    from_nodes = bit_copy(from_job_ptr->job_resrcs->node_bitmap);
    to_nodes = bit_copy(to_job_ptr->job_resrcs->node_bitmap);
    from_job_ptr->gres_list_req = to_job_ptr->gres_list_req = NULL;
    rc = _cons_tres_expand(from_job_ptr, to_job_ptr);
    from_job_ptr->gres_list_req = from_req;
    to_job_ptr->gres_list_req = to_req;
    if (rc == SLURM_SUCCESS && (res = to_job_ptr->job_resrcs) && res->node_bitmap) {
        ctld.gres_job_merge(from_req, from_nodes, to_req, to_nodes);
        for (int i = 0, n = -1; i < bit_size(res->node_bitmap); i++) {
            bitstr_t *cores;
            if (!bit_test(res->node_bitmap, i))
                continue;
            n++;
            if (!res->cpus[n] || !node_record_table_ptr[i])
                continue;
            cores = copy_job_resources_node(res, n);
            /* Its return value is SLURM_ERROR even on success; it logs real failures. */
            (void)ctld.gres_job_alloc(to_job_ptr->gres_list_req, &to_job_ptr->gres_list_alloc,
                                      node_record_table_ptr[i]->gres_list, res->nhosts, i, n,
                                      to_job_ptr->job_id, node_record_table_ptr[i]->name, cores,
                                      false);
            FREE_NULL_BITMAP(cores);
        }
        _sum_total_gres(to_job_ptr->gres_list_req);
        _sum_total_gres(to_job_ptr->gres_list_alloc);
        ctld.gres_job_build_details(to_job_ptr->gres_list_alloc, &to_job_ptr->gres_detail_cnt,
                                    &to_job_ptr->gres_detail_str, &to_job_ptr->gres_used);
        verbose("%s: %pJ merged into %pJ with its GRES; now %s", plugin_type, from_job_ptr,
                to_job_ptr, to_job_ptr->nodes);
    }
    FREE_NULL_BITMAP(from_nodes);
    FREE_NULL_BITMAP(to_nodes);
    return rc;
}

int select_p_job_resized(job_record_t *job_ptr, node_record_t *node_ptr) {
    return cons_tres.job_resized(job_ptr, node_ptr);
}

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
        debug("%s: %pJ: accounting index reset after its resize", plugin_type, job_ptr);
    }
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
    _note_down_nodes();
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
