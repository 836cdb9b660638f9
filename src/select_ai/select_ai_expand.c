/*
 * The expansion workaround: what slurmctld 22.05 and cons_tres get wrong when a job grows
 * by merging an expansion job into it (scontrol update NumNodes=0), mended here: the lost
 * link after a restart, the merged job's core layout, and the GRES merge cons_tres refuses.
 */
#include "select_ai_internal.h"

/*
 * slurmctld keeps an expansion job's link to the job it grows (expanding_jobid) in memory
 * only: after a restart, NumNodes=0 on the expansion job fails ("Node count specification
 * invalid") and the grow can never complete. The link comes back from the job's
 * dependency (expand:<id>, kept while it is pending) or from the name the suite's tools
 * give expansion jobs (expansion_job_name): at start-up for every job, and in every test of
 * a pending one.
 */
void ai_restore_expansion_link(job_record_t *job_ptr) {
    const char *from = NULL;
    char *end = NULL;
    unsigned long parent = 0;

    if (!job_ptr->details || job_ptr->details->expanding_jobid || IS_JOB_FINISHED(job_ptr))
        return;
    if (job_ptr->details->dependency && (from = strstr(job_ptr->details->dependency, "expand:"))) {
        from += 7;
        parent = strtoul(from, &end, 10);
        if (end == from || parent > UINT32_MAX)
            parent = 0;
    } else if (job_ptr->name) {
        parent = ai_select_expanded_job_of(job_ptr->name);
    }
    if (!parent)
        return;
    job_ptr->details->expanding_jobid = (uint32_t)parent;
    verbose("%s: %pJ expands JobId=%lu again (link restored after a restart)", AI_LOG, job_ptr,
            parent);
}

/*
 * A merged job's GRES total is the sum over its nodes: gres_ctld_job_merge moves the
 * per-node counts but leaves total_gres as the job had it, and a later shrink refuses to
 * take off a node whose count reaches that stale total (ESLURM_UNSUPPORTED_GRES), leaving
 * the job's per-node arrays unshifted and the node's GPUs booked for ever.
 */
static void _sum_total_gres(list_t *gres_list) {
    list_itr_t *it;
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
                 AI_LOG, to_job_ptr, res->nhosts);
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
int ai_job_expand(job_record_t *from_job_ptr, job_record_t *to_job_ptr) {
    list_t *from_req = from_job_ptr->gres_list_req, *to_req = to_job_ptr->gres_list_req;
    bitstr_t *from_nodes, *to_nodes;
    job_resources_t *res;
    int rc;

    if ((!from_req && !to_req) || !ai_ctld.found || !from_job_ptr->job_resrcs ||
        !to_job_ptr->job_resrcs || !from_job_ptr->job_resrcs->node_bitmap ||
        !to_job_ptr->job_resrcs->node_bitmap)
        return _cons_tres_expand(from_job_ptr, to_job_ptr);
    if (!from_req || !to_req) {
        /* The request lists are indexed by each job's own nodes: one alone cannot serve. */
        error("%s: cannot merge %pJ into %pJ: only one of them has GRES", AI_LOG, from_job_ptr,
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
        ai_ctld.gres_job_merge(from_req, from_nodes, to_req, to_nodes);
        for (int i = 0, n = -1; i < bit_size(res->node_bitmap); i++) {
            bitstr_t *cores;
            if (!bit_test(res->node_bitmap, i))
                continue;
            n++;
            if (!res->cpus[n] || !node_record_table_ptr[i])
                continue;
            cores = copy_job_resources_node(res, n);
            /* Its return value is SLURM_ERROR even on success; it logs real failures. */
            (void)ai_ctld.gres_job_alloc(to_job_ptr->gres_list_req, &to_job_ptr->gres_list_alloc,
                                         node_record_table_ptr[i]->gres_list, res->nhosts, i, n,
                                         to_job_ptr->job_id, node_record_table_ptr[i]->name, cores,
                                         false);
            FREE_NULL_BITMAP(cores);
        }
        _sum_total_gres(to_job_ptr->gres_list_req);
        _sum_total_gres(to_job_ptr->gres_list_alloc);
#if AI_GRES_DETAILS_TAKE_NODES
        ai_ctld.gres_job_build_details(to_job_ptr->gres_list_alloc, to_job_ptr->nodes,
                                       &to_job_ptr->gres_detail_cnt, &to_job_ptr->gres_detail_str,
                                       &to_job_ptr->gres_used);
#else
        ai_ctld.gres_job_build_details(to_job_ptr->gres_list_alloc, &to_job_ptr->gres_detail_cnt,
                                       &to_job_ptr->gres_detail_str, &to_job_ptr->gres_used);
#endif
        verbose("%s: %pJ merged into %pJ with its GRES; now %s", AI_LOG, from_job_ptr, to_job_ptr,
                to_job_ptr->nodes);
    }
    FREE_NULL_BITMAP(from_nodes);
    FREE_NULL_BITMAP(to_nodes);
    return rc;
}
