#include "select_bridge.h"

#include <map>
#include <string>
#include <vector>

#include "slurm_ai/common/c_boundary.hpp"
#include "slurm_ai/elastic/elastic_state.hpp"
#include "slurm_ai/select_ai/select_service.hpp"

namespace {

using slurm_ai::copy_message;
using slurm_ai::guarded;

// slurmctld calls the select plugin with its locks held, one thread at a time.
slurm_ai::SelectService &service() {
    static slurm_ai::SelectService s;
    return s;
}

std::vector<const char *> env_of(const ai_job_t *job) {
    std::vector<const char *> env;
    if (job && job->env)
        env.assign(job->env, job->env + job->env_size);
    return env;
}

slurm_ai::SelectJob job_of(const ai_job_t *job) {
    return slurm_ai::SelectJob{job->job_id,     job->min_nodes, job->max_nodes, job->gpus_per_node,
                               job->total_gpus, job->tasks,     job->pending_s, env_of(job),
                               job->time_limit_s};
}

std::span<const slurm_ai::SelectNode> view_of(const ai_node_t *nodes, uint32_t node_count) {
    return {nodes, node_count};
}

void fill_outcome(const slurm_ai::SelectOutcome &o, uint32_t node_count, ai_outcome_t *out) {
    out->kind = o.kind == slurm_ai::SelectOutcome::Kind::kPlaced ? AI_PLACED
                : o.kind == slurm_ai::SelectOutcome::Kind::kWait ? AI_WAIT
                                                                 : AI_PASSTHROUGH;
    out->nodes_len = out->widen_len = 0;
    for (std::size_t i = 0; i < o.nodes.size(); ++i)
        if (o.nodes[i] >= 0 && out->nodes_len < node_count) {
            if (out->gpus)
                out->gpus[out->nodes_len] = i < o.gpus.size() ? o.gpus[i] : 0;
            out->nodes[out->nodes_len++] = o.nodes[i];
        }
    for (int n : o.widen)
        if (n >= 0 && out->widen_len < node_count)
            out->widen[out->widen_len++] = n;
    out->log_reason = o.log_reason ? 1 : 0;
    out->min_nodes = o.min_nodes;
    out->max_nodes = o.max_nodes;
    out->req_nodes = o.req_nodes;
    copy_message(out->reason, sizeof out->reason, o.reason);
    copy_message(out->comment, sizeof out->comment, o.comment);
}

}  // namespace

extern "C" int ai_select_load(const char *conf_path, const char *default_fabric,
                              const char *const *node_names, uint32_t node_count, char *err,
                              size_t errlen) {
    return guarded(err, errlen, [&] {
        std::vector<std::string> names(node_names, node_names + node_count);
        if (auto e = service().load(conf_path ? conf_path : "",
                                    default_fabric ? default_fabric : "", names)) {
            copy_message(err, errlen, e->message());
            return -1;
        }
        copy_message(err, errlen, service().load_note());
        return service().load_note().empty() ? 0 : 1;
    });
}

extern "C" int ai_select_debug(void) {
    auto *c = service().config();
    return c && c->debug ? 1 : 0;
}

extern "C" int ai_select_decide(const ai_job_t *job, const ai_node_t *nodes, uint32_t node_count,
                                ai_outcome_t *out, char *err, size_t errlen) {
    return guarded(err, errlen, [&] {
        auto view = view_of(nodes, node_count);
        if (job->expands_len) {
            std::vector<const char *> parent_env;
            if (job->expands_env)
                parent_env.assign(job->expands_env, job->expands_env + job->expands_env_size);
            fill_outcome(service().decide_expansion(job_of(job), job->expands_job_id,
                                                    std::span(job->expands, job->expands_len),
                                                    parent_env, view),
                         node_count, out);
        } else {
            fill_outcome(service().decide(job_of(job), view), node_count, out);
        }
        return 0;
    });
}

extern "C" int ai_select_note_stock(uint32_t job_id, const char *nodes, char *err,
                                    size_t errlen) {
    return guarded(err, errlen, [&] {
        service().note_stock(job_id, nodes ? nodes : "");
        return 0;
    });
}

extern "C" int ai_select_record(const char *state_dir, const ai_job_t *job, const char *nodes,
                                const char *gpus, char *summary, size_t summary_len, char *err,
                                size_t errlen) {
    return guarded(err, errlen, [&] {
        auto s = service().record(state_dir ? state_dir : "", job->job_id, nodes ? nodes : "",
                                  gpus ? gpus : "", env_of(job), {job->min_nodes, job->max_nodes});
        copy_message(summary, summary_len, s);
        return 0;
    });
}

extern "C" int ai_select_forget(uint32_t job_id, char *err, size_t errlen) {
    return guarded(err, errlen, [&] {
        service().forget(job_id);
        return 0;
    });
}

extern "C" int ai_select_beside_slurm_conf(const char *slurm_conf, int reads_yaml, char *conf,
                                           size_t conf_len, char *fabric, size_t fabric_len,
                                           char *err, size_t errlen) {
    return guarded(err, errlen, [&] {
        const auto files = slurm_ai::beside_slurm_conf(slurm_conf ? slurm_conf : "", reads_yaml);
        copy_message(conf, conf_len, files.ai_conf);
        copy_message(fabric, fabric_len, files.fabric);
        return 0;
    });
}

extern "C" int ai_select_save_pending(const char *state_dir, char *err, size_t errlen) {
    return guarded(err, errlen, [&] {
        if (auto e = service().save_pending(state_dir ? state_dir : "")) {
            copy_message(err, errlen, *e);
            return -1;
        }
        return 0;
    });
}

extern "C" int ai_select_note_failure(const char *node, const char *reason, int down, char *err,
                                      size_t errlen) {
    return guarded(err, errlen, [&] {
        const double now = service().clock().wall_s();
        return service().note_failure(node ? node : "", now, reason ? reason : "", down != 0) ? 1
                                                                                              : 0;
    });
}

extern "C" int ai_select_state_save(const char *dir, char *err, size_t errlen) {
    return guarded(err, errlen, [&] {
        if (auto e = service().save_state(dir ? dir : "")) {
            copy_message(err, errlen, *e);
            return -1;
        }
        return 0;
    });
}

extern "C" int ai_select_state_restore(const char *dir, char *err, size_t errlen) {
    return guarded(err, errlen, [&] {
        if (auto e = service().restore_state(dir ? dir : "")) {
            copy_message(err, errlen, e->message());
            return -1;
        }
        return 0;
    });
}

extern "C" int ai_select_decide_gang(const ai_job_t *job, const ai_gang_member_t *members,
                                     uint32_t member_count, const ai_node_t *nodes,
                                     uint32_t node_count, int64_t now, int place, ai_outcome_t *out,
                                     char *err, size_t errlen) {
    return guarded(err, errlen, [&] {
        std::vector<slurm_ai::SelectGangMember> gang(member_count);
        for (uint32_t i = 0; i < member_count; ++i) {
            const ai_gang_member_t &m = members[i];
            gang[i].job = job_of(&m.job);
            slurm_ai::GangMember &f = gang[i].facts;
            f.state = m.state == AI_MEMBER_RUNNING ? slurm_ai::MemberState::kRunning
                      : m.state == AI_MEMBER_ENDED ? slurm_ai::MemberState::kEnded
                                                   : slurm_ai::MemberState::kPending;
            f.held = m.held != 0;
            f.begin_time = m.begin_time;
            f.dependencies = m.dependencies;
            f.submit_time = m.submit_time;
            if (m.usable)
                gang[i].usable.assign(m.usable, m.usable + node_count);
        }
        fill_outcome(service().decide_gang(job_of(job), job->user_id, gang,
                                           view_of(nodes, node_count), now, place != 0),
                     node_count, out);
        return 0;
    });
}

extern "C" int ai_select_gang_reserved(uint32_t job_id, int64_t now, int *nodes,
                                       uint32_t capacity, uint32_t *count, char *err,
                                       size_t errlen) {
    *count = 0;
    return guarded(err, errlen, [&] {
        const std::vector<int> held = service().gang_reserved(job_id, now);
        for (std::size_t i = 0; i < held.size() && i < capacity; ++i)
            nodes[i] = held[i];
        *count = static_cast<uint32_t>(held.size());
        return 0;
    });
}

extern "C" int ai_select_gangs_save(const char *state_dir, int64_t now, char *err, size_t errlen) {
    return guarded(err, errlen, [&] {
        if (auto e = service().save_gangs(state_dir ? state_dir : "", now)) {
            copy_message(err, errlen, *e);
            return -1;
        }
        return 0;
    });
}

extern "C" int ai_select_job_traits(uint32_t job_id, const char *const *env, uint32_t env_size,
                                    ai_job_traits_t *out, char *err, size_t errlen) {
    *out = ai_job_traits_t{};
    return guarded(err, errlen, [&] {
        const auto &h = service().options(job_id, std::span(env, env ? env_size : 0)).hints;
        out->locality = !h.locality ? 0 : h.locality->hard ? 2 : 1;
        out->elastic = h.elastic ? 1 : 0;
        if (h.gang)
            copy_message(out->gang, sizeof out->gang, h.gang->name);
        return 0;
    });
}

extern "C" int ai_select_elastic_range(uint32_t job_id, const char *const *env, uint32_t env_size,
                                       uint32_t slurm_min, uint32_t slurm_max, uint32_t *min_nodes,
                                       uint32_t *max_nodes, char *err, size_t errlen) {
    return guarded(err, errlen, [&] {
        auto spec = service().elastic_start(job_id, std::span(env, env ? env_size : 0),
                                            {slurm_min, slurm_max});
        if (!spec)
            return 0;
        *min_nodes = spec->min_nodes;
        *max_nodes = spec->max_nodes;
        return 1;
    });
}

extern "C" uint32_t ai_select_expanded_job_of(const char *job_name) {
    return job_name ? slurm_ai::expanded_job_of(job_name) : 0;  // allocates nothing, never throws
}

extern "C" int ai_select_option_decodes(uint64_t *decodes, uint32_t *cached_jobs, char *err,
                                        size_t errlen) {
    return guarded(err, errlen, [&] {
        *decodes = service().option_decodes();
        *cached_jobs = static_cast<uint32_t>(service().cached_jobs());
        return 0;
    });
}
