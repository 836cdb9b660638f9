#include "metrics.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <cmath>

namespace slurm_ai::sim {

double percentile(std::vector<double> v, double q) {
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size())));
    return v[std::clamp<std::size_t>(rank, 1, v.size()) - 1];
}

long peak_rss_mib() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss / 1024;
}

namespace {

double mean(const std::vector<double> &v) {
    double s = 0;
    for (double x : v)
        s += x;
    return v.empty() ? 0 : s / static_cast<double>(v.size());
}

}  // namespace

Summary summarize(const RunResult &run, int max_gpus_per_host) {
    Summary s;
    s.policy = run.policy;
    s.jobs = static_cast<int>(run.jobs.size());
    std::vector<double> jct, wait, share, eff, slow, loaded;
    double last_end = run.window_start_s;
    int split = 0;
    for (const auto &j : run.jobs) {
        if (j.start_s >= 0) {
            wait.push_back((j.start_s - j.submit_s) / 3600);
            ++s.sources[static_cast<std::size_t>(j.step.source)];
        }
        if (j.end_s >= 0) {
            ++s.finished;
            jct.push_back((j.end_s - j.submit_s) / 3600);
            last_end = std::max(last_end, j.end_s);
        }
        if (j.gpus > 1 && j.start_s >= 0) {
            share.push_back(j.step.comm_share());
            eff.push_back(j.step.efficiency());
            slow.push_back(j.step.slowdown());
            loaded.push_back(j.contention);
            const int fewest = (j.gpus + max_gpus_per_host - 1) / std::max(max_gpus_per_host, 1);
            split += j.hosts > fewest;
        }
    }
    s.mean_jct_h = mean(jct);
    s.p99_jct_h = percentile(jct, 0.99);
    s.mean_wait_h = mean(wait);
    s.p99_wait_h = percentile(wait, 0.99);
    s.multi_gpu_jobs = static_cast<int>(share.size());
    s.comm_share = mean(share);
    s.efficiency = mean(eff);
    s.slowdown = mean(slow);
    s.contention = loaded.empty() ? 1 : mean(loaded);
    for (const auto &j : run.jobs)
        s.elastic_jobs += j.elastic;
    s.grows = run.grows;
    s.shrinks = run.shrinks;
    s.split_share = share.empty() ? 0 : static_cast<double>(split) / share.size();
    const double window = run.window_end_s - run.window_start_s;
    s.utilisation = window > 0 ? run.busy_gpu_s_in_window / (window * run.cluster_gpus) : 0;
    s.useful = window > 0 ? run.useful_gpu_s_in_window / (window * run.cluster_gpus) : 0;
    double frag = 0;
    int waiting = 0;
    for (const auto &x : run.samples)
        if (x.pending_jobs > 0) {
            frag += static_cast<double>(x.fragmented_gpus) / run.cluster_gpus;
            ++waiting;
        }
    s.fragmentation = waiting ? frag / waiting : 0;
    s.makespan_h = (last_end - run.window_start_s) / 3600;
    for (const auto &f : run.failures) {
        ++s.failures;
        s.jobs_stopped += f.jobs_stopped;
        s.failures_stopping_jobs += f.jobs_stopped > 0;
        s.failures_stopping_several += f.jobs_stopped > 1;
        for (int r = 0; r < kRegimes; ++r)
            s.lost_gpu_h[static_cast<std::size_t>(r)] +=
                f.lost_gpu_s[static_cast<std::size_t>(r)] / 3600;
    }
    return s;
}

std::optional<double> win_rate(int wins, int losses) {
    if (wins + losses == 0)
        return std::nullopt;
    return static_cast<double>(wins) / (wins + losses);
}

std::pair<double, double> PairedTally::interval() const {
    const double n = comparisons();
    if (n == 0)
        return {0, 1};
    const double z = 1.96, p = *win_rate();
    const double centre = (p + z * z / (2 * n)) / (1 + z * z / n);
    const double half = z * std::sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n);
    return {std::max(0.0, centre - half), std::min(1.0, centre + half)};
}

void PairedTally::add(const PairedTally &o) {
    decisions += o.decisions;
    differ += o.differ;
    wins += o.wins;
    losses += o.losses;
    ties += o.ties;
    lost_aware_gpu_h += o.lost_aware_gpu_h;
    lost_blind_gpu_h += o.lost_blind_gpu_h;
}

std::array<PairedTally, kRegimes> tally_paired(const std::vector<PairedDecision> &decisions) {
    std::array<PairedTally, kRegimes> out{};
    for (const auto &d : decisions) {
        PairedTally &t = out[static_cast<std::size_t>(d.regime)];
        ++t.decisions;
        t.differ += d.differ();
        t.lost_aware_gpu_h += d.lost_aware_gpu_s / 3600;
        t.lost_blind_gpu_h += d.lost_blind_gpu_s / 3600;
        if (d.lost_aware_gpu_s < d.lost_blind_gpu_s - 1e-9)
            ++t.wins;
        else if (d.lost_aware_gpu_s > d.lost_blind_gpu_s + 1e-9)
            ++t.losses;
        else
            ++t.ties;
    }
    return out;
}

Summary mean_of(const std::vector<Summary> &runs) {
    Summary m;
    if (runs.empty())
        return m;
    m.policy = runs.front().policy;
    m.contention = 0;
    const double n = static_cast<double>(runs.size());
    for (const Summary &x : runs) {
        m.jobs += x.jobs;
        m.finished += x.finished;
        m.mean_jct_h += x.mean_jct_h / n;
        m.p99_jct_h += x.p99_jct_h / n;
        m.mean_wait_h += x.mean_wait_h / n;
        m.p99_wait_h += x.p99_wait_h / n;
        m.multi_gpu_jobs += x.multi_gpu_jobs;
        m.comm_share += x.comm_share / n;
        m.efficiency += x.efficiency / n;
        m.slowdown += x.slowdown / n;
        m.split_share += x.split_share / n;
        m.utilisation += x.utilisation / n;
        m.useful += x.useful / n;
        m.fragmentation += x.fragmentation / n;
        m.makespan_h += x.makespan_h / n;
        m.contention += x.contention / n;
        for (std::size_t k = 0; k < 3; ++k)
            m.sources[k] += x.sources[k];
        m.elastic_jobs += x.elastic_jobs;
        m.grows += x.grows;
        m.shrinks += x.shrinks;
        m.failures += x.failures;
        m.failures_stopping_jobs += x.failures_stopping_jobs;
        m.failures_stopping_several += x.failures_stopping_several;
        m.jobs_stopped += x.jobs_stopped;
        for (std::size_t r = 0; r < kRegimes; ++r)
            m.lost_gpu_h[r] += x.lost_gpu_h[r] / n;
    }
    return m;
}

}  // namespace slurm_ai::sim
