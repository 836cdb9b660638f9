#include "train_risk.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <limits>
#include <random>

#include "testbed/ranks.hpp"

namespace slurm_ai::sim {
namespace {

constexpr double kFlagged = 0.05;  // a weekly count above this marks a host of the leaf

double log_loss(const std::vector<double> &p, const std::vector<char> &y) {
    double s = 0;
    for (std::size_t i = 0; i < p.size(); ++i) {
        const double q = std::clamp(p[i], 1e-12, 1 - 1e-12);
        s -= y[i] ? std::log(q) : std::log(1 - q);
    }
    return p.empty() ? 0 : s / static_cast<double>(p.size());
}

std::vector<double> hand_written(const HazardSamples &s, double c) {
    std::vector<double> p(s.weekly.size());
    for (std::size_t i = 0; i < p.size(); ++i)
        p[i] = 1 - std::exp(-c * (1 + 10 * s.weekly[i]));
    return p;
}

}  // namespace

long HazardSamples::positives() const {
    return std::count(y.begin(), y.end(), 1);
}

HazardSamples hazard_samples(const Replay &replay, const ClusterGraph &graph, double from_day,
                             double to_day) {
    HazardSamples out;
    const int hosts = graph.host_count();
    std::vector<HostFailures> history(static_cast<std::size_t>(hosts));
    // Everything before from_day is history: the replay's own and its earlier faults.
    std::size_t next = 0;

    for (const auto &h : replay.history)
        if (h.host >= 0 && h.host < hosts)
            history[static_cast<std::size_t>(h.host)].note(h.t, h.kind);
    const auto &faults = replay.faults;
    for (double day = std::floor(from_day); day < to_day; ++day) {
        const double t = (day - replay.start_day) * kDaySeconds;
        for (; next < faults.size() && faults[next].t < t; ++next)
            history[static_cast<std::size_t>(faults[next].host)].note(faults[next].t,
                                                                      faults[next].kind);
        std::vector<char> fails(static_cast<std::size_t>(hosts), 0);
        for (std::size_t k = next; k < faults.size() && faults[k].t < t + kDaySeconds; ++k)
            fails[static_cast<std::size_t>(faults[k].host)] = 1;
        std::vector<double> week(static_cast<std::size_t>(hosts));
        std::map<int, std::pair<double, int>> leaf;
        for (int h = 0; h < hosts; ++h) {
            week[static_cast<std::size_t>(h)] = history[static_cast<std::size_t>(h)].as_of(t).week;
            auto &l = leaf[graph.host_leaf(h)];
            l.first += week[static_cast<std::size_t>(h)];
            l.second += week[static_cast<std::size_t>(h)] > kFlagged;
        }
        for (int h = 0; h < hosts; ++h) {
            const auto &l = leaf[graph.host_leaf(h)];
            const double w = week[static_cast<std::size_t>(h)];
            const auto n = graph.host_leaf(h) >= 0 ? graph.hosts_at_leaf(graph.host_leaf(h)).size() : 1;
            out.x.push_back(hazard_inputs(history[static_cast<std::size_t>(h)], t, l.first - w,
                                          n > 1 ? (l.second - (w > kFlagged)) / double(n - 1) : 0.0));
            out.y.push_back(fails[static_cast<std::size_t>(h)]);
            out.weekly.push_back(w);
        }
    }
    return out;
}

namespace {

// Samples with the same inputs, counted once with how many failed (most hosts have no
// history and share their inputs): the same likelihood, far fewer terms.
struct Grouped {
    std::vector<HazardInputs> x;
    std::vector<double> positives, total;
};
Grouped group(const HazardSamples &s) {
    std::map<HazardInputs, std::size_t> at;
    Grouped g;
    for (std::size_t i = 0; i < s.x.size(); ++i) {
        auto [it, fresh] = at.try_emplace(s.x[i], g.x.size());
        if (fresh) {
            g.x.push_back(s.x[i]);
            g.positives.push_back(0);
            g.total.push_back(0);
        }
        g.positives[it->second] += s.y[i];
        g.total[it->second] += 1;
    }
    return g;
}

LearnedRisk fit(const HazardSamples &s, const Grouped &g, int epochs, double weight_decay,
                const TrainOptions &o) {
    LearnedRisk m;
    const double n = static_cast<double>(s.x.size());
    // Inputs standardised on the training days.
    for (int i = 0; i < kHazardInputs; ++i) {
        double sum = 0, sq = 0;
        for (const auto &x : s.x) {
            sum += x[static_cast<std::size_t>(i)];
            sq += x[static_cast<std::size_t>(i)] * x[static_cast<std::size_t>(i)];
        }
        const double mean = n > 0 ? sum / n : 0;
        const double var = n > 0 ? sq / n - mean * mean : 0;
        m.mean[static_cast<std::size_t>(i)] = mean;
        m.scale[static_cast<std::size_t>(i)] = var > 1e-12 ? std::sqrt(var) : 1.0;
    }
    std::mt19937_64 rng(o.seed);
    std::normal_distribution<double> init(0.0, 0.3);
    for (auto &w : m.w)
        w = init(rng);
    // The output starts at the base rate.
    const double base = std::clamp(static_cast<double>(s.positives()) / std::max(n, 1.0), 1e-6, 0.5);
    m.w[LearnedRisk::kParameters - 1] = std::log(base / (1 - base));
    std::array<double, LearnedRisk::kParameters> mom{}, var{};
    const double b1 = 0.9, b2 = 0.999;
    for (int epoch = 1; epoch <= epochs; ++epoch) {
        std::array<double, LearnedRisk::kParameters> grad{};
        for (std::size_t i = 0; i < g.x.size(); ++i)
            m.backprop(g.x[i], g.positives[i], g.total[i], grad);
        for (std::size_t k = 0; k < grad.size(); ++k) {
            const double d = grad[k] / std::max(n, 1.0) + weight_decay * m.w[k];
            mom[k] = b1 * mom[k] + (1 - b1) * d;
            var[k] = b2 * var[k] + (1 - b2) * d * d;
            const double mh = mom[k] / (1 - std::pow(b1, epoch));
            const double vh = var[k] / (1 - std::pow(b2, epoch));
            m.w[k] -= o.learning_rate * mh / (std::sqrt(vh) + 1e-8);
        }
    }
    m.info.samples = static_cast<long>(s.x.size());
    m.info.positives = s.positives();
    m.info.epochs = epochs;
    m.info.weight_decay = weight_decay;
    return m;
}

double mean_log_loss(const LearnedRisk &m, const HazardSamples &s) {
    std::vector<double> p(s.x.size());
    for (std::size_t i = 0; i < p.size(); ++i)
        p[i] = m.probability(s.x[i]);
    return log_loss(p, s.y);
}

// The first `share` of the samples' days and the rest (samples are day by day, the same
// hosts each day).
std::pair<HazardSamples, HazardSamples> split(const HazardSamples &s, double share, int hosts) {
    const std::size_t days = s.x.size() / static_cast<std::size_t>(std::max(hosts, 1));
    const std::size_t cut = static_cast<std::size_t>(days * share) * static_cast<std::size_t>(hosts);
    HazardSamples a, b;
    for (std::size_t i = 0; i < s.x.size(); ++i) {
        HazardSamples &to = i < cut ? a : b;
        to.x.push_back(s.x[i]);
        to.y.push_back(s.y[i]);
        to.weekly.push_back(s.weekly[i]);
    }
    return {std::move(a), std::move(b)};
}

}  // namespace

LearnedRisk train_risk(const HazardSamples &s, int hosts, const TrainOptions &o) {
    // Epochs and weight decay chosen on the last quarter of the training days (trained on
    // the first three), then the model trained again on all of them.
    auto [early, late] = split(s, 0.75, hosts);
    const Grouped ge = group(early);
    int best_epochs = o.epochs;
    double best_decay = o.weight_decay, best = std::numeric_limits<double>::infinity();
    for (int epochs : {100, 300, 1000})
        for (double decay : {1e-4, 1e-3, 1e-2}) {
            const double loss = mean_log_loss(fit(early, ge, epochs, decay, o), late);
            if (loss < best - 1e-12) {
                best = loss;
                best_epochs = epochs;
                best_decay = decay;
            }
        }
    return fit(s, group(s), best_epochs, best_decay, o);
}

double auc(const std::vector<double> &scores, const std::vector<char> &labels) {
    // Mann-Whitney over the ranks, ties averaged.
    const std::vector<double> rank = testbed::ranks(scores);
    double pos = 0, neg = 0, sum = 0;
    for (std::size_t i = 0; i < labels.size(); ++i) {
        if (labels[i]) {
            ++pos;
            sum += rank[i];
        } else {
            ++neg;
        }
    }
    if (pos == 0 || neg == 0)
        return 0.5;
    return (sum - pos * (pos + 1) / 2) / (pos * neg);
}

Judgement judge(const LearnedRisk &model, const HazardSamples &train, const HazardSamples &test) {
    Judgement j;
    // The hand-written model's scale: the c that fits the training days best (log-loss is
    // convex in log c over this range; a golden-section search).
    double lo = std::log(1e-6), hi = std::log(1.0);
    auto loss_at = [&](double lc) { return log_loss(hand_written(train, std::exp(lc)), train.y); };
    for (int k = 0; k < 80; ++k) {
        const double a = lo + (hi - lo) * 0.382, b = lo + (hi - lo) * 0.618;
        if (loss_at(a) < loss_at(b))
            hi = b;
        else
            lo = a;
    }
    j.hand_written_scale = std::exp((lo + hi) / 2);
    std::vector<double> learned(test.x.size());
    for (std::size_t i = 0; i < test.x.size(); ++i)
        learned[i] = model.probability(test.x[i]);
    j.auc = auc(learned, test.y);
    j.auc_hand_written = auc(test.weekly, test.y);
    j.log_loss = log_loss(learned, test.y);
    j.log_loss_hand_written = log_loss(hand_written(test, j.hand_written_scale), test.y);
    return j;
}

}  // namespace slurm_ai::sim
