#include "slurm_ai/elastic/gang.hpp"

#include <algorithm>
#include <numeric>

namespace slurm_ai {
namespace {

std::string join_ids(const std::vector<std::uint32_t> &ids) {
    std::string out;
    for (auto id : ids)
        out += (out.empty() ? "" : ",") + std::to_string(id);
    return out;
}

GangPlacement sequential(const PlacementEngine &engine, std::span<const GangPart> parts,
                         const ClusterState &base, const PlacementPolicy &policy) {
    GangPlacement out;
    std::vector<std::size_t> order(parts.size());
    std::iota(order.begin(), order.end(), 0);
    // Largest first: the hardest part to fit chooses before the free view fragments.
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return parts[a].demand.ranks() > parts[b].demand.ranks();
    });
    ClusterState free = base;
    std::vector<Placement> placed(parts.size());
    for (std::size_t i : order) {
        ClusterState view = free;
        for (std::size_t h = 0; h < view.usable.size(); ++h)
            view.usable[h] = view.usable[h] && h < parts[i].usable.size() && parts[i].usable[h];
        auto d = engine.place(parts[i].demand, view, policy);
        if (!d.placement) {
            out.reason = "member " + std::to_string(parts[i].job_id) +
                         " does not fit beside the others: " + d.reason;
            return out;
        }
        free.allocate(*d.placement);
        placed[i] = std::move(*d.placement);
    }
    out.parts = std::move(placed);
    return out;
}

}  // namespace

std::string gang_key(std::uint32_t user_id, std::string_view name) {
    return std::to_string(user_id) + ":" + std::string(name);
}

GangVerdict assess_gang(const GangSpec &spec, std::span<const GangMember> members,
                        std::int64_t now) {
    GangVerdict v;
    std::vector<std::uint32_t> pending, running, held, disagree;
    std::int64_t first = 0;
    for (const auto &m : members) {
        if (m.state == MemberState::kEnded)
            continue;
        if (m.spec.size != spec.size) {
            disagree.push_back(m.job_id);
            continue;
        }
        if (first == 0 || (m.submit_time > 0 && m.submit_time < first))
            first = m.submit_time;
        if (m.state == MemberState::kRunning)
            running.push_back(m.job_id);
        else if (m.eligible)
            pending.push_back(m.job_id);
        else
            held.push_back(m.job_id);
    }
    const std::string name = "gang " + spec.name;
    if (!disagree.empty()) {
        v.reason = name + ": jobs " + join_ids(disagree) + " give another SIZE than " +
                   std::to_string(spec.size);
        return v;
    }
    if (spec.timeout_s > 0 && first > 0)
        v.deadline = first + spec.timeout_s;
    const std::size_t active = pending.size() + running.size() + held.size();
    if (!running.empty()) {
        // A gang that has started finishes starting; a timeout no longer applies.
        v.kind = GangVerdict::Kind::kLate;
        v.reason = name + ": " + std::to_string(running.size()) + " of " +
                   std::to_string(spec.size) + " members run; the rest start next";
        return v;
    }
    if (v.deadline > 0 && now >= v.deadline) {
        v.kind = GangVerdict::Kind::kTimedOut;
        v.reason = name + " timed out after " + std::to_string(spec.timeout_s) + " s with " +
                   std::to_string(active) + " of " + std::to_string(spec.size) +
                   " members; the pending ones are released";
        return v;
    }
    if (active > spec.size) {
        v.reason = name + ": " + std::to_string(active) + " jobs claim it, SIZE is " +
                   std::to_string(spec.size);
        return v;
    }
    if (pending.size() < spec.size) {
        v.reason = name + " waits: " + std::to_string(active) + " of " + std::to_string(spec.size) +
                   " members submitted";
        if (!held.empty())
            v.reason +=
                ", " + std::to_string(held.size()) + " not eligible (" + join_ids(held) + ")";
        if (v.deadline > 0)
            v.reason +=
                "; released " + std::to_string(spec.timeout_s) + " s after the first submission";
        return v;
    }
    v.kind = GangVerdict::Kind::kStart;
    v.reason = name + ": all " + std::to_string(spec.size) + " members pending";
    return v;
}

bool gang_member_failed(const GangSpec &spec, std::string_view end_state) {
    return !spec.keep_on_failure && end_state != "COMPLETED";
}

GangPlacement place_gang(const PlacementEngine &engine, std::span<const GangPart> parts,
                         const ClusterState &base, const PlacementPolicy &policy) {
    GangPlacement out;
    if (parts.empty()) {
        out.reason = "no members to place";
        return out;
    }
    const auto shape = parts.front().demand.gpus_per_host();
    const bool uniform = std::all_of(parts.begin(), parts.end(), [&](const GangPart &p) {
        return p.demand.gpus_per_host() == shape && p.usable == parts.front().usable &&
               !p.demand.dag;
    });
    if (uniform && parts.size() > 1) {
        // One combined job: every part's hosts, talking as the first part does.
        JobDemand all = parts.front().demand;
        all.min_nodes = all.max_nodes = 0;
        all.total_gpus = 0;
        for (const auto &p : parts) {
            all.min_nodes += p.demand.min_nodes;
            all.total_gpus += p.demand.total_gpus;
        }
        all.max_nodes = all.min_nodes;
        all.gpus_per_node = shape;
        ClusterState view = base;
        for (std::size_t h = 0; h < view.usable.size(); ++h)
            view.usable[h] =
                view.usable[h] && h < parts.front().usable.size() && parts.front().usable[h];
        auto d = engine.place(all, view, policy);
        if (d.placement && d.placement->hosts.size() == all.min_nodes) {
            std::size_t next = 0;
            for (const auto &part : parts) {
                Placement p;
                p.policy = d.placement->policy;
                for (std::uint32_t i = 0; i < part.demand.min_nodes; ++i, ++next) {
                    p.hosts.push_back(d.placement->hosts[next]);
                    p.gpus.push_back(d.placement->gpus[next]);
                }
                engine.score(part.demand, &base, p);
                out.parts.push_back(std::move(p));
            }
            out.joint = true;
            return out;
        }
    }
    return sequential(engine, parts, base, policy);
}

}  // namespace slurm_ai
