/*
 * Node-state tracking: the free view of the candidate nodes (room, free GPUs, weight) that
 * the engine places on, where another gang member could run, and the nodes that went
 * DOWN, which count in the failure-risk model's history.
 */
#include "select_ai_internal.h"

/* Free GPUs of a node as a bit mask, from its GRES state. */
uint64_t ai_free_gpus(node_record_t *node_ptr) {
    list_itr_t *it;
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

/*
 * Nodes that went DOWN since the last look count as failures in the risk model's history
 * (kept across restarts by state_save). Looked at from the job tests and whenever
 * slurmctld refreshes its node information (scontrol show node, sinfo, health checks):
 * with ReturnToService=2 a node set DOWN is back at the next ping that it answers, so a
 * queue without pending jobs (no job tests) would never show it. Skipped until a node's
 * state changed again (slurmctld's last_node_update).
 */
void ai_note_down_nodes(void) {
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
        bool drain = IS_NODE_DRAIN(node_ptr);
        if ((down || drain) && !bit_test(was_down, node_ptr->index)) {
            /* A DRAIN for maintenance does not count, and is looked at again: its reason may
             * change, or the node go DOWN. */
            int counted = ai_select_note_failure(node_ptr->name, node_ptr->reason, down, err,
                                                 sizeof(err));
            if (counted < 0)
                error("%s: %s: failure not counted: %s", AI_LOG, node_ptr->name, err);
            if (counted > 0) {
                bit_set(was_down, node_ptr->index);
                noted = true;
                log_flag(SELECT_TYPE, "%s: %s is %s (%s): counted in its failure history",
                         AI_LOG, node_ptr->name, down ? "down" : "drained",
                         node_ptr->reason ? node_ptr->reason : "no reason");
            }
        } else if (!down && !drain) {
            bit_clear(was_down, node_ptr->index);
        }
    }
    /*
     * Saved now, not at slurmctld's next full state save (every 5 minutes, and at a clean
     * shutdown): a controller that crashes in between must not forget the failure.
     */
    if (noted && ai_select_state_save(slurm_conf.state_save_location, err, sizeof(err)) < 0)
        error("%s: cannot save state in %s: %s", AI_LOG, slurm_conf.state_save_location, err);
    slurm_mutex_unlock(&lock);
}

bitstr_t *ai_bitmap_of(const int *nodes, uint32_t count) {
    bitstr_t *b = bit_alloc(node_record_count);
    for (uint32_t i = 0; i < count; i++)
        if (nodes[i] >= 0 && nodes[i] < node_record_count)
            bit_set(b, nodes[i]);
    return b;
}

/*
 * Whether a node has the CPUs and memory left that one node of the job needs, from the
 * counts cons_tres keeps per node (in its select_nodeinfo before 25.05, in the node
 * record in 25.05-25.11, beside it from 26.05). They are refreshed lazily, so they may lag;
 * cons_tres has the last word, and the widening steps cover a stale view.
 */
static bool _has_room(node_record_t *node_ptr, uint16_t cpus, uint64_t mem) {
#if AI_SELECT_API >= 2605
    /* 26.05 moved the counts out of the node record, into an array by node index. */
    const node_select_stats_t *stats =
        node_select_stats_array ? node_select_stats_array[node_ptr->index] : NULL;
    uint16_t alloc_cpus = stats ? stats->alloc_cpus : 0;
    uint64_t alloc_mem = stats ? stats->alloc_memory : 0;
#elif AI_SELECT_API >= 2505
    uint16_t alloc_cpus = node_ptr->alloc_cpus;
    uint64_t alloc_mem = node_ptr->alloc_memory;
#else
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
#endif
    if (node_ptr->cpus_efctv && alloc_cpus + cpus > node_ptr->cpus_efctv)
        return false;
    if (mem && node_ptr->real_memory && alloc_mem + mem > node_ptr->real_memory)
        return false;
    return true;
}

/* Room on the candidates of `bitmap` for one node of the job, with their free GPUs. */
ai_node_t *ai_view_of(job_record_t *job_ptr, bitstr_t *bitmap, uint32_t nodes) {
    ai_node_t *view = xcalloc(node_record_count + 1, sizeof(*view));
    node_record_t *node_ptr;
    uint16_t cpus;
    uint64_t mem;

    ai_per_node_need(job_ptr, nodes, &cpus, &mem);
    /* Only candidates are looked at: the rest stay unusable and cost nothing. */
    for (int i = 0; (node_ptr = next_node(&i)); i++) {
        view[node_ptr->index].down =
            IS_NODE_DOWN(node_ptr) || IS_NODE_DRAIN(node_ptr) || IS_NODE_FAIL(node_ptr);
        if (!bit_test(bitmap, node_ptr->index) || !_has_room(node_ptr, cpus, mem))
            continue;
        view[node_ptr->index].usable = 1;
        view[node_ptr->index].free_gpus = ai_free_gpus(node_ptr);
        view[node_ptr->index].weight = node_ptr->weight;
    }
    return view;
}

/*
 * Where another member of a gang could run, roughly as slurmctld will see it when it
 * tests that job: its partition's nodes that are up and shareable, less those it
 * excludes, with room for one node of it. The member's own test has the last word.
 */
uint8_t *ai_member_usable(job_record_t *m) {
    uint8_t *usable = xcalloc(node_record_count + 1, sizeof(uint8_t));
    bitstr_t *b;
    node_record_t *node_ptr;
    uint16_t cpus;
    uint64_t mem;

    if (!m->part_ptr || !m->part_ptr->node_bitmap)
        return usable;
    b = bit_copy(m->part_ptr->node_bitmap);
    if (*ai_ctld.avail_node_bitmap)
        bit_and(b, *ai_ctld.avail_node_bitmap);
    if (*ai_ctld.share_node_bitmap)
        bit_and(b, *ai_ctld.share_node_bitmap);
    if (m->details && m->details->exc_node_bitmap)
        bit_and_not(b, m->details->exc_node_bitmap);
    ai_per_node_need(m, m->details ? m->details->min_nodes : 1, &cpus, &mem);
    for (int i = 0; (node_ptr = next_node(&i)); i++)
        if (bit_test(b, node_ptr->index) && _has_room(node_ptr, cpus, mem))
            usable[node_ptr->index] = 1;
    FREE_NULL_BITMAP(b);
    return usable;
}
