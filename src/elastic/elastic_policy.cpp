#include "slurm_ai/elastic/elastic_policy.hpp"

#include <algorithm>
#include <set>

namespace slurm_ai {

std::vector<ElasticAction> plan_elastic(const ElasticPolicyInput &in) {
    std::vector<ElasticAction> out;
    std::vector<ElasticJob> jobs = in.elastic;
    std::map<std::string, std::uint32_t> idle = in.idle;
    std::set<std::uint32_t> acted;

    std::vector<WaitingJob> waiting = in.waiting;
    std::stable_sort(waiting.begin(), waiting.end(), [](const WaitingJob &a, const WaitingJob &b) {
        return a.priority > b.priority;
    });
    for (const auto &w : waiting) {
        std::uint32_t &free = idle[w.partition];
        if (free >= w.nodes) {
            free -= w.nodes;  // it starts on idle nodes: they are spoken for
            continue;
        }
        std::vector<ElasticJob *> donors;
        std::uint32_t surplus = 0;
        for (auto &j : jobs)
            if (j.partition == w.partition && j.priority < w.priority && !j.resizing &&
                !acted.count(j.job_id) && j.nodes > j.spec.min_nodes) {
                donors.push_back(&j);
                surplus += j.nodes - j.spec.min_nodes;
            }
        std::uint32_t need = w.nodes - free;
        if (surplus < need)
            continue;  // shrinking would not let it start: nobody gives anything
        std::stable_sort(
            donors.begin(), donors.end(),
            [](const ElasticJob *a, const ElasticJob *b) { return a->priority < b->priority; });
        for (auto *d : donors) {
            if (need == 0)
                break;
            std::uint32_t give = std::min(need, d->nodes - d->spec.min_nodes);
            d->nodes -= give;
            need -= give;
            acted.insert(d->job_id);
            out.push_back({ElasticAction::Kind::kShrink, d->job_id, give, w.job_id,
                           "job " + std::to_string(w.job_id) + " (priority " +
                               std::to_string(w.priority) + ") needs " + std::to_string(w.nodes) +
                               " node(s)"});
        }
        free = 0;
    }

    std::stable_sort(jobs.begin(), jobs.end(), [](const ElasticJob &a, const ElasticJob &b) {
        return a.priority > b.priority;
    });
    for (auto &j : jobs) {
        if (acted.count(j.job_id) || j.resizing || j.nodes >= j.spec.max_nodes)
            continue;
        if (j.last_resize > 0 && in.now - j.last_resize < in.grow_cooldown_s)
            continue;
        bool outranked = std::any_of(waiting.begin(), waiting.end(), [&](const WaitingJob &w) {
            return w.partition == j.partition && w.priority > j.priority;
        });
        std::uint32_t &free = idle[j.partition];
        if (outranked || free == 0)
            continue;
        std::uint32_t add = std::min(free, j.spec.max_nodes - j.nodes);
        free -= add;
        acted.insert(j.job_id);
        out.push_back({ElasticAction::Kind::kGrow, j.job_id, add, 0,
                       std::to_string(add) + " idle node(s), nothing of higher priority pending"});
    }
    return out;
}

}  // namespace slurm_ai
