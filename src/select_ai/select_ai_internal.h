/*
 * What the C files of select/ai_cons_tres share, and only they: Slurm's headers in the
 * order slurmctld's own plugins include them, the slurmctld symbols looked up at start,
 * and the helpers each file offers the others. Nothing here leaves the .so (select_ai.map).
 *
 *   select_ai.c         identity, init/fini, the configuration, the 36 entry points
 *   select_ai_place.c   the job test (engine decision, gangs, cons_tres fallbacks)
 *   select_ai_job.c     job translation (ai_job_t, traits, per-node need, the record)
 *   select_ai_nodes.c   node-state tracking (free view, gang members' nodes, DOWN nodes)
 *   select_ai_expand.c  the expansion workaround (lost link, core layout, GRES merge)
 */
#ifndef SLURM_AI_SELECT_AI_INTERNAL_H
#define SLURM_AI_SELECT_AI_INTERNAL_H

#include "config.h"

#include "src/common/slurm_xlator.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cons_tres_forward.h" /* and select_api.h: the generation */
#include "select_bridge.h"
#include "slurm/slurm.h"
#include "src/common/log.h"
#include "src/common/read_config.h"

#include "src/common/bitstring.h"
#include "src/common/job_resources.h"
#include "src/common/list.h"
#include "src/common/node_conf.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"

extern const char plugin_type[];

/*
 * slurmctld-only symbols (select_ai.c looks them up in select_p_node_init). `found` is
 * false in slurmd and the client commands, and if one is missing: then gangs, expansion
 * placement and the GRES merge are off.
 */
struct ai_ctld_symbols {
    list_t **job_list;
    bitstr_t **avail_node_bitmap, **share_node_bitmap;
    job_record_t *(*find_job_record)(uint32_t job_id);
    /* Typed from Slurm's own declarations: a changed signature does not compile. */
    __typeof__(&AI_GRES_FN(job_merge)) gres_job_merge;
    __typeof__(&AI_GRES_FN(job_alloc)) gres_job_alloc;
    __typeof__(&AI_GRES_FN(job_build_details)) gres_job_build_details;
    bool found;
};
extern struct ai_ctld_symbols ai_ctld;

/* select_ai_job.c */
void ai_task_bounds(job_record_t *job_ptr, uint32_t *min_nodes, uint32_t *max_nodes);
bool ai_job_request(job_record_t *job_ptr, uint32_t min_nodes, uint32_t max_nodes, ai_job_t *req);
void ai_job_request_free(ai_job_t *req);
int ai_read_traits(job_record_t *job_ptr, ai_job_traits_t *t);
void ai_per_node_need(job_record_t *job_ptr, uint32_t nodes, uint16_t *cpus, uint64_t *mem);
void ai_record(job_record_t *job_ptr);

/* select_ai_nodes.c */
uint64_t ai_free_gpus(node_record_t *node_ptr);
void ai_note_down_nodes(void);
bitstr_t *ai_bitmap_of(const int *nodes, uint32_t count);
ai_node_t *ai_view_of(job_record_t *job_ptr, bitstr_t *bitmap, uint32_t nodes);
uint8_t *ai_member_usable(job_record_t *m);

/* select_ai_expand.c */
void ai_restore_expansion_link(job_record_t *job_ptr);
int ai_job_expand(job_record_t *from_job_ptr, job_record_t *to_job_ptr);

/* select_ai_place.c */
int ai_job_test(job_record_t *job_ptr, bitstr_t *bitmap, uint32_t min_nodes, uint32_t max_nodes,
                uint32_t req_nodes, uint16_t mode, list_t *preemptee_candidates,
                list_t **preemptee_job_list, const ai_test_extra_t *extra);

#endif
