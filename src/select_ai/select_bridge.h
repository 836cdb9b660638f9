/*
 * The C face of the select plugin's C++ (SelectService) for the C adapter. Plain C types
 * only, and translation only: the state is the service's. Every function but
 * ai_select_debug catches all exceptions and returns negative with the reason in err,
 * which the adapter writes to slurmctld's log before it falls back to plain cons_tres for
 * that one thing.
 */
#ifndef SLURM_AI_SELECT_BRIDGE_H
#define SLURM_AI_SELECT_BRIDGE_H

#include <stddef.h>
#include <stdint.h>

#include "include/slurm_ai/select_ai/select_node.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    uint32_t job_id;
    uint32_t min_nodes, max_nodes;
    uint32_t gpus_per_node, total_gpus, tasks;
    uint32_t pending_s;
    const char *const *env; /* the job's SPANK environment */
    uint32_t env_size;
    uint32_t user_id;
    uint32_t time_limit_s; /* 0: none (INFINITE) or not set */
    /* An expansion job (--dependency=expand): the job it grows, its nodes and SPANK env. */
    uint32_t expands_job_id;
    const int *expands;
    uint32_t expands_len;
    const char *const *expands_env;
    uint32_t expands_env_size;
} ai_job_t;

enum { AI_PASSTHROUGH = 0, AI_PLACED = 1, AI_WAIT = 2 };

typedef struct {
    int kind;
    int *nodes; /* caller's buffer of node_count entries: chosen Slurm node indexes */
    uint64_t *gpus; /* caller's buffer of node_count entries: the engine's GPUs on each of
                       nodes[] (bit i: GPU i, the node's gres bit i); 0: none chosen */
    uint32_t nodes_len;
    int *widen; /* caller's buffer of node_count entries: the subtree around them */
    uint32_t widen_len;
    int log_reason; /* first fallback of this job: log the reason */
    char reason[512];
    /* Node counts for cons_tres (an elastic job's MIN..MAX); 0: the job's request. */
    uint32_t min_nodes, max_nodes, req_nodes;
    char comment[512]; /* a waiting job's SystemComment, or "" */
} ai_outcome_t;

enum { AI_MEMBER_PENDING = 0, AI_MEMBER_RUNNING = 1, AI_MEMBER_ENDED = 2 };

/* A job of the same gang (same user, same --ai-gang NAME) as the one under test. */
typedef struct {
    ai_job_t job;
    int state;             /* AI_MEMBER_* */
    int held;              /* priority 0 */
    int64_t begin_time;    /* --begin, 0 for none */
    uint32_t dependencies; /* dependencies left in its list */
    int64_t submit_time;
    const uint8_t *usable; /* node_count entries: may this member run there */
} ai_gang_member_t;

/* (Re)loads ai_select.conf and the topology it names. On error the last good state stays. */
/* 0: loaded; 1: loaded, with a note in err for the log (a RiskModel= not used); -1: not
 * loaded, the reason in err. */
int ai_select_load(const char *conf_path, const char *default_fabric, const char *const *node_names,
                   uint32_t node_count, char *err, size_t errlen);
int ai_select_debug(void);

int ai_select_decide(const ai_job_t *job, const ai_node_t *nodes, uint32_t node_count,
                     ai_outcome_t *out, char *err, size_t errlen);
/* What plain cons_tres would have chosen (with Debug=yes), kept for the job's record. */
int ai_select_note_stock(uint32_t job_id, const char *nodes, char *err, size_t errlen);
/* Writes the job's record; copies a one-line summary into summary. */
int ai_select_record(const char *state_dir, const ai_job_t *job, const char *nodes,
                     const char *gpus, char *summary, size_t summary_len, char *err, size_t errlen);
int ai_select_forget(uint32_t job_id, char *err, size_t errlen);
/* ai_select.conf and the default fabric beside slurm.conf (beside_slurm_conf in
 * plugin_config.hpp): reads_yaml is 1 for a Slurm that reads topology.yaml (25.05+). */
int ai_select_beside_slurm_conf(const char *slurm_conf, int reads_yaml, char *conf,
                                size_t conf_len, char *fabric, size_t fabric_len, char *err,
                                size_t errlen);
/* Writes the notes of waiting jobs whose reason changed and removes those of jobs that
 * started or ended (StateSaveLocation/ai_select/pending/). */
int ai_select_save_pending(const char *state_dir, char *err, size_t errlen);

/*
 * A gang member's test: AI_WAIT (out->reason, out->comment), AI_PLACED (out->nodes) or
 * AI_PASSTHROUGH (the barrier is open and cons_tres decides; with place 0, backfill's
 * will-run test, this is the only answer besides AI_WAIT).
 */
int ai_select_decide_gang(const ai_job_t *job, const ai_gang_member_t *members,
                          uint32_t member_count, const ai_node_t *nodes, uint32_t node_count,
                          int64_t now, int place, ai_outcome_t *out, char *err, size_t errlen);
/* Nodes held for other gangs' unstarted members: writes up to `capacity` of them and sets
 * *count to how many there are (capacity 0 and nodes NULL: only counts). */
int ai_select_gang_reserved(uint32_t job_id, int64_t now, int *nodes, uint32_t capacity,
                            uint32_t *count, char *err, size_t errlen);
/* <state_dir>/ai_select/gangs.json, when a gang changed. */
int ai_select_gangs_save(const char *state_dir, int64_t now, char *err, size_t errlen);
/*
 * What the adapter needs of a job's --ai-* options, from the service's one decoding of
 * them (the option grammar exists only in C++). Returns 0, or -1 when the service failed
 * (out is then all "none").
 */
typedef struct {
    int locality;  /* --ai-locality: 0 none, 1 soft, 2 hard */
    int elastic;   /* 1: --ai-elastic given */
    char gang[80]; /* --ai-gang NAME, "" for none */
} ai_job_traits_t;
int ai_select_job_traits(uint32_t job_id, const char *const *env, uint32_t env_size,
                         ai_job_traits_t *out, char *err, size_t errlen);
/* The node counts the job may start with: its --ai-elastic MIN:MAX clamped into Slurm's
 * slurm_min..slurm_max (elastic_within). 1 when it has --ai-elastic, 0 when not. */
int ai_select_elastic_range(uint32_t job_id, const char *const *env, uint32_t env_size,
                            uint32_t slurm_min, uint32_t slurm_max, uint32_t *min_nodes,
                            uint32_t *max_nodes, char *err, size_t errlen);
/* The job an expansion job grows, from the name the suite's tools give expansion jobs
 * (slurm_ai/elastic/elastic_state.hpp); 0 when the name is not such a name. */
uint32_t ai_select_expanded_job_of(const char *job_name);
/* How many times the service decoded a job's options, and for how many jobs it keeps one
 * (the plugin's debug statistics: a pending job tested many times is decoded once). */
int ai_select_option_decodes(uint64_t *decodes, uint32_t *cached_jobs, char *err, size_t errlen);
/* A node went DOWN (down 1) or DRAIN (down 0) with Slurm's reason text: a DOWN counts in its
 * failure history, by the reason's class (failure_class.hpp); a DRAIN only when its reason
 * names a failing part (a GPU, the network, power, cooling, software), not for maintenance.
 * 1 when it counted. */
int ai_select_note_failure(const char *node, const char *reason, int down, char *err,
                           size_t errlen);

int ai_select_state_save(const char *dir, char *err, size_t errlen);
int ai_select_state_restore(const char *dir, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
