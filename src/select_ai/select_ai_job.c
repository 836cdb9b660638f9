/*
 * Job translation: a slurmctld job record as the service sees it (ai_job_t: node range,
 * tasks, GPUs, the SPANK environment, the job it expands), its decoded --ai-* traits, what
 * one of its nodes needs, and the record of what cons_tres gave it.
 */
#include "select_ai_internal.h"

/*
 * Narrows a node range to what the job's tasks allow: with an explicit --ntasks every node
 * runs at least one task, and with --ntasks-per-node too the task count fixes the node
 * count (slurmctld's record may still say 1 node; without --ntasks, Slurm adds tasks with
 * every node instead). max_nodes 0 means no bound.
 */
void ai_task_bounds(job_record_t *job_ptr, uint32_t *min_nodes, uint32_t *max_nodes) {
    job_details_t *d = job_ptr->details;
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
bool ai_job_request(job_record_t *job_ptr, uint32_t min_nodes, uint32_t max_nodes, ai_job_t *req) {
    list_itr_t *it;
    gres_state_t *gs;
    bool supported = true;

    memset(req, 0, sizeof(*req));
    req->job_id = job_ptr->job_id;
    req->user_id = job_ptr->user_id;
    if (job_ptr->details && job_ptr->details->expanding_jobid && ai_ctld.found) {
        /* An expansion job: placed next to the job it grows (see ai_job_request_free). */
        job_record_t *parent = ai_ctld.find_job_record(job_ptr->details->expanding_jobid);
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
    ai_task_bounds(job_ptr, &req->min_nodes, &req->max_nodes);
    req->tasks = job_ptr->details && job_ptr->details->num_tasks ? job_ptr->details->num_tasks : 1;
    req->env = (const char *const *)job_ptr->spank_job_env;
    req->env_size = job_ptr->spank_job_env_size;
    if (job_ptr->details && job_ptr->details->submit_time &&
        time(NULL) > job_ptr->details->submit_time)
        req->pending_s = (uint32_t)(time(NULL) - job_ptr->details->submit_time);
    /* Minutes; NO_VAL and INFINITE (no limit) leave it 0: such a job is never held. */
    if (job_ptr->time_limit && job_ptr->time_limit != NO_VAL &&
        job_ptr->time_limit != INFINITE && job_ptr->time_limit < 0xffffffffu / 60)
        req->time_limit_s = job_ptr->time_limit * 60;
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

void ai_job_request_free(ai_job_t *req) {
    int *nodes = (int *)req->expands;
    xfree(nodes);
    req->expands = NULL;
}

/*
 * What the adapter needs of the job's --ai-* options, from the service's decoding. With
 * Debug=yes and DebugFlags=SelectType, every new decoding is logged with the totals (the
 * plugin's debug statistics: a pending job tested at every pass is decoded once).
 * -1, logged, when the service failed: the caller must not guess the job's options.
 */
int ai_read_traits(job_record_t *job_ptr, ai_job_traits_t *t) {
    static uint64_t decodes_seen;
    uint64_t decodes = 0;
    uint32_t cached = 0;
    char err[256];

    if (ai_select_job_traits(job_ptr->job_id, (const char *const *)job_ptr->spank_job_env,
                             job_ptr->spank_job_env_size, t, err, sizeof(err)) < 0) {
        error("%s: %pJ: its --ai-* options could not be read: %s", AI_LOG, job_ptr, err);
        return -1;
    }
    if (!ai_select_debug())
        return 0;
    if (ai_select_option_decodes(&decodes, &cached, err, sizeof(err)) < 0) {
        error("%s: decoding statistics: %s", AI_LOG, err);
        return 0;
    }
    if (decodes != decodes_seen) {
        log_flag(SELECT_TYPE,
                 "%s: %pJ: options decoded (%" PRIu64 " decodings in all, %u jobs cached)", AI_LOG,
                 job_ptr, decodes, cached);
        decodes_seen = decodes;
    }
    return 0;
}

/* What one node of the job must have left: its CPUs and memory per node. */
void ai_per_node_need(job_record_t *job_ptr, uint32_t nodes, uint16_t *cpus, uint64_t *mem) {
    job_details_t *d = job_ptr->details;
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

/* "n1:0,1 n2:2,3": the GPUs cons_tres allocated to the job, per node. */
static char *_allocated_gpus(job_record_t *job_ptr) {
    char *out = NULL;
    list_itr_t *it;
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
 * cons_tres allocates a starting job's cores, memory and GPUs here (also for running jobs
 * at a slurmctld restart), so this is where the plugin records what the job got: the
 * per-job record that ai-explain shows and a one-line SystemComment.
 */
void ai_record(job_record_t *job_ptr) {
    char err[512] = "", summary[512] = "";
    ai_job_t req;
    const char *nodes = job_ptr->job_resrcs ? job_ptr->job_resrcs->nodes : job_ptr->nodes;
    char *gpus = _allocated_gpus(job_ptr);

    /* The node range the job was tested with (see _get_req_features): its own, or its
     * partition's maximum when it gave none. */
    ai_job_request(job_ptr, job_ptr->details ? job_ptr->details->min_nodes : 1,
                   job_ptr->details && job_ptr->details->max_nodes ? job_ptr->details->max_nodes
                   : job_ptr->part_ptr ? MIN(job_ptr->part_ptr->max_nodes, 500000)
                                       : 0,
                   &req);
    /* Failing to write the record never fails the job. */
    if (ai_select_record(slurm_conf.state_save_location, &req, nodes, gpus, summary,
                         sizeof(summary), err, sizeof(err)) < 0) {
        error("%s: %pJ: cannot record placement: %s", AI_LOG, job_ptr, err);
    } else if (summary[0]) {
        xfree(job_ptr->system_comment);
        job_ptr->system_comment = xstrdup(summary);
        verbose("%s: %pJ %s; GPUs %s", AI_LOG, job_ptr, summary, gpus ? gpus : "none");
    }
    ai_job_request_free(&req);
    xfree(gpus);
}
