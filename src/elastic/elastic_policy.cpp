#include "slurm_ai/elastic/elastic_policy.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

namespace slurm_ai {
namespace {

// The waiting jobs, highest priority first (stable among equals).
std::vector<WaitingJob> by_priority(std::vector<WaitingJob> waiting) {
    std::stable_sort(waiting.begin(), waiting.end(), [](const WaitingJob &a, const WaitingJob &b) {
        return a.priority > b.priority;
    });
    return waiting;
}

std::vector<ElasticAction> plan_priority(const ElasticPolicyInput &in) {
    std::vector<ElasticAction> out;
    std::vector<ElasticJob> jobs = in.elastic;
    std::map<std::string, std::uint32_t> idle = in.idle;
    std::set<std::uint32_t> acted;

    const std::vector<WaitingJob> waiting = by_priority(in.waiting);
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

bool has_curve(const ElasticJob &j) {
    return j.goodput.size() > j.spec.max_nodes && j.gpus_per_node > 0;
}

std::string gpu_share(double v) {
    return fmt::format("{:.2f}", v);
}

std::vector<ElasticAction> plan_goodput(const ElasticPolicyInput &in) {
    std::vector<ElasticAction> out;
    std::vector<ElasticJob> jobs = in.elastic;
    std::map<std::string, std::uint32_t> idle = in.idle;
    std::map<std::uint32_t, std::size_t> acted;  // job -> its action in out

    const std::vector<WaitingJob> waiting = by_priority(in.waiting);
    // 1 and 2: each waiting job takes idle nodes, then what elastic jobs hold above MIN.
    for (const auto &w : waiting) {
        std::uint32_t &free = idle[w.partition];
        if (free >= w.nodes) {
            free -= w.nodes;
            continue;
        }
        std::vector<ElasticJob *> donors;
        std::uint32_t surplus = 0;
        for (auto &j : jobs)
            if (j.partition == w.partition && !j.resizing && !acted.count(j.job_id) &&
                j.nodes > j.spec.min_nodes) {
                donors.push_back(&j);
                surplus += j.nodes - j.spec.min_nodes;
            }
        std::uint32_t need = w.nodes - free;
        if (surplus < need)
            continue;  // it would not start: nobody gives anything, and the idle nodes stay
        std::map<std::uint32_t, std::uint32_t> given;
        for (; need > 0; --need) {
            // The donor losing least per GPU; jobs without a curve after those with one,
            // the lowest priority first among them.
            ElasticJob *best = nullptr;
            for (auto *d : donors) {
                if (d->nodes <= d->spec.min_nodes)
                    continue;
                if (!best) {
                    best = d;
                    continue;
                }
                auto a = loss_per_gpu(*d), b = loss_per_gpu(*best);
                if (a && (!b || *a < *b - 1e-12 || (std::abs(*a - *b) <= 1e-12 &&
                                                    d->priority < best->priority)))
                    best = d;
                else if (!a && !b && d->priority < best->priority)
                    best = d;
            }
            --best->nodes;
            ++given[best->job_id];
        }
        for (const auto &[id, n] : given) {
            acted[id] = out.size();
            out.push_back({ElasticAction::Kind::kShrink, id, n, w.job_id,
                           fmt::format("job {} waits for {} node(s); these cost this job the "
                                       "least goodput",
                                       w.job_id, w.nodes)});
        }
        free = 0;
    }

    // 3. Growth, one node at a time, to the largest gain per GPU.
    std::map<std::uint32_t, std::uint32_t> grown;
    for (;;) {
        ElasticJob *best = nullptr;
        double best_gain = 0;
        for (auto &j : jobs) {
            if (j.resizing || !has_curve(j) || j.nodes >= j.spec.max_nodes ||
                idle[j.partition] == 0)
                continue;
            auto a = acted.find(j.job_id);
            if (a != acted.end() && out[a->second].kind == ElasticAction::Kind::kShrink)
                continue;
            if (!grown.count(j.job_id) && j.last_resize > 0 &&
                in.now - j.last_resize < in.grow_cooldown_s)
                continue;
            auto gain = gain_per_gpu(j);
            if (!gain || *gain < in.min_gain)
                continue;
            if (!best || *gain > best_gain + 1e-12 ||
                (std::abs(*gain - best_gain) <= 1e-12 && j.priority > best->priority)) {
                best = &j;
                best_gain = *gain;
            }
        }
        if (!best)
            break;
        --idle[best->partition];
        ++best->nodes;
        ++grown[best->job_id];
    }
    for (const auto &j : jobs)
        if (auto g = grown.find(j.job_id); g != grown.end()) {
            const ElasticJob &before = *std::find_if(
                in.elastic.begin(), in.elastic.end(),
                [&](const ElasticJob &e) { return e.job_id == j.job_id; });
            out.push_back(
                {ElasticAction::Kind::kGrow, j.job_id, g->second, 0,
                 fmt::format("{} idle node(s) no waiting job needs; goodput {} -> {} GPUs' worth",
                             g->second, gpu_share(before.goodput[before.nodes]),
                             gpu_share(j.goodput[j.nodes]))});
        }
    return out;
}

}  // namespace

std::optional<ElasticRule> elastic_rule(std::string_view name) {
    if (name == "priority")
        return ElasticRule::kPriority;
    if (name == "goodput")
        return ElasticRule::kGoodput;
    return std::nullopt;
}

std::string_view to_string(ElasticRule rule) {
    return rule == ElasticRule::kGoodput ? "goodput" : "priority";
}

std::optional<double> gain_per_gpu(const ElasticJob &j) {
    if (!has_curve(j) || j.nodes >= j.spec.max_nodes)
        return std::nullopt;
    return (j.goodput[j.nodes + 1] - j.goodput[j.nodes]) / j.gpus_per_node;
}

std::uint32_t goodput_size(ElasticJob j, double min_gain) {
    j.nodes = std::max<std::uint32_t>(j.spec.min_nodes, 1);
    for (auto gain = gain_per_gpu(j); gain && *gain >= min_gain; gain = gain_per_gpu(j))
        ++j.nodes;
    return j.nodes;
}

std::optional<double> loss_per_gpu(const ElasticJob &j) {
    if (!has_curve(j) || j.nodes <= j.spec.min_nodes || j.nodes == 0 || j.nodes > j.spec.max_nodes)
        return std::nullopt;
    return (j.goodput[j.nodes] - j.goodput[j.nodes - 1]) / j.gpus_per_node;
}

std::vector<ElasticAction> plan_elastic(const ElasticPolicyInput &in, ElasticRule rule) {
    auto out = rule == ElasticRule::kGoodput ? plan_goodput(in) : plan_priority(in);
    if (!in.can_grow)  // the shrinks do not depend on the grows planned after them
        std::erase_if(out,
                      [](const ElasticAction &a) { return a.kind == ElasticAction::Kind::kGrow; });
    return out;
}

}  // namespace slurm_ai
