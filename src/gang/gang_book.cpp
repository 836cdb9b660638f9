#include "slurm_ai/gang/gang_book.hpp"

namespace slurm_ai {

GangVerdict GangBook::judge(const std::string &key, std::uint32_t user_id, const GangSpec &spec,
                            std::span<const GangMember> members, std::int64_t now) {
    std::vector<GangMember> mine;
    for (const auto &m : members)
        if (m.spec.name == spec.name)
            mine.push_back(m);
    GangVerdict verdict = assess_gang(spec, mine, now);

    // Every job that was ever a live member: ai-elasticd acts on the ones that fail.
    GangRecord &rec = records_[key];
    std::set<std::uint32_t> ids = rec.members;
    for (const auto &m : mine)
        if (m.state != MemberState::kEnded)
            ids.insert(m.job_id);
    if (rec.state != verdict.state || rec.members != ids || rec.reason != verdict.reason)
        dirty_ = true;
    rec = GangRecord{key, user_id, spec, ids, verdict.state, verdict.reason, verdict.deadline, now};
    return verdict;
}

GangPlan *GangBook::plan(const std::string &key, std::int64_t now) {
    auto it = plans_.find(key);
    if (it == plans_.end())
        return nullptr;
    if (it->second.started.empty() && now - it->second.made_at > kPlanTtlS) {
        plans_.erase(it);
        return nullptr;
    }
    return &it->second;
}

void GangBook::set_plan(const std::string &key, GangPlan plan) {
    plans_[key] = std::move(plan);
}

void GangBook::drop_plan(const std::string &key) {
    plans_.erase(key);
}

void GangBook::drop_unstarted_plan(const std::string &key) {
    if (auto p = plans_.find(key); p != plans_.end() && p->second.started.empty())
        plans_.erase(p);
}

std::vector<int> GangBook::reserved_for_others(std::uint32_t job_id, std::int64_t now) {
    std::vector<int> out;
    for (auto it = plans_.begin(); it != plans_.end();) {
        const GangPlan &plan = it->second;
        if (plan.started.empty() && now - plan.made_at > kPlanTtlS) {
            it = plans_.erase(it);
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

void GangBook::member_started(std::uint32_t job_id) {
    for (auto it = plans_.begin(); it != plans_.end();) {
        if (it->second.nodes.count(job_id))
            it->second.started.insert(job_id);
        if (it->second.started.size() == it->second.nodes.size())
            it = plans_.erase(it);
        else
            ++it;
    }
}

void GangBook::member_ended(std::uint32_t job_id) {
    for (auto it = plans_.begin(); it != plans_.end();) {
        if (it->second.nodes.count(job_id) && !it->second.started.count(job_id))
            it = plans_.erase(it);
        else
            ++it;
    }
}

std::optional<std::string> GangBook::save(const std::string &state_dir, std::int64_t now) {
    for (auto it = records_.begin(); it != records_.end();) {
        if (now - it->second.updated > kForgetAfterS) {
            it = records_.erase(it);
            dirty_ = true;
        } else {
            ++it;
        }
    }
    if (!dirty_)
        return std::nullopt;
    std::vector<GangRecord> all;
    for (const auto &[key, g] : records_)
        all.push_back(g);
    try {
        write_gang_file(state_dir, all);
    } catch (const std::exception &e) {
        return e.what();
    }
    dirty_ = false;
    return std::nullopt;
}

}  // namespace slurm_ai
