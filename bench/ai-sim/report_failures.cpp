#include "report_failures.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "output.hpp"

namespace slurm_ai::sim {
namespace {

const std::vector<std::string> kStudyPolicies{"tree-bestfit", "engine-norisk", "engine",
                                              "engine-learned", "suite"};
constexpr int kPopulation = 400;  // the InfiniteHBD study's servers
constexpr double kWindowDays = 60;  // faults replayed from a window's start (runs end sooner)
// Regimes as the JSON names them.
constexpr const char *kRegimeKeys[kRegimes] = {"single", "cyclic", "tree"};

std::size_t index_of(const std::vector<std::string> &v, const std::string &p) {
    return static_cast<std::size_t>(std::find(v.begin(), v.end(), p) - v.begin());
}

ScenarioSpec study_spec(bool quick, int hosts, int overlay) {
    ScenarioSpec s;
    s.start = "2017-10-10";
    s.overlay = overlay;
    s.max_jobs = quick ? 300 : 0;
    s.cluster.hosts = hosts;
    s.cluster.host_gbps = 800;
    s.jobs.request = RequestStyle::kFlexible;
    s.jobs.elastic_share = 0.5;  // kAssumedElasticShare: the suite's shrink around a node
    return with_defaults(s);
}

// Window by window, as the earlier evaluation counted (its seeds): a win is fewer GPU-hours
// lost by the jobs of the regime in that window, engine against engine-norisk.
std::array<std::array<int, 3>, kRegimes> window_tally(const FailureStudy::Size &s,
                                                      std::size_t aware, std::size_t blind) {
    std::array<std::array<int, 3>, kRegimes> out{};  // wins, ties, losses
    for (const auto &w : s.rows)
        for (int r = 0; r < kRegimes; ++r) {
            const double a = w[aware].lost_gpu_h[static_cast<std::size_t>(r)];
            const double b = w[blind].lost_gpu_h[static_cast<std::size_t>(r)];
            ++out[static_cast<std::size_t>(r)][std::abs(a - b) < 1e-9 ? 1 : a < b ? 0 : 2];
        }
    return out;
}

std::array<PairedTally, kRegimes> pooled(const FailureStudy::Size &s, std::size_t policy) {
    std::array<PairedTally, kRegimes> out{};
    for (const auto &w : s.paired)
        for (int r = 0; r < kRegimes; ++r)
            out[static_cast<std::size_t>(r)].add(w[policy][static_cast<std::size_t>(r)]);
    return out;
}

Summary mean_over_windows(const FailureStudy::Size &s, std::size_t policy) {
    std::vector<Summary> v;
    for (const auto &w : s.rows)
        v.push_back(w[policy]);
    return mean_of(v);
}

}  // namespace

std::optional<InputError> plan_failures(FailureStudy &study, bool quick, int windows,
                                        std::vector<std::function<void()>> &tasks) {
    auto trace = load_fault_trace(data_dir() + "/failures/infinitehbd-fault-trace.json", kPopulation);
    if (!trace)
        return trace.error();
    study.trace = std::move(trace).value();
    study.policies = kStudyPolicies;
    const FaultTrace &f = study.trace;
    study.split_day = f.first_day + (f.last_day - f.first_day) * 2 / 3;

    // The learned model: trained at the population's size, judged at every size studied.
    study.train_hosts = quick ? 64 : kPopulation;
    // Every size with the same seed (1): its trace mapping and its samples.
    auto judged_at = [&](int hosts, bool train) -> std::optional<InputError> {
        auto samples = risk_study_samples(f, hosts, study.split_day, 1);
        if (!samples)
            return samples.error();
        Judgement j;
        if (train)
            study.model = train_and_judge(f, hosts, study.split_day, *samples, TrainOptions{}, j);
        else
            j = judge(study.model, samples->before, samples->after, &samples->pairs);
        study.judged.push_back({hosts, j});
        return std::nullopt;
    };
    if (auto e = judged_at(study.train_hosts, true))
        return e;

    const std::vector<std::pair<int, int>> sizes =
        quick ? std::vector<std::pair<int, int>>{{16, 1}, {64, 1}}
              : std::vector<std::pair<int, int>>{{64, 4}, {1024, 16}};
    study.sizes.resize(sizes.size());
    for (std::size_t k = 0; k < sizes.size(); ++k) {
        auto &s = study.sizes[k];
        s.hosts = sizes[k].first;
        auto prepared = prepare(study_spec(quick, s.hosts, sizes[k].second));
        if (!prepared)
            return prepared.error();
        s.scenario.emplace(std::move(prepared).value());
        if (s.hosts != study.train_hosts)  // the model judged on this size too
            if (auto e = judged_at(s.hosts, false))
                return e;
        // Windows evenly over the held-out days, each with kWindowDays of trace after it.
        const double last_start = std::max(study.split_day, f.last_day - kWindowDays);
        s.rows.assign(static_cast<std::size_t>(windows), std::vector<Summary>(kStudyPolicies.size()));
        s.paired.assign(static_cast<std::size_t>(windows),
                        std::vector<std::array<PairedTally, kRegimes>>(kStudyPolicies.size()));
        s.faults.assign(static_cast<std::size_t>(windows), 0);
        for (int w = 0; w < windows; ++w) {
            const double start =
                study.split_day + (last_start - study.split_day) * w / std::max(windows - 1, 1);
            s.starts.push_back(start);
            auto replay = replay_faults(f, s.scenario->cluster.graph, FaultMapping::kRack, start,
                                        kWindowDays, static_cast<std::uint64_t>(w + 1));
            SimOptions o;
            o.engine = deterministic_engine_options();
            o.seed = static_cast<std::uint64_t>(w + 1);
            o.failures.checkpoint_s = 3600;
            o.failures.replayed = replay.faults;
            o.failures.history = replay.history;
            o.paired = true;
            o.learned = &study.model;
            for (std::size_t p = 0; p < kStudyPolicies.size(); ++p)
                tasks.push_back([&study, k, w, p, o] {
                    auto &sz = study.sizes[k];
                    const Scenario &sc = *sz.scenario;
                    RunResult r = simulate(sc.cluster, sc.jobs.jobs, sc.steps, o, kStudyPolicies[p]);
                    evaluate_paired(r, o.failures.checkpoint_s);
                    sz.rows[static_cast<std::size_t>(w)][p] =
                        summarize(r, sc.cluster.max_gpus_per_host);
                    sz.paired[static_cast<std::size_t>(w)][p] = tally_paired(r.paired);
                    if (p == 0)
                        sz.faults[static_cast<std::size_t>(w)] = static_cast<int>(r.failures.size());
                });
        }
    }
    return std::nullopt;
}

FailureHeadline failure_headline(const FailureStudy &study, std::size_t size) {
    const auto &s = study.sizes[size];
    const std::size_t e = index_of(study.policies, "engine"), b = index_of(study.policies, "engine-norisk");
    FailureHeadline h;
    auto t = window_tally(s, e, b);
    for (int r = 0; r < kRegimes; ++r) {
        h.window_wins[static_cast<std::size_t>(r)] = t[static_cast<std::size_t>(r)][0];
        h.window_losses[static_cast<std::size_t>(r)] = t[static_cast<std::size_t>(r)][2];
    }
    h.paired = pooled(s, e);
    h.lost_engine = mean_over_windows(s, e).lost_gpu_h_total();
    h.lost_suite = mean_over_windows(s, index_of(study.policies, "suite")).lost_gpu_h_total();
    h.lost_tree = mean_over_windows(s, index_of(study.policies, "tree-bestfit")).lost_gpu_h_total();
    return h;
}

namespace {

// The learned risk model: how it was trained and how it was judged.
std::string learned_model_section(const FailureStudy &study) {
    std::string md;
    auto line = [&](const std::string &s = "") { md += s + "\n"; };
    line("### The learned risk model");
    line();
    const auto &i = study.model.info;
    line(fmt::format(
        "It rates a candidate placement: the job graph's shape, the hosts, leaf switches and "
        "NVLink domains it spans and their sizes, its hosts' failure history by class and that "
        "of the other hosts of its leaves (learned_risk.hpp; 16 inputs, 12 tanh units, {} "
        "parameters, trained in plain C++). Trained in this run (`ai-sim train-risk` does the "
        "same alone) on days {:g} to {:.1f} of the trace on {} hosts: {} placements of the "
        "Philly jobs of 2017-10-10 (their sizes, graphs and run times; half packed, half "
        "scattered, {} a day), {} of them stopped by a fault during their job's run; {} epochs, "
        "weight decay {:g}, chosen on the last quarter of those days. Judged on placements of "
        "the later days against the hand-written model's score for the same placement (scaled "
        "to the training days), by each one's chance that the placement is stopped during its "
        "job's run; and on pairs of places for one job at one moment (packed and scattered, as "
        "many a day), by how often each model, where one of the two was hit, rated the spared "
        "one lower: the choice placement makes.",
        LearnedRisk::kParameters, i.train_from_day, i.train_to_day, study.train_hosts,
        i.samples, risk_samples_per_day(study.train_hosts), i.positives, i.epochs,
        i.weight_decay));
    line();
    line("| hosts | AUC, learned | hand-written | log-loss, learned | hand-written | "
         "pairs, one of two hit | spared rated lower, learned | hand-written | learned better on |");
    line("|---:|---:|---:|---:|---:|---:|---:|---:|---|");
    for (const auto &[hosts, j] : study.judged) {
        std::string better;
        auto add = [&](bool won, const char *what) {
            if (won)
                better += (better.empty() ? "" : ", ") + std::string(what);
        };
        add(j.better_auc(), "AUC");
        add(j.better_log_loss(), "log-loss");
        add(j.better_choice(), "pairs");
        line(fmt::format("| {}{} | {:.4f} | {:.4f} | {:.5f} | {:.5f} | {} | {} | {} | {} |", hosts,
                         hosts == study.train_hosts ? " (trained)" : "", j.auc, j.auc_hand_written,
                         j.log_loss, j.log_loss_hand_written, j.pairs,
                         percent_or(j.pairs_accuracy, "-"),
                         percent_or(j.pairs_accuracy_hand_written, "-"),
                         better.empty() ? "nothing" : better));
    }
    line();
    line(i.beats_hand_written
             ? "On the size it was trained on the learned model beats the hand-written model: "
               "the plugin would use it (RiskModel=)."
             : "On the size it was trained on it does not beat the hand-written model on all "
               "three counts: the plugin would not use it (RiskModel= refuses such a file), and "
               "`engine-learned` below shows what it would have done.");
    line();
    return md;
}

// One cluster size of the replay: its windows, what each policy lost, window by window
// and decision by decision.
std::string failure_size_section(const FailureStudy &study, std::size_t k) {
    std::string md;
    auto line = [&](const std::string &s = "") { md += s + "\n"; };
    const auto &s = study.sizes[k];
    line(fmt::format("### {} hosts", s.hosts));
    line();
    for (const auto &l : s.scenario->lines)
        line("- " + l);
    int faults = 0;
    for (int n : s.faults)
        faults += n;
    line(fmt::format("- {} windows starting on days {:.1f} to {:.1f} (in the held-out part), "
                     "{} failures met in all; checkpoints every hour; half of the "
                     "elastic-capable jobs elastic; no contention",
                     s.starts.size(), s.starts.front(), s.starts.back(), faults));
    line();
    std::vector<Summary> mean;
    for (std::size_t p = 0; p < study.policies.size(); ++p)
        mean.push_back(mean_over_windows(s, p));
    line("Over the windows (failures and jobs stopped: totals; lost GPU-hours: mean per window):");
    line();
    md += failures_table(mean, true);
    line();
    md += "| policy | mean JCT h | p99 JCT h |\n|---|---:|---:|\n";
    for (const auto &m : mean)
        md += fmt::format("| {} | {:.3f} | {:.2f} |\n", m.policy, m.mean_jct_h, m.p99_jct_h);
    line();
    const auto h = failure_headline(study, k);
    line(fmt::format(
        "Lost GPU-hours per window: tree best fit {:.1f}, the engine {:.1f} ({}), the suite with "
        "ai-recover {:.1f} ({}).",
        h.lost_tree, h.lost_engine,
        h.lost_tree > 0 ? fmt::format("{:+.1f}%", 100 * (h.lost_engine - h.lost_tree) / h.lost_tree) : "n/a",
        h.lost_suite,
        h.lost_tree > 0 ? fmt::format("{:+.1f}%", 100 * (h.lost_suite - h.lost_tree) / h.lost_tree) : "n/a"));
    line();
    line("Window by window, engine against engine-norisk (a win: fewer GPU-hours lost by the "
         "jobs of the regime in the window):");
    line();
    line("| regime | wins | ties | losses | win rate |");
    line("|---|---:|---:|---:|---:|");
    const auto wt = window_tally(s, index_of(study.policies, "engine"),
                                 index_of(study.policies, "engine-norisk"));
    for (int r : {1, 2, 0}) {
        const auto &t = wt[static_cast<std::size_t>(r)];
        line(fmt::format("| {} | {} | {} | {} | {} |", to_string(static_cast<Regime>(r)), t[0],
                         t[1], t[2],
                         percent_or(win_rate(t[0], t[2]), "-")));
    }
    line();
    for (const char *aware : {"engine", "engine-learned"}) {
        line(fmt::format("Decision by decision, {} against engine-norisk on the same state:", aware));
        line();
        md += paired_table(aware, pooled(s, index_of(study.policies, aware)), true);
        line();
    }
    return md;
}

}  // namespace

std::string failures_section(const FailureStudy &study) {
    std::string md;
    auto line = [&](const std::string &s = "") { md += s + "\n"; };
    const FaultTrace &f = study.trace;
    int kinds[kFailureClasses] = {};
    for (const auto &x : f.faults)
        ++kinds[static_cast<int>(x.kind)];
    std::string by_class;
    for (int c = 0; c < kFailureClasses; ++c)
        by_class += fmt::format("{}{} {}", c ? ", " : "", kinds[c], to_string(static_cast<FailureClass>(c)));
    line(fmt::format(
        "The InfiniteHBD fault trace (../shared/data/failures): {} faults of {} of the {} servers "
        "the study followed, days {:.1f} to {:.1f}, by class {}; a fault lasts its own time (median "
        "under a day, some for months), network faults take the server's link, not the server. "
        "Its servers go onto hosts by rack: servers that fault at the same moment go to one leaf "
        "switch, the others at random (with the window's seed); a cluster larger than the "
        "population takes it again, each copy a third of the trace later. Faults before a window "
        "are the failure history the plugin would have kept.",
        f.faults.size(), f.servers.size(), f.population, f.first_day, f.last_day, by_class));
    line();
    md += learned_model_section(study);
    for (std::size_t k = 0; k < study.sizes.size(); ++k)
        md += failure_size_section(study, k);
    return md;
}

std::string percent_or(std::optional<double> rate, std::string_view none) {
    return rate ? fmt::format("{:.0f}%", 100 * *rate) : std::string(none);
}

nlohmann::json rate_json(std::optional<double> rate) {
    return rate ? nlohmann::json(*rate) : nlohmann::json();
}

nlohmann::json failures_json(const FailureStudy &study) {
    nlohmann::json j;
    j["trace"] = "infinitehbd-fault-trace.json";
    j["mapping"] = "rack";
    j["learned_model"] = nlohmann::json::parse(study.model.to_json());
    j["learned_judged"] = nlohmann::json::array();
    for (const auto &[hosts, x] : study.judged)
        j["learned_judged"].push_back({{"hosts", hosts},
                                       {"auc", x.auc},
                                       {"auc_hand_written", x.auc_hand_written},
                                       {"log_loss", x.log_loss},
                                       {"log_loss_hand_written", x.log_loss_hand_written},
                                       {"pairs", x.pairs},
                                       {"pairs_accuracy", rate_json(x.pairs_accuracy)},
                                       {"pairs_accuracy_hand_written",
                                        rate_json(x.pairs_accuracy_hand_written)}});
    j["sizes"] = nlohmann::json::array();
    for (std::size_t k = 0; k < study.sizes.size(); ++k) {
        const auto &s = study.sizes[k];
        nlohmann::json size{{"hosts", s.hosts}, {"windows", s.starts}, {"faults", s.faults}};
        auto paired = [&](const std::string &p) {
            nlohmann::json out;
            const auto t = pooled(s, index_of(study.policies, p));
            for (int r = 0; r < kRegimes; ++r) {
                const auto &x = t[static_cast<std::size_t>(r)];
                auto [lo, hi] = x.interval();
                out[kRegimeKeys[r]] = {{"decisions", x.decisions}, {"differ", x.differ},
                                       {"wins", x.wins},           {"losses", x.losses},
                                       {"ties", x.ties},           {"win_rate", rate_json(x.win_rate())},
                                       {"interval", {lo, hi}}};
            }
            return out;
        };
        auto windows = [&](const std::string &p) {
            nlohmann::json out;
            const auto t = window_tally(s, index_of(study.policies, p), index_of(study.policies, "engine-norisk"));
            for (int r = 0; r < kRegimes; ++r)
                out[kRegimeKeys[r]] = {{"wins", t[static_cast<std::size_t>(r)][0]},
                                       {"ties", t[static_cast<std::size_t>(r)][1]},
                                       {"losses", t[static_cast<std::size_t>(r)][2]},
                                       {"win_rate", rate_json(win_rate(t[static_cast<std::size_t>(r)][0],
                                                                       t[static_cast<std::size_t>(r)][2]))}};
            return out;
        };
        size["win_rate"] = {{"engine", windows("engine")}, {"engine-learned", windows("engine-learned")}};
        size["paired"] = {{"engine", paired("engine")}, {"engine-learned", paired("engine-learned")}};
        size["policies"] = nlohmann::json::array();
        for (std::size_t p = 0; p < study.policies.size(); ++p) {
            const Summary m = mean_over_windows(s, p);
            size["policies"].push_back({{"policy", study.policies[p]},
                                        {"lost_gpu_h_per_window", m.lost_gpu_h_total()},
                                        {"mean_jct_h", m.mean_jct_h},
                                        {"p99_jct_h", m.p99_jct_h},
                                        {"failures", m.failures},
                                        {"jobs_stopped", m.jobs_stopped}});
        }
        j["sizes"].push_back(std::move(size));
    }
    // The headline: the first size's window-by-window win rate, per regime.
    if (!study.sizes.empty()) {
        j["win_rate"] = j["sizes"][0]["win_rate"];
        j["paired"] = j["sizes"][0]["paired"];
    }
    return j;
}

}  // namespace slurm_ai::sim
