/*
 * The job test: the engine's decision on slurmctld's free view, applied through cons_tres
 * (which keeps the exact core, memory and GRES accounting), for gang members and for every
 * other job.
 */
#include "select_ai_internal.h"

static void _outcome_init(ai_outcome_t *out) {
    memset(out, 0, sizeof(*out));
    out->nodes = xcalloc(node_record_count + 1, sizeof(int));
    out->gpus = xcalloc(node_record_count + 1, sizeof(uint64_t));
    out->widen = xcalloc(node_record_count + 1, sizeof(int));
}

static void _outcome_free(ai_outcome_t *out) {
    xfree(out->nodes);
    xfree(out->gpus);
    xfree(out->widen);
}

/*
 * Asks the engine about a job, with the candidate nodes of `bitmap` and slurmctld's GRES
 * state. Fills `out` (when given; _outcome_free releases it) and returns AI_PLACED,
 * AI_WAIT or AI_PASSTHROUGH; an engine error is a passthrough.
 */
static int _decide(job_record_t *job_ptr, bitstr_t *bitmap, ai_job_t *req, ai_outcome_t *out) {
    ai_outcome_t local;
    ai_node_t *view = ai_view_of(job_ptr, bitmap, req->min_nodes);
    char err[512] = "";

    if (!out)
        out = &local;
    _outcome_init(out);
    if (ai_select_decide(req, view, node_record_count, out, err, sizeof(err)) < 0) {
        out->kind = AI_PASSTHROUGH;
        out->log_reason = 1;
        snprintf(out->reason, sizeof(out->reason), "engine error: %.400s", err);
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
    char err[256];

    if (out && out->min_nodes) {
        *min_nodes = out->min_nodes;
        *max_nodes = out->max_nodes;
        *req_nodes = out->req_nodes;
        return;
    }
    if (!traits->elastic)
        return;
    ai_task_bounds(job_ptr, &slurm_min, &slurm_max);
    switch (ai_select_elastic_range(job_ptr->job_id, (const char *const *)job_ptr->spank_job_env,
                                    job_ptr->spank_job_env_size, slurm_min, slurm_max, &lo, &hi,
                                    err, sizeof(err))) {
        case 1:
            *min_nodes = lo;
            *max_nodes = hi;
            *req_nodes = hi;
            break;
        case 0:
            break;
        default: /* Slurm's own counts stand */
            error("%s: %pJ: elastic range unknown: %s", AI_LOG, job_ptr, err);
    }
}

/*
 * Whether the engine's GPU counts may replace cons_tres's on the job's nodes, not only its
 * GPUs: for a job that asks GPUs for the whole job only (--gpus=N), with nothing tied to
 * each GPU (CPUs, memory or tasks per GPU, or the partition's defaults of them), when
 * cons_tres's nodes (`nodes`; its selection on other nodes is left from earlier tests of
 * the job) are exactly the engine's, the engine's GPUs are free and both add up to N.
 * cons_tres fills the first node it can (leaving one GPU for each node after it); the
 * engine's split is the shape it chose (ShapeProfile=, docs/placement.md).
 */
static bool _counts_movable(const gres_job_state_t *js, const ai_outcome_t *out,
                            bitstr_t *nodes) {
    uint64_t engine = 0, selected = 0;
    uint32_t count = 0;

    /* Slurm writes NO_VAL16 / NO_VAL64 where a job did not give a value (ntasks_per_gres). */
#define AI_GIVEN16(v) ((v) && (v) != NO_VAL16)
#define AI_GIVEN64(v) ((v) && (v) != NO_VAL64)
    if (!AI_GIVEN64(js->gres_per_job) || AI_GIVEN64(js->gres_per_node) ||
        AI_GIVEN64(js->gres_per_socket) || AI_GIVEN64(js->gres_per_task) ||
        AI_GIVEN16(js->cpus_per_gres) || AI_GIVEN64(js->mem_per_gres) ||
        AI_GIVEN16(js->ntasks_per_gres) || AI_GIVEN16(js->def_cpus_per_gres) ||
        AI_GIVEN64(js->def_mem_per_gres) || !js->gres_cnt_node_select)
        return false;
#undef AI_GIVEN16
#undef AI_GIVEN64
    for (uint32_t i = 0; i < out->nodes_len; i++) {
        int n = out->nodes[i];
        uint64_t want = out->gpus[i];
        if (!want || n < 0 || n >= (int)js->total_node_cnt || !js->gres_bit_select[n] ||
            (ai_free_gpus(node_record_table_ptr[n]) & want) != want ||
            63 - __builtin_clzll(want) >= bit_size(js->gres_bit_select[n]))
            return false;
        engine += __builtin_popcountll(want);
    }
    for (uint32_t n = 0; n < js->total_node_cnt && (int)n < bit_size(nodes); n++)
        if (bit_test(nodes, n)) {
            if (!js->gres_bit_select[n])
                return false;
            selected += bit_set_count(js->gres_bit_select[n]);
            count++;
        }
    return count == out->nodes_len && engine == selected && engine == js->gres_per_job;
}

/*
 * The engine's GPUs instead of those cons_tres selected, node by node, where the engine's
 * are free: cons_tres's run-now test leaves its choice in the job's gres_bit_select (and
 * its count in gres_cnt_node_select), which job_begin turns into the allocation. Where the
 * counts differ, only as _counts_movable allows. Left alone with
 * --gres-flags=enforce-binding (cons_tres chose the cores for its own GPUs).
 */
static void _choose_gpus(job_record_t *job_ptr, const ai_outcome_t *out, bitstr_t *nodes) {
    list_itr_t *it;
    gres_state_t *gs;
    int changed = 0, moved = 0;

    if (!job_ptr->gres_list_req || !out->gpus || (job_ptr->bit_flags & GRES_ENFORCE_BIND))
        return;
    it = list_iterator_create(job_ptr->gres_list_req);
    while ((gs = list_next(it))) {
        gres_job_state_t *js = gs->gres_data;
        bool counts;
        if (xstrcmp(gs->gres_name, "gpu") || !js || !js->gres_bit_select)
            continue;
        counts = _counts_movable(js, out, nodes);
        for (uint32_t i = 0; i < out->nodes_len; i++) {
            int n = out->nodes[i];
            uint64_t want = out->gpus[i];
            bitstr_t *sel;
            if (!want || n < 0 || n >= (int)js->total_node_cnt || !(sel = js->gres_bit_select[n]))
                continue;
            if ((!counts && bit_set_count(sel) != __builtin_popcountll(want)) ||
                (ai_free_gpus(node_record_table_ptr[n]) & want) != want ||
                63 - __builtin_clzll(want) >= bit_size(sel))
                continue;
            if (bit_set_count(sel) != __builtin_popcountll(want))
                moved++;
            for (int g = 0; g < bit_size(sel); g++)
                if ((g < 64 && (want & ((uint64_t)1 << g))) != (bit_test(sel, g) != 0)) {
                    changed++;
                    break;
                }
            bit_clear_all(sel);
            for (int g = 0; g < 64; g++)
                if (want & ((uint64_t)1 << g))
                    bit_set(sel, g);
            if (counts)
                js->gres_cnt_node_select[n] = __builtin_popcountll(want);
        }
    }
    list_iterator_destroy(it);
    if (changed)
        log_flag(SELECT_TYPE, "%s: %pJ: the engine's GPUs on %d node(s), not cons_tres's%s",
                 AI_LOG, job_ptr, changed, moved ? ", and its GPU counts per node" : "");
}

/*
 * A placed job: cons_tres allocates on exactly the engine's nodes; if it refuses them,
 * it gets the engine's whole subtree, and then (full_fallback) the full candidate bitmap.
 */
static int _test_placed(job_record_t *job_ptr, bitstr_t *bitmap, const ai_outcome_t *out,
                        uint32_t min_nodes, uint32_t max_nodes, uint32_t req_nodes, uint16_t mode,
                        list_t *preemptee_candidates, list_t **preemptee_job_list,
                        const ai_test_extra_t *extra, bool full_fallback) {
    bitstr_t *orig = bit_copy(bitmap), *attempt;
    int rc = SLURM_ERROR;

    if (ai_select_debug()) {
        /* What plain cons_tres would choose, for the record; run-now selects, allocates not. */
        bitstr_t *stock = bit_copy(orig);
        if (AI_CONS_TRES_JOB_TEST(cons_tres, job_ptr, stock, min_nodes, max_nodes, req_nodes, mode,
                                  preemptee_candidates, NULL, extra) == SLURM_SUCCESS) {
            char *names = bitmap2node_name(stock), err[256];
            if (ai_select_note_stock(job_ptr->job_id, names, err, sizeof(err)) < 0)
                error("%s: %pJ: cons_tres's choice not kept: %s", AI_LOG, job_ptr, err);
            log_flag(SELECT_TYPE, "%s: %pJ: cons_tres alone would choose %s", AI_LOG, job_ptr,
                     names);
            xfree(names);
        }
        FREE_NULL_BITMAP(stock);
    }
    /*
     * All of the engine's nodes: left a range, cons_tres takes as few as hold the job (a
     * job of one task asks one CPU), which would undo a spread the engine chose.
     */
    uint32_t engine_nodes = MIN(MAX(out->nodes_len, min_nodes), max_nodes);
    for (int step = 0; step < (full_fallback ? 3 : 2); step++) {
        if (step == 0)
            attempt = ai_bitmap_of(out->nodes, out->nodes_len);
        else if (step == 1)
            attempt = ai_bitmap_of(out->widen, out->widen_len);
        else
            attempt = bit_copy(orig);
        bit_and(attempt, orig);
        rc = AI_CONS_TRES_JOB_TEST(cons_tres, job_ptr, attempt,
                                   step == 0 ? engine_nodes : min_nodes, max_nodes,
                                   step == 0 ? engine_nodes : req_nodes, mode,
                                   preemptee_candidates, preemptee_job_list, extra);
        if (rc == SLURM_SUCCESS) {
            bit_copybits(bitmap, attempt);
            if (step == 0 && mode == SELECT_MODE_RUN_NOW)
                _choose_gpus(job_ptr, out, bitmap);
            if (step > 0)
                info("%s: %pJ: cons_tres refused the engine's nodes; placed on the %s", AI_LOG,
                     job_ptr, step == 1 ? "engine's subtree" : "full candidate set");
            else
                log_flag(SELECT_TYPE, "%s: %pJ %s", AI_LOG, job_ptr, out->reason);
            FREE_NULL_BITMAP(attempt);
            break;
        }
        FREE_NULL_BITMAP(attempt);
    }
    FREE_NULL_BITMAP(orig);
    return rc;
}

/*
 * A gang member (--ai-gang): waits, with its reason in SystemComment, until every member
 * is pending; then the whole gang is placed at once and each member starts on its share
 * (see SelectService::decide_gang). Backfill's will-run test only checks the barrier, so
 * that no member gets a reservation before its gang can start.
 */
static int _gang_job_test(job_record_t *job_ptr, const ai_job_traits_t *traits, bitstr_t *bitmap,
                          uint32_t min_nodes, uint32_t max_nodes, uint32_t req_nodes, uint16_t mode,
                          list_t *preemptee_candidates, list_t **preemptee_job_list,
                          const ai_test_extra_t *extra) {
    ai_gang_member_t *members = NULL;
    uint32_t count = 0, cap = 0;
    ai_job_t req;
    ai_outcome_t out;
    ai_node_t *view;
    job_record_t *m;
    list_itr_t *it;
    time_t now = time(NULL);
    char err[512] = "";
    int rc;
    const int place = mode == SELECT_MODE_RUN_NOW;

    ai_job_request(job_ptr, min_nodes, max_nodes, &req);
    it = list_iterator_create(*ai_ctld.job_list);
    while ((m = list_next(it))) {
        ai_job_traits_t mt;
        ai_gang_member_t *gm;
        if (m->user_id != job_ptr->user_id)
            continue;
        /* A job whose options cannot be read (logged) is no member: the gang waits for it. */
        if (ai_read_traits(m, &mt) < 0 || xstrcmp(mt.gang, traits->gang))
            continue;
        if (count == cap) {
            cap = cap ? 2 * cap : 8;
            xrecalloc(members, cap, sizeof(*members));
        }
        gm = &members[count++];
        ai_job_request(m, m->details ? m->details->min_nodes : 1,
                       m->details && m->details->max_nodes ? m->details->max_nodes
                       : m->details                        ? m->details->min_nodes
                                                           : 1,
                       &gm->job);
        gm->state = IS_JOB_PENDING(m) && !IS_JOB_COMPLETING(m) ? AI_MEMBER_PENDING
                    : IS_JOB_RUNNING(m) || IS_JOB_SUSPENDED(m) ? AI_MEMBER_RUNNING
                                                               : AI_MEMBER_ENDED;
        gm->held = m->priority == 0;
        gm->begin_time = m->details ? m->details->begin_time : 0;
        gm->dependencies = m->details && m->details->depend_list
                               ? (uint32_t)list_count(m->details->depend_list)
                               : 0;
        gm->submit_time = m->details ? m->details->submit_time : 0;
        if (gm->state == AI_MEMBER_PENDING && m != job_ptr && place)
            gm->usable = ai_member_usable(m);
    }
    list_iterator_destroy(it);

    view = ai_view_of(job_ptr, bitmap, req.min_nodes);
    if (place) {
        /* Free GPUs of the nodes the other members may use count in the joint placement. */
        for (uint32_t i = 0; i < count; i++)
            for (int n = 0; members[i].usable && n < node_record_count; n++)
                if (members[i].usable[n] && !view[n].usable && node_record_table_ptr[n]) {
                    view[n].free_gpus = ai_free_gpus(node_record_table_ptr[n]);
                    view[n].weight = node_record_table_ptr[n]->weight;
                }
    }
    _outcome_init(&out);
    if (ai_select_decide_gang(&req, members, count, view, node_record_count, now, place, &out, err,
                              sizeof(err)) < 0) {
        /* An engine failure must not start one member alone: the gang waits. */
        out.kind = AI_WAIT;
        snprintf(out.reason, sizeof(out.reason), "gang engine error: %.400s", err);
        error("%s: %pJ: %s", AI_LOG, job_ptr, out.reason);
    }
    if (out.comment[0] && xstrcmp(job_ptr->system_comment, out.comment)) {
        xfree(job_ptr->system_comment);
        job_ptr->system_comment = xstrdup(out.comment);
        log_flag(SELECT_TYPE, "%s: %pJ %s", AI_LOG, job_ptr, out.comment);
    }
    if (ai_select_gangs_save(slurm_conf.state_save_location, now, err, sizeof(err)) < 0)
        error("%s: cannot write the gangs' state: %s", AI_LOG, err);

    _node_counts(job_ptr, traits, &out, &min_nodes, &max_nodes, &req_nodes);
    if (out.kind == AI_WAIT)
        rc = SLURM_ERROR;
    else if (out.kind == AI_PASSTHROUGH)
        rc = AI_CONS_TRES_JOB_TEST(cons_tres, job_ptr, bitmap, min_nodes, max_nodes, req_nodes,
                                   mode, preemptee_candidates, preemptee_job_list, extra);
    else
        /* Never the full candidate set: it would reach into the other members' nodes. */
        rc = _test_placed(job_ptr, bitmap, &out, min_nodes, max_nodes, req_nodes, mode,
                          preemptee_candidates, preemptee_job_list, extra, false);

    _outcome_free(&out);
    xfree(view);
    for (uint32_t i = 0; i < count; i++) {
        ai_job_request_free(&members[i].job);
        xfree(members[i].usable);
    }
    xfree(members);
    ai_job_request_free(&req);
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
/* Nodes planned for other gangs' unstarted members are not the job's to take. */
static void _leave_gang_nodes(job_record_t *job_ptr, bitstr_t *bitmap) {
    uint32_t n_held = 0, n_again = 0;
    int *held;
    char err[256];
    time_t now = time(NULL);

    if (ai_select_gang_reserved(job_ptr->job_id, now, NULL, 0, &n_held, err, sizeof(err)) < 0) {
        error("%s: %pJ: gangs' planned nodes unknown: %s", AI_LOG, job_ptr, err);
        return;
    }
    if (!n_held)
        return; /* nothing to allocate while no gang has a plan (the common case) */
    held = xcalloc(n_held, sizeof(int));
    if (ai_select_gang_reserved(job_ptr->job_id, now, held, n_held, &n_again, err, sizeof(err)) < 0)
        error("%s: %pJ: gangs' planned nodes unknown: %s", AI_LOG, job_ptr, err);
    else
        for (uint32_t i = 0; i < MIN(n_held, n_again); i++)
            if (held[i] >= 0 && held[i] < bit_size(bitmap))
                bit_clear(bitmap, held[i]);
    xfree(held);
}

int ai_job_test(job_record_t *job_ptr, bitstr_t *bitmap, uint32_t min_nodes, uint32_t max_nodes,
                uint32_t req_nodes, uint16_t mode, list_t *preemptee_candidates,
                list_t **preemptee_job_list, const ai_test_extra_t *extra) {
    ai_job_t req;
    ai_outcome_t out;
    ai_job_traits_t traits;
    char err[256];
    int rc;

    ai_note_down_nodes();
    ai_restore_expansion_link(job_ptr);
    if (ai_read_traits(job_ptr, &traits) < 0) /* logged: cons_tres alone tests it */
        return AI_CONS_TRES_JOB_TEST(cons_tres, job_ptr, bitmap, min_nodes, max_nodes, req_nodes,
                                     mode, preemptee_candidates, preemptee_job_list, extra);
    /* Test-only (may the job ever run: submission, reconfiguration) skips the barrier. */
    if (mode != SELECT_MODE_TEST_ONLY && traits.gang[0] && ai_ctld.found)
        return _gang_job_test(job_ptr, &traits, bitmap, min_nodes, max_nodes, req_nodes, mode,
                              preemptee_candidates, preemptee_job_list, extra);
    if (mode == SELECT_MODE_RUN_NOW)
        _leave_gang_nodes(job_ptr, bitmap);
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
        wait = ai_job_request(job_ptr, min_nodes, max_nodes, &req) &&
               _decide(job_ptr, bitmap, &req, NULL) == AI_WAIT;
        ai_job_request_free(&req);
        if (wait)
            return SLURM_ERROR;
    }
    if (mode != SELECT_MODE_RUN_NOW || !ai_job_request(job_ptr, min_nodes, max_nodes, &req)) {
        if (mode == SELECT_MODE_RUN_NOW)
            ai_job_request_free(&req);
        _node_counts(job_ptr, &traits, NULL, &min_nodes, &max_nodes, &req_nodes);
        return AI_CONS_TRES_JOB_TEST(cons_tres, job_ptr, bitmap, min_nodes, max_nodes, req_nodes,
                                     mode, preemptee_candidates, preemptee_job_list, extra);
    }

    _decide(job_ptr, bitmap, &req, &out);
    ai_job_request_free(&req);
    _node_counts(job_ptr, &traits, &out, &min_nodes, &max_nodes, &req_nodes);

    if (out.kind != AI_PLACED && slurm_conf.state_save_location &&
        ai_select_save_pending(slurm_conf.state_save_location, err, sizeof(err)) < 0)
        error("%s: %pJ: its pending note not saved: %s", AI_LOG, job_ptr, err);
    if (out.kind == AI_WAIT) {
        log_flag(SELECT_TYPE, "%s: %pJ waits: %s", AI_LOG, job_ptr, out.reason);
        rc = AI_TOPOLOGY_WAIT_RC;
    } else if (out.kind == AI_PASSTHROUGH) {
        if (out.log_reason)
            info("%s: %pJ placed by plain cons_tres: %s", AI_LOG, job_ptr, out.reason);
        rc = AI_CONS_TRES_JOB_TEST(cons_tres, job_ptr, bitmap, min_nodes, max_nodes, req_nodes,
                                   mode, preemptee_candidates, preemptee_job_list, extra);
    } else {
        rc = _test_placed(job_ptr, bitmap, &out, min_nodes, max_nodes, req_nodes, mode,
                          preemptee_candidates, preemptee_job_list, extra, true);
    }
    _outcome_free(&out);
    return rc;
}
