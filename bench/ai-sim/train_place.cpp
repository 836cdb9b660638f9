#include "train_place.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <numeric>
#include <ostream>
#include <random>

#include <fmt/format.h>

#include "metrics.hpp"
#include "task_pool.hpp"

namespace slurm_ai::sim {
namespace {

// One recorded decision: its inputs and the candidate taken.
struct Step {
    PlaceDecision decision;
    std::size_t chosen = 0;
};

std::vector<double> softmax(const std::vector<double> &s, double temperature) {
    const double top = *std::max_element(s.begin(), s.end());
    std::vector<double> p(s.size());
    double sum = 0;
    for (std::size_t i = 0; i < s.size(); ++i)
        sum += p[i] = std::exp((s[i] - top) / temperature);
    for (double &x : p)
        x /= sum;
    return p;
}

// Picks the objective's candidate (no model), or draws one from the model's softmax at
// `temperature` (> 0); records up to `cap` decisions of more than one candidate, drawn
// evenly over the run (reservoir sampling). One simulation's, on its thread.
class Recorder final : public CandidateChooser {
  public:
    Recorder(const LearnedPlacement *model, double temperature, std::uint64_t seed, int cap)
        : model_(model), temperature_(temperature), draw_(seed), keep_(seed ^ 0x6b656570ull),
          cap_(static_cast<std::size_t>(cap)) {}

    std::size_t choose(const PlaceDecision &d) const override {
        std::size_t pick = d.objective_pick;
        if (model_) {
            const auto p = softmax(model_->scores(d), temperature_);
            pick = std::discrete_distribution<std::size_t>(p.begin(), p.end())(draw_);
        }
        ++seen_;
        if (steps_.size() < cap_)
            steps_.push_back({d, pick});
        else if (std::uint64_t j = keep_() % seen_; j < cap_)
            steps_[j] = {d, pick};
        return pick;
    }
    const std::vector<Step> &steps() const { return steps_; }

  private:
    const LearnedPlacement *model_;
    double temperature_;
    mutable std::mt19937_64 draw_, keep_;
    std::size_t cap_;
    mutable std::vector<Step> steps_;
    mutable std::uint64_t seen_ = 0;
};

struct Window {
    std::string start;
    Scenario scenario;
    double engine_jct_h = 0;
    double baseline = 0;  // running mean of the episodes' advantages
};

struct Adam {
    explicit Adam(std::size_t n, double lr) : m(n, 0.0), v(n, 0.0), rate(lr) {}
    void step(std::vector<double> &w, std::vector<double> g) {
        // The gradient's norm clipped to 1: one episode's advantage never throws the
        // network far.
        const double norm = std::sqrt(std::inner_product(g.begin(), g.end(), g.begin(), 0.0));
        if (norm > 1)
            for (double &x : g)
                x /= norm;
        ++t;
        for (std::size_t i = 0; i < w.size(); ++i) {
            m[i] = 0.9 * m[i] + 0.1 * g[i];
            v[i] = 0.999 * v[i] + 0.001 * g[i] * g[i];
            const double mh = m[i] / (1 - std::pow(0.9, t)), vh = v[i] / (1 - std::pow(0.999, t));
            w[i] -= rate * mh / (std::sqrt(vh) + 1e-8);
        }
    }
    std::vector<double> m, v;
    double rate;
    int t = 0;
};

// The gradient of a batch's loss added into grad: for each step, ds from `ds_of` (its
// scores given), and the SRR terms over every candidate's u times `reg`. Returns the
// summed loss that ds_of reports.
template <class DsOf>
double batch_gradient(const LearnedPlacement &m, const std::vector<const Step *> &batch,
                      DsOf ds_of, double reg, std::vector<double> &grad) {
    std::vector<LearnedPlacement::Pass> passes;
    std::vector<std::vector<double>> ds;
    double loss = 0;
    for (const Step *s : batch) {
        passes.push_back(m.forward(s->decision));
        ds.emplace_back();
        loss += ds_of(*s, passes.back().scores, ds.back());
    }
    std::vector<std::vector<std::vector<double>>> du(batch.size());
    if (reg > 0) {
        std::vector<std::vector<double>> u, g;
        for (const auto &p : passes)
            for (const auto &c : p.candidates)
                u.push_back(c.u);
        g.assign(u.size(), std::vector<double>(static_cast<std::size_t>(m.width()), 0.0));
        loss += reg * srr_terms(u, g);
        std::size_t row = 0;
        for (std::size_t b = 0; b < passes.size(); ++b)
            for (std::size_t c = 0; c < passes[b].candidates.size(); ++c, ++row) {
                for (double &x : g[row])
                    x *= reg;
                du[b].push_back(g[row]);
            }
    }
    for (std::size_t b = 0; b < passes.size(); ++b)
        m.backward(passes[b], ds[b], du[b], grad);
    return loss;
}

// Means and scales of the inputs over the recorded decisions (scale 1 where one is flat).
void set_standardization(LearnedPlacement &m, const std::vector<Step> &steps) {
    auto fit = [](auto &mean, auto &scale, const auto &rows) {
        const std::size_t n = mean.size();
        std::vector<double> sum(n, 0.0), sq(n, 0.0);
        for (const auto *r : rows)
            for (std::size_t i = 0; i < n; ++i) {
                sum[i] += (*r)[i];
                sq[i] += (*r)[i] * (*r)[i];
            }
        const double count = std::max<double>(1, static_cast<double>(rows.size()));
        for (std::size_t i = 0; i < n; ++i) {
            mean[i] = sum[i] / count;
            const double var = sq[i] / count - mean[i] * mean[i];
            scale[i] = var > 1e-12 ? std::sqrt(var) : 1.0;
        }
    };
    std::vector<const PlaceJobInputs *> jobs;
    std::vector<const PlaceCandidateInputs *> candidates;
    std::vector<const PlaceRegionInputs *> regions;
    for (const auto &s : steps) {
        jobs.push_back(&s.decision.job);
        for (const auto &c : s.decision.candidates) {
            candidates.push_back(&c.x);
            for (const auto &r : c.regions)
                regions.push_back(&r);
        }
    }
    fit(m.mean_job, m.scale_job, jobs);
    fit(m.mean_candidate, m.scale_candidate, candidates);
    fit(m.mean_region, m.scale_region, regions);
}

double mean_jct_h(const RunResult &r, const Scenario &s) {
    return summarize(r, s.cluster.max_gpus_per_host).mean_jct_h;
}

// Runs each (window, chooser) pair, `threads` at a time; mean JCTs in the same order.
std::vector<double> run_windows(const std::vector<const Window *> &windows,
                                const std::vector<std::shared_ptr<const CandidateChooser>> &who,
                                const SimOptions &sim, int threads) {
    std::vector<double> out(windows.size());
    std::vector<std::function<void()>> tasks;
    for (std::size_t i = 0; i < windows.size(); ++i)
        tasks.push_back([&, i] {
            SimOptions o = sim;
            o.engine.placement_model = who[i];
            const Scenario &s = windows[i]->scenario;
            out[i] = mean_jct_h(simulate(s.cluster, s.jobs.jobs, s.steps, o, "engine"), s);
        });
    run_tasks(tasks, threads);
    return out;
}

}  // namespace

double srr_terms(const std::vector<std::vector<double>> &u, std::vector<std::vector<double>> &du) {
    const std::size_t n = u.size();
    if (n < 2)
        return 0;
    const std::size_t d = u[0].size();
    std::vector<double> mean(d, 0.0);
    for (const auto &row : u)
        for (std::size_t i = 0; i < d; ++i)
            mean[i] += row[i] / static_cast<double>(n);
    // Covariance C = mean of (u - mean)(u - mean)^T.
    std::vector<std::vector<double>> cov(d, std::vector<double>(d, 0.0));
    for (const auto &row : u)
        for (std::size_t i = 0; i < d; ++i)
            for (std::size_t j = 0; j < d; ++j)
                cov[i][j] += (row[i] - mean[i]) * (row[j] - mean[j]) / static_cast<double>(n);
    double value = 0;
    for (std::size_t i = 0; i < d; ++i) {
        const double var = std::max(cov[i][i], 1e-8);
        value += 0.5 * (mean[i] * mean[i] + var - std::log(var) - 1);
        for (std::size_t j = 0; j < d; ++j)
            if (j != i)
                value += cov[i][j] * cov[i][j];
    }
    // d/du_ni: KL: (mean_i + (1 - 1/var_i)(u_ni - mean_i)) / n; decorrelation:
    // 4/n sum_{j != i} C_ij (u_nj - mean_j).
    for (std::size_t r = 0; r < n; ++r)
        for (std::size_t i = 0; i < d; ++i) {
            const double var = std::max(cov[i][i], 1e-8);
            double g = mean[i] + (1 - 1 / var) * (u[r][i] - mean[i]);
            for (std::size_t j = 0; j < d; ++j)
                if (j != i)
                    g += 4 * cov[i][j] * (u[r][j] - mean[j]);
            du[r][i] += g / static_cast<double>(n);
        }
    return value;
}

std::string shift_start(const std::string &start, double days) {
    int y = 0, m = 0, d = 0;
    if (std::sscanf(start.c_str(), "%d-%d-%d", &y, &m, &d) == 3 && start.size() == 10) {
        using namespace std::chrono;
        const sys_days at = sys_days(year_month_day(year(y), month(static_cast<unsigned>(m)),
                                                    day(static_cast<unsigned>(d)))) +
                            std::chrono::days(static_cast<long>(std::lround(days)));
        const year_month_day out(at);
        return fmt::format("{:04d}-{:02d}-{:02d}", static_cast<int>(out.year()),
                           static_cast<unsigned>(out.month()), static_cast<unsigned>(out.day()));
    }
    return fmt::format("{:.0f}", std::stod(start.empty() ? "0" : start) + days * 86400);
}

namespace {

ScenarioSpec window_spec(const TrainPlaceOptions &o, const std::string &start, int factor) {
    ScenarioSpec s = o.spec;
    s.start = start;
    s.cluster.hosts *= factor;
    s.overlay *= factor;
    return s;
}

// The training windows, each with the engine's mean JCT; the engine's decisions recorded.
Parsed<std::vector<Window>> training_windows(const TrainPlaceOptions &o,
                                             std::vector<Step> &decisions, std::ostream &log) {
    std::vector<Window> out;
    for (int k = 0; k < o.windows; ++k) {
        const std::string start = shift_start(o.spec.start, k * o.spec.overlay * o.spec.days);
        auto scenario = prepare(window_spec(o, start, 1));
        if (!scenario)
            return scenario.error();
        out.push_back({start, std::move(scenario).value(), 0, 0});
    }
    std::vector<std::shared_ptr<Recorder>> recorders;
    std::vector<std::shared_ptr<const CandidateChooser>> who;
    std::vector<const Window *> runs;
    for (std::size_t k = 0; k < out.size(); ++k) {
        recorders.push_back(std::make_shared<Recorder>(nullptr, 0, o.seed + k, o.max_decisions));
        who.push_back(recorders.back());
        runs.push_back(&out[k]);
    }
    const auto jct = run_windows(runs, who, o.sim, o.threads);
    const std::size_t fit = out.size() - static_cast<std::size_t>(o.validation);
    for (std::size_t k = 0; k < out.size(); ++k) {
        out[k].engine_jct_h = jct[k];
        const auto &steps = recorders[k]->steps();
        if (k < fit)
            decisions.insert(decisions.end(), steps.begin(), steps.end());
        log << fmt::format("{} window {} ({}): {} jobs, engine mean JCT {:.3f} h, {} decisions "
                           "with a choice{}\n",
                           k < fit ? "training" : "validation", k + 1, out[k].start,
                           out[k].scenario.jobs.jobs.size(), jct[k], steps.size(),
                           k < fit ? " kept" : "");
    }
    return out;
}

// Imitation of the objective's pick over the recorded decisions.
void imitate(LearnedPlacement &m, const std::vector<Step> &steps, const TrainPlaceOptions &o,
             std::ostream &log) {
    Adam adam(m.w.size(), o.learning_rate);
    std::mt19937_64 rng(o.seed ^ 0x696d6974ull);
    std::vector<const Step *> order;
    for (const auto &s : steps)
        order.push_back(&s);
    constexpr std::size_t kBatch = 64;
    double per = 1;  // 1 / the batch's size: the loss is the batch's mean
    auto cross_entropy = [&](const Step &s, const std::vector<double> &scores,
                             std::vector<double> &ds) {
        ds = softmax(scores, 1);
        const double loss = -std::log(std::max(ds[s.decision.objective_pick], 1e-300));
        ds[s.decision.objective_pick] -= 1;
        for (double &x : ds)
            x *= per;
        return loss;
    };
    for (int epoch = 1; epoch <= o.imitation_epochs; ++epoch) {
        std::shuffle(order.begin(), order.end(), rng);
        double loss = 0;
        for (std::size_t at = 0; at < order.size(); at += kBatch) {
            std::vector<const Step *> batch(order.begin() + static_cast<long>(at),
                                            order.begin() + static_cast<long>(
                                                std::min(order.size(), at + kBatch)));
            std::vector<double> grad(m.w.size(), 0.0);
            per = 1.0 / static_cast<double>(batch.size());
            loss += batch_gradient(m, batch, cross_entropy, o.regularizer, grad);
            adam.step(m.w, grad);
        }
        if (epoch == 1 || epoch == o.imitation_epochs || epoch % 10 == 0) {
            std::size_t agree = 0;
            for (const auto &s : steps)
                agree += m.choose(s.decision) == s.decision.objective_pick;
            log << fmt::format("imitation epoch {}: loss {:.4f} per decision, the objective's "
                               "pick {:.1f}% of the time\n",
                               epoch, loss / std::max<double>(1, static_cast<double>(steps.size())),
                               100.0 * static_cast<double>(agree) /
                                   std::max<double>(1, static_cast<double>(steps.size())));
        }
    }
}

// The greedy model's mean JCT over the engine's, averaged over the windows from `first`.
double relative_jct(const LearnedPlacement &m, const std::vector<Window> &windows,
                    std::size_t first, const TrainPlaceOptions &o) {
    auto model = std::make_shared<const LearnedPlacement>(m);
    std::vector<const Window *> runs;
    std::vector<std::shared_ptr<const CandidateChooser>> who;
    for (std::size_t k = first; k < windows.size(); ++k) {
        runs.push_back(&windows[k]);
        who.push_back(model);
    }
    const auto jct = run_windows(runs, who, o.sim, o.threads);
    double sum = 0;
    for (std::size_t k = 0; k < jct.size(); ++k)
        sum += jct[k] / runs[k]->engine_jct_h;
    return sum / static_cast<double>(std::max<std::size_t>(1, jct.size()));
}

// REINFORCE on the windows' mean JCT; keeps the best round's model (by relative_jct).
void policy_gradient(LearnedPlacement &m, std::vector<Window> &windows,
                     const TrainPlaceOptions &o, std::ostream &log) {
    Adam adam(m.w.size(), o.learning_rate);
    const std::size_t fit = windows.size() - static_cast<std::size_t>(o.validation);
    const std::size_t judged = o.validation > 0 ? fit : 0;  // the windows that pick a round
    const char *where = o.validation > 0 ? "validation" : "training";
    LearnedPlacement best = m;
    double best_ratio = relative_jct(m, windows, judged, o);
    log << fmt::format("after imitation: greedy mean JCT {:.4f} x the engine's on the {} "
                       "windows\n", best_ratio, where);
    for (int round = 1; round <= o.rounds; ++round) {
        for (std::size_t first = 0; first < fit; first += static_cast<std::size_t>(o.threads)) {
            std::vector<const Window *> runs;
            std::vector<std::shared_ptr<Recorder>> recorders;
            std::vector<std::shared_ptr<const CandidateChooser>> who;
            for (std::size_t k = first;
                 k < std::min(fit, first + static_cast<std::size_t>(o.threads)); ++k) {
                runs.push_back(&windows[k]);
                recorders.push_back(std::make_shared<Recorder>(
                    &m, o.temperature, o.seed + 1000 * static_cast<std::uint64_t>(round) + k,
                    o.max_decisions));
                who.push_back(recorders.back());
            }
            const auto jct = run_windows(runs, who, o.sim, o.threads);
            std::vector<double> grad(m.w.size(), 0.0);
            for (std::size_t i = 0; i < runs.size(); ++i) {
                Window &w = windows[first + i];
                const double advantage = w.engine_jct_h / jct[i] - 1 - w.baseline;
                w.baseline = 0.8 * w.baseline + 0.2 * (w.engine_jct_h / jct[i] - 1);
                const auto &steps = recorders[i]->steps();
                std::vector<const Step *> batch;
                for (const auto &s : steps)
                    batch.push_back(&s);
                const double n = std::max<double>(1, static_cast<double>(batch.size()));
                auto reinforce = [&](const Step &s, const std::vector<double> &scores,
                                     std::vector<double> &ds) {
                    ds = softmax(scores, o.temperature);
                    ds[s.chosen] -= 1;
                    for (double &x : ds)
                        x *= advantage / o.temperature / n;
                    return 0.0;
                };
                batch_gradient(m, batch, reinforce, o.regularizer, grad);
            }
            adam.step(m.w, grad);
        }
        const double ratio = relative_jct(m, windows, judged, o);
        log << fmt::format("policy gradient round {}: greedy mean JCT {:.4f} x the engine's on "
                           "the {} windows{}\n",
                           round, ratio, where, ratio < best_ratio ? " (best so far)" : "");
        if (ratio < best_ratio) {
            best_ratio = ratio;
            best = m;
        }
    }
    m = std::move(best);
}

// Each judged size on its held-out windows, after the last training day.
Parsed<std::vector<PlaceJudgement>> judge(const LearnedPlacement &m, const TrainPlaceOptions &o,
                                          std::ostream &log) {
    const double trained_days = o.windows * o.spec.overlay * o.spec.days;
    auto model = std::make_shared<const LearnedPlacement>(m);
    std::vector<PlaceJudgement> out;
    for (int f : o.sizes) {
        std::vector<Window> windows;
        for (int k = 0; k < o.held_out; ++k) {
            const std::string start =
                shift_start(o.spec.start, trained_days + k * f * o.spec.overlay * o.spec.days);
            auto scenario = prepare(window_spec(o, start, f));
            if (!scenario)
                return scenario.error();
            windows.push_back({start, std::move(scenario).value(), 0, 0});
        }
        std::vector<const Window *> runs;
        std::vector<std::shared_ptr<const CandidateChooser>> who;
        for (const auto &w : windows) {
            runs.push_back(&w);
            who.push_back(nullptr);  // the engine
            runs.push_back(&w);
            who.push_back(model);
        }
        const auto jct = run_windows(runs, who, o.sim, o.threads);
        PlaceJudgement j{o.spec.cluster.hosts * f, o.held_out, 0, 0};
        double jobs = 0;
        for (std::size_t k = 0; k < windows.size(); ++k) {
            const double n = static_cast<double>(windows[k].scenario.jobs.jobs.size());
            j.engine_mean_jct_h += jct[2 * k] * n;
            j.mean_jct_h += jct[2 * k + 1] * n;
            jobs += n;
            log << fmt::format("judged at {} hosts, window {}: learned {:.3f} h, engine {:.3f} h "
                               "({:+.1f}%)\n",
                               j.hosts, windows[k].start, jct[2 * k + 1], jct[2 * k],
                               100 * (jct[2 * k + 1] / jct[2 * k] - 1));
        }
        j.engine_mean_jct_h /= std::max(jobs, 1.0);
        j.mean_jct_h /= std::max(jobs, 1.0);
        out.push_back(j);
    }
    return out;
}

}  // namespace

Parsed<LearnedPlacement> train_place(const TrainPlaceOptions &o, std::ostream &log) {
    if (o.validation < 0 || o.validation >= o.windows)
        return InputError{"--validation", std::to_string(o.validation),
                          "fewer validation windows than --windows (" +
                              std::to_string(o.windows) + ")",
                          "", 0};
    std::vector<Step> decisions;
    auto windows = training_windows(o, decisions, log);
    if (!windows)
        return windows.error();
    LearnedPlacement m(o.width);
    set_standardization(m, decisions);
    std::mt19937_64 rng(o.seed);
    std::normal_distribution<double> init(0, 0.3);
    for (double &w : m.w)
        w = init(rng);
    imitate(m, decisions, o, log);
    policy_gradient(m, windows.value(), o, log);
    auto judged = judge(m, o, log);
    if (!judged)
        return judged.error();
    const auto &lines = windows.value().front().scenario.lines;  // its trace, then its cluster
    for (std::size_t i = 0; i < std::min<std::size_t>(2, lines.size()); ++i)
        m.info.scenario += (i ? "; " : "") + lines[i];
    m.info.hosts = o.spec.cluster.hosts;
    m.info.windows = o.windows;
    m.info.decisions = static_cast<long>(decisions.size());
    m.info.epochs = o.imitation_epochs;
    m.info.regularizer = o.regularizer;
    m.info.method = fmt::format(
        "imitation of the engine's objective ({} epochs), then {} rounds of policy gradient on "
        "mean JCT (softmax temperature {:g}, Adam step {:g}), the best round on {} validation "
        "windows kept",
        o.imitation_epochs, o.rounds, o.temperature, o.learning_rate, o.validation);
    m.info.judged = std::move(judged).value();
    return m;
}

}  // namespace slurm_ai::sim
