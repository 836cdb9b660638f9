#include "slurm_ai/gang/gang.hpp"

#include <algorithm>

#include "slurm_ai/common/enum_names.hpp"

namespace slurm_ai {
namespace {

// gangs.json's words for each state, in the enum's order.
constexpr std::string_view kGangStateNames[] = {"waiting", "timed_out", "starting", "started"};

std::string join_ids(const std::vector<std::uint32_t> &ids) {
    std::string out;
    for (auto id : ids)
        out += (out.empty() ? "" : ",") + std::to_string(id);
    return out;
}

}  // namespace

std::string_view to_string(GangState s) {
    return enum_name(s, kGangStateNames);
}

std::optional<GangState> gang_state_from(std::string_view text) {
    return enum_from_name<GangState>(text, kGangStateNames);
}

std::string gang_state_list() {
    return enum_names_list(kGangStateNames);
}

bool is_eligible(const GangMember &m, std::int64_t now) {
    return m.state == MemberState::kPending && !m.held &&
           (m.begin_time == 0 || m.begin_time <= now) && m.dependencies == 0;
}

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
        else if (is_eligible(m, now))
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
        v.state = GangState::kStarted;
        v.reason = name + ": " + std::to_string(running.size()) + " of " +
                   std::to_string(spec.size) + " members run; the rest start next";
        return v;
    }
    if (v.deadline > 0 && now >= v.deadline) {
        v.state = GangState::kTimedOut;
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
    v.state = GangState::kStarting;
    v.reason = name + ": all " + std::to_string(spec.size) + " members pending";
    return v;
}

bool gang_member_failed(const GangSpec &spec, std::string_view end_state) {
    return !spec.keep_on_failure && end_state != "COMPLETED";
}

GangFollowUp follow_up_gang(const GangSpec &spec, GangState state, std::int64_t deadline,
                            std::span<const GangJob> members, std::int64_t now,
                            bool released_before, const std::set<std::uint32_t> &handled) {
    GangFollowUp out;
    std::vector<std::uint32_t> live, pending;
    bool any_running = false;
    for (const auto &m : members) {
        if (m.state == MemberState::kEnded)
            continue;
        live.push_back(m.job_id);
        if (m.state == MemberState::kPending)
            pending.push_back(m.job_id);
        any_running = any_running || m.state == MemberState::kRunning;
    }
    if (state == GangState::kWaiting || state == GangState::kTimedOut)
        out.waiting = live;
    // TIMEOUT passed before the gang could start: its pending members go.
    if (deadline > 0 && now >= deadline && !any_running && !live.empty() && !released_before) {
        out.actions.push_back({pending, "ai: gang " + spec.name + " timed out after " +
                                            std::to_string(spec.timeout_s) + " s with " +
                                            std::to_string(live.size()) + " of " +
                                            std::to_string(spec.size) +
                                            " members; released by ai-elasticd"});
        out.released = true;
    }
    // A member that ran and failed ends the others (onfail=kill), once.
    for (const auto &m : members) {
        if (m.state != MemberState::kEnded || handled.count(m.job_id) || !m.started ||
            !gang_member_failed(spec, m.slurm_state))
            continue;
        out.failures_seen.push_back(m.job_id);
        if (live.empty())
            continue;
        out.actions.push_back({live, "ai: gang " + spec.name + ": member " +
                                         std::to_string(m.job_id) + " ended " + m.slurm_state +
                                         "; ended with it (onfail=kill)"});
        live.clear();
    }
    return out;
}

}  // namespace slurm_ai
