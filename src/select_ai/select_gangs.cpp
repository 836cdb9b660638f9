// SelectService's gangs: the barrier, the joint placement, the plan that holds the
// members' nodes until they have all started, and gangs.json for ai-elasticd.
#include <algorithm>

#include "select_service_loaded.hpp"
#include "slurm_ai/elastic/elastic_plan.hpp"
#include "slurm_ai/select_ai/select_service.hpp"

namespace slurm_ai {
namespace {

// A gang member that waits, and why (the job's comment in squeue says so too).
SelectOutcome gang_waits(std::string reason) {
    SelectOutcome out;
    out.kind = SelectOutcome::Kind::kWait;
    out.comment = "ai: " + reason;
    out.reason = std::move(reason);
    return out;
}

GangState state_of(GangVerdict::Kind k) {
    switch (k) {
        case GangVerdict::Kind::kWait:
            break;
        case GangVerdict::Kind::kTimedOut:
            return GangState::kTimedOut;
        case GangVerdict::Kind::kStart:
            return GangState::kStarting;
        case GangVerdict::Kind::kLate:
            return GangState::kStarted;
    }
    return GangState::kWaiting;
}

}  // namespace

GangVerdict SelectService::judge_gang(const std::string &key, std::uint32_t user_id,
                                      const GangSpec &spec,
                                      std::span<const SelectGangMember> members,
                                      std::int64_t now) {
    std::vector<GangMember> gm;
    for (const auto &m : members) {
        const auto &s = options(m.job.job_id, m.job.env).hints.gang;
        if (!s || s->name != spec.name)
            continue;
        gm.push_back({m.job.job_id, m.state, m.eligible, m.submit_time, *s});
    }
    auto verdict = assess_gang(spec, gm, now);

    // Every job that was ever a live member: ai-elasticd acts on the ones that fail.
    GangRecord &st = gangs_[key];
    std::set<std::uint32_t> ids = st.members;
    for (const auto &m : gm)
        if (m.state != MemberState::kEnded)
            ids.insert(m.job_id);
    const GangState gang_state = state_of(verdict.kind);
    if (st.state != gang_state || st.members != ids || st.reason != verdict.reason)
        gangs_dirty_ = true;
    st = GangRecord{key, user_id, spec, ids, gang_state, verdict.reason, verdict.deadline, now};
    return verdict;
}

std::optional<std::vector<GangPart>> SelectService::pending_gang(
    const SelectJob &job, const GangSpec &spec, std::span<const SelectGangMember> members,
    std::span<const SelectNode> nodes, std::string &why) {
    const Loaded &l = *loaded_;
    std::vector<GangPart> parts;
    for (const auto &m : members) {
        if (m.state != MemberState::kPending)
            continue;
        const auto &s = options(m.job.job_id, m.job.env).hints.gang;
        if (!s || s->name != spec.name)
            continue;
        auto d = demand_of(m.job, options(m.job.job_id, m.job.env), &why);
        if (!d) {
            why = "member " + std::to_string(m.job.job_id) + ": " + why;
            return std::nullopt;
        }
        GangPart part{m.job.job_id, *d, std::vector<std::uint8_t>(l.graph.host_count(), 0)};
        const bool self = m.job.job_id == job.job_id;
        for (std::size_t n = 0; n < l.host_of_node.size(); ++n) {
            int h = l.host_of_node[n];
            bool ok =
                self ? n < nodes.size() && nodes[n].usable : n < m.usable.size() && m.usable[n];
            if (h >= 0 && ok)
                part.usable[h] = 1;
        }
        parts.push_back(std::move(part));
    }
    return parts;
}

std::optional<SelectOutcome> SelectService::plan_gang(
    const SelectJob &job, const GangSpec &spec, const std::string &key,
    const std::vector<GangPart> &parts, const ClusterState &state, const PlacementPolicy &policy,
    const JobDemand &demand, std::int64_t now) {
    const Loaded &l = *loaded_;
    std::optional<SelectOutcome> out;
    ClusterState base = state;
    for (int h = 0; h < l.graph.host_count(); ++h)
        base.usable[h] = std::any_of(parts.begin(), parts.end(),
                                     [&](const GangPart &p) { return p.usable[h] != 0; });
    auto joint = place_gang(*l.engine, parts, base, policy);
    if (joint.parts.empty()) {
        return gang_waits("gang " + spec.name + ": all " + std::to_string(spec.size) +
                          " members pending, but they do not fit together now: " + joint.reason);
    }
    GangPlan plan;
    plan.made_at = now;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        auto &slurm_nodes = plan.nodes[parts[i].job_id];
        for (int h : joint.parts[i].hosts)
            slurm_nodes.push_back(l.node_of_host[h]);
        if (parts[i].job_id == job.job_id) {
            joint.parts[i].policy = policy.name() + (joint.joint ? "-gang" : "-gang-seq");
            out = placed(job, demand, joint.parts[i], state);
        }
    }
    gang_plans_[key] = std::move(plan);
    return out;
}

SelectOutcome SelectService::decide_gang(const SelectJob &job, std::uint32_t user_id,
                                         std::span<const SelectGangMember> members,
                                         std::span<const SelectNode> nodes, std::int64_t now,
                                         bool place) {
    SelectOutcome out;
    std::optional<GangSpec> spec = options(job.job_id, job.env).hints.gang;
    if (!spec) {
        out.reason = "no valid --ai-gang";
        return out;
    }
    const std::string key = gang_key(user_id, spec->name);
    const GangVerdict verdict = judge_gang(key, user_id, *spec, members, now);

    if (verdict.kind == GangVerdict::Kind::kWait || verdict.kind == GangVerdict::Kind::kTimedOut) {
        // A member left before the gang started (cancelled while pending): its plan would
        // only hold nodes until it expires.
        if (auto p = gang_plans_.find(key); p != gang_plans_.end() && p->second.started.empty())
            gang_plans_.erase(p);
        return gang_waits(verdict.reason);
    }
    out.reason = verdict.reason;
    if (!place || !loaded_)
        return out;  // kPassthrough: the barrier is open, cons_tres places
    const Loaded &l = *loaded_;
    // Under Policy=passthrough a gang is still placed as one: as Slurm's order would.
    const PlacementPolicy policy =
        l.policy->passthrough() ? *make_policy("slurm-default") : *l.policy;

    // A plan nobody started on within its time no longer stands.
    auto it = gang_plans_.find(key);
    if (it != gang_plans_.end() && it->second.started.empty() &&
        now - it->second.made_at > kGangPlanTtlS) {
        gang_plans_.erase(it);
        it = gang_plans_.end();
    }
    int candidates = 0;
    ClusterState state = free_view(nodes, &candidates);
    auto usable_in_view = [&](const std::vector<int> &slurm_nodes) {
        return std::all_of(slurm_nodes.begin(), slurm_nodes.end(), [&](int n) {
            return n >= 0 && n < static_cast<int>(nodes.size()) && nodes[n].usable;
        });
    };
    auto to_placement = [&](const std::vector<int> &slurm_nodes, const JobDemand &d) {
        std::vector<int> hosts;
        for (int n : slurm_nodes)
            hosts.push_back(l.host_of_node[n]);
        Placement p = job_placement(l.graph, d, hosts, &state);
        l.engine->score(d, &state, p);
        p.policy = policy.name() + "-gang";
        return p;
    };
    // A placed member: widening stays off the nodes planned for the other members.
    auto finish = [&](SelectOutcome placed_out) {
        std::set<int> others;
        if (auto p = gang_plans_.find(key); p != gang_plans_.end())
            for (const auto &[other, planned] : p->second.nodes)
                if (other != job.job_id)
                    others.insert(planned.begin(), planned.end());
        std::erase_if(placed_out.widen, [&](int n) { return others.count(n) > 0; });
        placed_out.reason = "gang " + spec->name + ": " + placed_out.reason;
        return placed_out;
    };
    std::string why;
    auto my_demand = demand_of(job, options(job.job_id, job.env), &why);
    if (!my_demand) {
        out.reason = "gang " + spec->name + ": " + why;
        return out;
    }

    if (it != gang_plans_.end()) {
        auto mine = it->second.nodes.find(job.job_id);
        if (mine != it->second.nodes.end() && usable_in_view(mine->second))
            return finish(placed(job, *my_demand, to_placement(mine->second, *my_demand), state));
    }
    if (verdict.kind == GangVerdict::Kind::kLate) {
        // Its planned nodes are gone, or the plan is (a slurmctld restart): it goes on its
        // own as soon as it fits, off the nodes planned for the others.
        if (it != gang_plans_.end())
            for (const auto &[other, planned] : it->second.nodes)
                if (other != job.job_id && !it->second.started.count(other))
                    for (int n : planned)
                        if (int h = l.host_of_node[n]; h >= 0)
                            state.usable[h] = 0;
        auto d = l.engine->place(*my_demand, state, policy);
        if (!d.placement)
            return gang_waits("gang " + spec->name + ": a late member waits: " + d.reason);
        out = placed(job, *my_demand, *d.placement, state);
        if (it != gang_plans_.end())
            it->second.nodes[job.job_id] = out.nodes;
        return finish(std::move(out));
    }
    if (it != gang_plans_.end())
        gang_plans_.erase(it);  // a fresh start: the old plan no longer fits the view
    {
        // Every pending member at once: the engine sees the whole gang.
        auto pending = pending_gang(job, *spec, members, nodes, why);
        if (!pending)
            return gang_waits("gang " + spec->name + ": " + why);
        auto planned = plan_gang(job, *spec, key, *pending, state, policy, *my_demand, now);
        if (planned && planned->kind == SelectOutcome::Kind::kWait)
            return *planned;
        if (planned)
            out = std::move(*planned);
    }
    return finish(std::move(out));
}

std::vector<int> SelectService::gang_reserved(std::uint32_t job_id, std::int64_t now) {
    std::vector<int> out;
    for (auto it = gang_plans_.begin(); it != gang_plans_.end();) {
        const GangPlan &plan = it->second;
        if (plan.started.empty() && now - plan.made_at > kGangPlanTtlS) {
            it = gang_plans_.erase(it);
            continue;
        }
        if (!plan.nodes.count(job_id))
            for (const auto &[member, planned] : plan.nodes)
                if (!plan.started.count(member))
                    out.insert(out.end(), planned.begin(), planned.end());
        ++it;
    }
    return out;
}

std::optional<std::string> SelectService::save_gangs(const std::string &state_dir,
                                                     std::int64_t now) {
    // Gangs nobody has looked at for a day are history.
    for (auto it = gangs_.begin(); it != gangs_.end();) {
        if (now - it->second.updated > 86400) {
            it = gangs_.erase(it);
            gangs_dirty_ = true;
        } else {
            ++it;
        }
    }
    if (!gangs_dirty_)
        return std::nullopt;
    std::vector<GangRecord> all;
    for (const auto &[key, g] : gangs_)
        all.push_back(g);
    try {
        write_gang_file(state_dir, all);
    } catch (const std::exception &e) {
        return e.what();
    }
    gangs_dirty_ = false;
    return std::nullopt;
}

}  // namespace slurm_ai
