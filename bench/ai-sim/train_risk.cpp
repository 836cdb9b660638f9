#include "train_risk.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <thread>

#include "slurm_ai/placement/failure_risk.hpp"
#include "testbed/ranks.hpp"

namespace slurm_ai::sim {
namespace {

double log_loss(const std::vector<double> &p, const std::vector<char> &y) {
    double s = 0;
    for (std::size_t i = 0; i < p.size(); ++i) {
        const double q = std::clamp(p[i], 1e-12, 1 - 1e-12);
        s -= y[i] ? std::log(q) : std::log(1 - q);
    }
    return p.empty() ? 0 : s / static_cast<double>(p.size());
}

std::vector<double> hand_written(const RiskSamples &s, double c) {
    std::vector<double> p(s.hand.size());
    for (std::size_t i = 0; i < p.size(); ++i)
        p[i] = -std::expm1(-c * s.hand[i] * s.days[i]);
    return p;
}

std::vector<double> learned(const LearnedRisk &m, const RiskSamples &s) {
    std::vector<double> p(s.x.size());
    for (std::size_t i = 0; i < p.size(); ++i)
        p[i] = m.probability(s.x[i], s.days[i]);
    return p;
}

// A job's place on `n` hosts: packed (consecutive hosts from a random one, wrapping) or
// scattered; empty when it would take a host that is down.
std::vector<int> candidate(int n, int hosts, bool packed, const std::vector<char> &down,
                           std::mt19937_64 &rng) {
    std::vector<int> out;
    if (packed) {
        const int from = static_cast<int>(rng() % static_cast<std::uint64_t>(hosts));
        for (int k = 0; k < n; ++k)
            out.push_back((from + k) % hosts);
    } else {
        std::vector<int> all(static_cast<std::size_t>(hosts));
        for (int h = 0; h < hosts; ++h)
            all[static_cast<std::size_t>(h)] = h;
        for (int k = 0; k < n; ++k) {
            const auto pick = k + static_cast<int>(rng() % static_cast<std::uint64_t>(hosts - k));
            std::swap(all[static_cast<std::size_t>(k)], all[static_cast<std::size_t>(pick)]);
            out.push_back(all[static_cast<std::size_t>(k)]);
        }
    }
    for (int h : out)
        if (down[static_cast<std::size_t>(h)])
            return {};
    return out;
}

}  // namespace

long RiskSamples::positives() const {
    return std::count(y.begin(), y.end(), 1);
}

void RiskSamples::append(const RiskSamples &o) {
    x.insert(x.end(), o.x.begin(), o.x.end());
    days.insert(days.end(), o.days.begin(), o.days.end());
    y.insert(y.end(), o.y.begin(), o.y.end());
    hand.insert(hand.end(), o.hand.begin(), o.hand.end());
}

int risk_samples_per_day(int hosts) {
    return std::max(32, hosts / 2);
}

namespace {

constexpr const char *kRiskJobs = "philly.csv, 2017-10-10";  // what risk_jobs prepares

}  // namespace

Parsed<Scenario> risk_jobs(int hosts) {
    ScenarioSpec s;
    s.start = "2017-10-10";
    s.overlay = 4;
    s.cluster.hosts = hosts;
    return prepare(with_defaults(s));
}

RiskSamples risk_samples(const Replay &replay, const SimCluster &cluster,
                         const std::vector<SimJob> &jobs, double from_day, double to_day,
                         int per_day, std::uint64_t seed, bool pairs) {
    RiskSamples out;
    const ClusterGraph &graph = cluster.graph;
    const int hosts = graph.host_count();
    const int per_host = std::max(cluster.max_gpus_per_host, 1);
    if (jobs.empty() || hosts == 0)
        return out;
    const double end = (to_day - replay.start_day) * kDaySeconds;
    std::vector<HostFailures> history(static_cast<std::size_t>(hosts));
    std::vector<double> down_until(static_cast<std::size_t>(hosts), -1e300);
    std::vector<int> failed;
    auto note = [&](int h, double t, FailureClass kind) {
        if (!history[static_cast<std::size_t>(h)].any())
            failed.push_back(h);
        history[static_cast<std::size_t>(h)].note(t, kind);
    };
    for (const auto &h : replay.history)
        if (h.host >= 0 && h.host < hosts)
            note(h.host, h.t, h.kind);
    // Each host's faults after the start, to label the samples.
    std::vector<std::vector<const ReplayedFault *>> of(static_cast<std::size_t>(hosts));
    for (const auto &f : replay.faults)
        of[static_cast<std::size_t>(f.host)].push_back(&f);
    const RiskModel hand(graph);
    // Jobs drawn in proportion to their GPU-hours: what a failure can take.
    std::vector<double> upto;
    double total = 0;
    for (const auto &j : jobs)
        upto.push_back(total += j.gpus * j.work_s);
    if (!(total > 0))
        return out;
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(0.0, total);
    std::size_t next = 0;
    const auto &faults = replay.faults;
    for (double day = std::floor(from_day); day < to_day; ++day) {
        const double t = (day - replay.start_day) * kDaySeconds;
        for (; next < faults.size() && faults[next].t < t; ++next) {
            const auto &f = faults[next];
            note(f.host, f.t, f.kind);
            auto &until = down_until[static_cast<std::size_t>(f.host)];
            until = std::max(until, f.t + f.duration_s);
        }
        std::vector<char> down(static_cast<std::size_t>(hosts), 0);
        for (int h = 0; h < hosts; ++h)
            down[static_cast<std::size_t>(h)] = down_until[static_cast<std::size_t>(h)] > t;
        RiskHistory now(graph, t);
        ClusterState state(graph);
        for (int h : failed) {
            now.add(h, history[static_cast<std::size_t>(h)]);
            state.failures[h] = history[static_cast<std::size_t>(h)].as_of(t).week;
        }
        for (int k = 0; k < per_day; ++k) {
            const auto at = std::upper_bound(upto.begin(), upto.end(), u(rng)) - upto.begin();
            const SimJob &job = jobs[std::min(static_cast<std::size_t>(at), jobs.size() - 1)];
            const bool packed = pairs || rng() % 2 == 0;
            const int n = (job.gpus + per_host - 1) / per_host;
            const double watch = std::min(job.work_s, end - t);
            if (n > hosts || watch < 60)
                continue;
            std::vector<std::vector<int>> on{candidate(n, hosts, packed, down, rng)};
            if (pairs)
                on.push_back(candidate(n, hosts, false, down, rng));
            if (std::any_of(on.begin(), on.end(), [](const auto &h) { return h.empty(); }))
                continue;
            for (auto &hosts_of : on) {
                Placement p;
                p.hosts = std::move(hosts_of);
                int left = job.gpus;
                for (std::size_t i = 0; i < p.hosts.size(); ++i) {
                    const int take = std::min(left, per_host);
                    p.gpus.emplace_back();
                    for (int g = 0; g < take; ++g)
                        p.gpus.back().push_back(g);
                    left -= take;
                }
                bool hit = false;
                for (int h : p.hosts)
                    for (const ReplayedFault *f : of[static_cast<std::size_t>(h)])
                        hit |= f->t >= t && f->t < t + watch && (!f->link || n > 1);
                out.x.push_back(placement_risk_inputs(graph, risk_graph(job.demand, n), p.hosts, now));
                out.days.push_back(watch / kDaySeconds);
                out.y.push_back(hit);
                out.hand.push_back(hand.estimate(job.demand, p, &state).per_day);
            }
        }
    }
    return out;
}

namespace {

// The samples' first `share` (they are day by day) and the rest.
std::pair<RiskSamples, RiskSamples> split(const RiskSamples &s, double share) {
    const auto cut = static_cast<std::size_t>(static_cast<double>(s.x.size()) * share);
    RiskSamples a, b;
    for (std::size_t i = 0; i < s.x.size(); ++i) {
        RiskSamples &to = i < cut ? a : b;
        to.x.push_back(s.x[i]);
        to.days.push_back(s.days[i]);
        to.y.push_back(s.y[i]);
        to.hand.push_back(s.hand[i]);
    }
    return {std::move(a), std::move(b)};
}

// Adam from the same start for `epochs`; `at` is called after each epoch.
template <typename At>
LearnedRisk fit(const RiskSamples &s, int epochs, double weight_decay, const TrainOptions &o,
                At at) {
    LearnedRisk m;
    const double n = static_cast<double>(s.x.size());
    // Inputs standardised on the training samples.
    for (int i = 0; i < kRiskInputs; ++i) {
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
    // The output starts at the base rate: hits per day watched.
    double watched = 0;
    for (double d : s.days)
        watched += d;
    const double base = std::clamp(static_cast<double>(s.positives()) / std::max(watched, 1e-9), 1e-6, 10.0);
    m.w[LearnedRisk::kParameters - 1] = std::log(std::expm1(base));  // softplus^-1
    std::array<double, LearnedRisk::kParameters> mom{}, var{};
    const double b1 = 0.9, b2 = 0.999;
    for (int epoch = 1; epoch <= epochs; ++epoch) {
        std::array<double, LearnedRisk::kParameters> grad{};
        for (std::size_t i = 0; i < s.x.size(); ++i)
            m.backprop(s.x[i], s.days[i], s.y[i], 1, grad);
        for (std::size_t k = 0; k < grad.size(); ++k) {
            const double d = grad[k] / std::max(n, 1.0) + weight_decay * m.w[k];
            mom[k] = b1 * mom[k] + (1 - b1) * d;
            var[k] = b2 * var[k] + (1 - b2) * d * d;
            const double mh = mom[k] / (1 - std::pow(b1, epoch));
            const double vh = var[k] / (1 - std::pow(b2, epoch));
            m.w[k] -= o.learning_rate * mh / (std::sqrt(vh) + 1e-8);
        }
        at(epoch, m);
    }
    m.info.samples = static_cast<long>(s.x.size());
    m.info.positives = s.positives();
    m.info.epochs = epochs;
    m.info.weight_decay = weight_decay;
    return m;
}

}  // namespace

LearnedRisk train_risk(const RiskSamples &s, const TrainOptions &o) {
    // Epochs and weight decay chosen on the last quarter of the training samples (trained
    // on the first three; the epochs read off one run), then the model trained again on
    // all of them.
    // Named, not a structured binding: clang 14 cannot capture a binding in a lambda.
    const auto halves = split(s, 0.75);
    const RiskSamples &early = halves.first, &late = halves.second;
    const std::array<double, 3> decays{1e-4, 1e-3, 1e-2};
    // Per decay, its held-out loss after 100, 300 and 1000 epochs (one thread each).
    std::array<std::array<double, 3>, 3> loss{};
    std::vector<std::thread> threads;
    for (std::size_t d = 0; d < decays.size(); ++d)
        threads.emplace_back([&, d] {
            fit(early, 1000, decays[d], o, [&](int epoch, const LearnedRisk &m) {
                const int k = epoch == 100 ? 0 : epoch == 300 ? 1 : epoch == 1000 ? 2 : -1;
                if (k >= 0)
                    loss[d][static_cast<std::size_t>(k)] = log_loss(learned(m, late), late.y);
            });
        });
    for (auto &t : threads)
        t.join();
    int best_epochs = 300;
    double best_decay = 1e-3, best = std::numeric_limits<double>::infinity();
    for (std::size_t d = 0; d < decays.size(); ++d)
        for (std::size_t k = 0; k < 3; ++k)
            if (loss[d][k] < best - 1e-12) {
                best = loss[d][k];
                best_epochs = std::array{100, 300, 1000}[k];
                best_decay = decays[d];
            }
    return fit(s, best_epochs, best_decay, o, [](int, const LearnedRisk &) {});
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

bool Judgement::better_choice() const {
    return pairs_accuracy && pairs_accuracy_hand_written &&
           *pairs_accuracy > *pairs_accuracy_hand_written;
}

bool Judgement::beats() const {
    const bool measured = pairs_accuracy && pairs_accuracy_hand_written;
    return better_auc() && better_log_loss() && (!measured || better_choice());
}

std::optional<double> pair_accuracy(const std::vector<double> &scores, const std::vector<char> &labels,
                                    int *decided) {
    double right = 0;
    int n = 0;
    for (std::size_t i = 0; i + 1 < labels.size(); i += 2) {
        if (labels[i] == labels[i + 1])
            continue;
        ++n;
        const double hit = labels[i] ? scores[i] : scores[i + 1];
        const double spared = labels[i] ? scores[i + 1] : scores[i];
        right += hit > spared ? 1.0 : hit == spared ? 0.5 : 0.0;
    }
    if (decided)
        *decided = n;
    return n > 0 ? std::optional<double>(right / n) : std::nullopt;
}

Judgement judge(const LearnedRisk &model, const RiskSamples &train, const RiskSamples &test,
                const RiskSamples *pairs) {
    Judgement j;
    // The hand-written model's scale: the c that fits the training days best (log-loss is
    // convex in log c over this range; a golden-section search).
    double lo = std::log(1e-6), hi = std::log(1e4);
    auto loss_at = [&](double lc) { return log_loss(hand_written(train, std::exp(lc)), train.y); };
    for (int k = 0; k < 80; ++k) {
        const double a = lo + (hi - lo) * 0.382, b = lo + (hi - lo) * 0.618;
        if (loss_at(a) < loss_at(b))
            hi = b;
        else
            lo = a;
    }
    j.hand_written_scale = std::exp((lo + hi) / 2);
    const std::vector<double> mine = learned(model, test), theirs = hand_written(test, j.hand_written_scale);
    j.auc = auc(mine, test.y);
    j.auc_hand_written = auc(theirs, test.y);
    j.log_loss = log_loss(mine, test.y);
    j.log_loss_hand_written = log_loss(theirs, test.y);
    if (pairs) {
        j.pairs_accuracy = pair_accuracy(learned(model, *pairs), pairs->y, &j.pairs);
        j.pairs_accuracy_hand_written =
            pair_accuracy(hand_written(*pairs, j.hand_written_scale), pairs->y, nullptr);
    }
    return j;
}

Parsed<RiskStudySamples> risk_study_samples(const FaultTrace &trace, int hosts, double split_day,
                                            std::uint64_t seed) {
    auto sc = risk_jobs(hosts);
    if (!sc)
        return sc.error();
    const double from = std::floor(trace.first_day), to = trace.last_day + 1;
    const auto r = replay_faults(trace, sc->cluster.graph, FaultMapping::kRack, 0, to, seed);
    const int per_day = risk_samples_per_day(hosts);
    const auto &jobs = sc->jobs.jobs;
    return RiskStudySamples{risk_samples(r, sc->cluster, jobs, from, split_day, per_day, seed),
                            risk_samples(r, sc->cluster, jobs, split_day, to, per_day, seed + 1),
                            risk_samples(r, sc->cluster, jobs, split_day, to, per_day, seed + 2, true)};
}

LearnedRisk train_and_judge(const FaultTrace &trace, int hosts, double split_day,
                            const RiskStudySamples &s, const TrainOptions &options,
                            Judgement &judged) {
    LearnedRisk model = train_risk(s.before, options);
    judged = judge(model, s.before, s.after, &s.pairs);
    auto &i = model.info;
    i.trace = trace.source.substr(trace.source.rfind('/') + 1);
    i.jobs = kRiskJobs;
    i.train_from_day = std::floor(trace.first_day);
    i.train_to_day = split_day;
    i.test_to_day = trace.last_day + 1;
    i.hosts = hosts;
    i.auc = judged.auc;
    i.auc_hand_written = judged.auc_hand_written;
    i.log_loss = judged.log_loss;
    i.log_loss_hand_written = judged.log_loss_hand_written;
    i.pairs_accuracy = judged.pairs_accuracy;
    i.pairs_accuracy_hand_written = judged.pairs_accuracy_hand_written;
    i.beats_hand_written = judged.beats();
    return model;
}

}  // namespace slurm_ai::sim
