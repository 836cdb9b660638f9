// SelectService's side of gangs: slurmctld's jobs become the gang library's members and
// parts (src/gang/ holds the rules, the joint placement, the book of verdicts and plans,
// and gangs.json); the member under test gets its outcome.
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

}  // namespace

std::vector<GangMember> SelectService::gang_members(std::span<const SelectGangMember> members) {
    std::vector<GangMember> out;
    for (const auto &m : members) {
        const auto &s = options(m.job.job_id, m.job.env).hints.gang;
        if (!s)
            continue;  // GangBook::judge leaves out those of another gang
        GangMember g = m.facts;
        g.job_id = m.job.job_id;
        g.spec = *s;
        out.push_back(std::move(g));
    }
    return out;
}

std::optional<std::vector<GangPart>> SelectService::pending_gang(
    const SelectJob &job, const GangSpec &spec, std::span<const SelectGangMember> members,
    std::span<const SelectNode> nodes, std::string &why) {
    const Loaded &l = *loaded_;
    std::vector<GangPart> parts;
    for (const auto &m : members) {
        if (m.facts.state != MemberState::kPending)
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
    gangs_.set_plan(key, std::move(plan));
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
    const GangVerdict verdict =
        gangs_.judge(key, user_id, *spec, gang_members(members), now);
    if (verdict.state == GangState::kWaiting || verdict.state == GangState::kTimedOut) {
        gangs_.drop_unstarted_plan(key);  // a member left before the gang started
        return gang_waits(verdict.reason);
    }
    out.reason = verdict.reason;
    if (!place || !loaded_)
        return out;  // kPassthrough: the barrier is open, cons_tres places
    const Loaded &l = *loaded_;
    // Under Policy=passthrough a gang is still placed as one: as Slurm's order would.
    const PlacementPolicy policy =
        l.policy->passthrough() ? *make_policy("slurm-default") : *l.policy;

    GangPlan *plan = gangs_.plan(key, now);
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
        if (const GangPlan *p = gangs_.plan(key, now))
            for (const auto &[other, planned] : p->nodes)
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

    if (plan) {
        auto mine = plan->nodes.find(job.job_id);
        if (mine != plan->nodes.end() && usable_in_view(mine->second))
            return finish(placed(job, *my_demand, to_placement(mine->second, *my_demand), state));
    }
    if (verdict.state == GangState::kStarted) {
        // Its planned nodes are gone, or the plan is (a slurmctld restart): it goes on its
        // own as soon as it fits, off the nodes planned for the others.
        if (plan)
            for (const auto &[other, planned] : plan->nodes)
                if (other != job.job_id && !plan->started.count(other))
                    for (int n : planned)
                        if (int h = l.host_of_node[n]; h >= 0)
                            state.usable[h] = 0;
        auto d = l.engine->place(*my_demand, state, policy);
        if (!d.placement)
            return gang_waits("gang " + spec->name + ": a late member waits: " + d.reason);
        out = placed(job, *my_demand, *d.placement, state);
        if (plan)
            plan->nodes[job.job_id] = out.nodes;
        return finish(std::move(out));
    }
    if (plan)
        gangs_.drop_plan(key);  // a fresh start: the old plan no longer fits the view
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
    return gangs_.reserved_for_others(job_id, now);
}

std::optional<std::string> SelectService::save_gangs(const std::string &state_dir,
                                                     std::int64_t now) {
    return gangs_.save(state_dir, now);
}

}  // namespace slurm_ai
