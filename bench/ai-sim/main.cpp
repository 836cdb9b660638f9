// ai-sim: replays a job trace on a simulated Slurm cluster whose select plugin places jobs
// with the placement engine's policies, and prints what each policy gives.
//   ai-sim run     one scenario, every policy (or those named), a table of figures
//   ai-sim bench   one day of trace on a 10,000-GPU cluster: wall time, peak memory, and
//                  each policy's time against slurm-default's in the same run
//   ai-sim report  the evaluation: writes docs/evaluation.md and its figures
// Exit status: 0 success, 1 bad input (the message names the file, line and field),
// 2 bad usage.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iostream>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "metrics.hpp"
#include "output.hpp"
#include "report.hpp"
#include "report_failures.hpp"
#include "scenario.hpp"
#include "slurm_ai/placement/placement_engine.hpp"
#include "targets.hpp"
#include "task_pool.hpp"
#include "train_place.hpp"
#include "train_risk.hpp"

using namespace slurm_ai;
using namespace slurm_ai::sim;

namespace {

const std::vector<std::string> kPolicies{"slurm-default", "tree-bestfit", "engine",
                                         "engine-norisk", "suite"};

// CLI11's own number checks print their range's bounds as 300-digit numbers.
CLI::Validator number_check(bool zero_ok) {
    return CLI::Validator(
        [zero_ok](std::string &text) {
            try {
                std::size_t used = 0;
                double v = std::stod(text, &used);
                if (used == text.size() && (v > 0 || (zero_ok && v == 0)))
                    return std::string();
            } catch (const std::exception &) {
            }
            return "expected a " + std::string(zero_ok ? "number >= 0" : "positive number") +
                   ", got '" + text + "'";
        },
        zero_ok ? "NUMBER>=0" : "NUMBER>0");
}
const CLI::Validator kPositive = number_check(false);
const CLI::Validator kNonNegative = number_check(true);

struct Cli {
    ScenarioSpec spec;
    SimOptions sim;
    std::string request = "flexible";
    std::string patterns;
    double repair_h = 4, checkpoint_h = 1;
    std::vector<std::string> policies;
    int threads = 2;
    bool one_switch = false;
    bool cost_model_only = false;
    std::string elastic_rule = "goodput";
    std::string recovery = "suite";
    std::string elastic_start = "goodput";
    std::string fault_trace, fault_mapping = "rack";
    double fault_start_day = -1;
    int fault_population = 400;
    bool paired = false;
    std::string jobs_csv;
};

void add_failure_and_scheduling_options(CLI::App &app, Cli &c);

// The trace, the cluster and the jobs' requests; then the failure and scheduling options.
void add_scenario_options(CLI::App &app, Cli &c) {
    auto &s = c.spec;
    app.add_option("--trace", s.trace,
                   "Job trace CSV (default: Philly, comm-measurements/philly.csv)");
    app.add_option("--durations", s.durations,
                   "Trace whose durations jobs without one draw from (default: philly.csv)");
    app.add_option("--start", s.start,
                   "Window start: YYYY-MM-DD for a dated trace, else seconds (default: its start)");
    app.add_option("--days", s.days, "Window length in days")
        ->check(kPositive)
        ->capture_default_str();
    app.add_option("--overlay", s.overlay,
                   "Replay this many consecutive windows laid over one (more load)")
        ->check(CLI::Range(1, 10000))
        ->capture_default_str();
    app.add_option("--max-jobs", s.max_jobs, "Only the first N jobs of the window");
    app.add_option("--duration-scale", s.duration_scale, "Multiply every duration by this")
        ->capture_default_str();
    app.add_option("--node", s.cluster.nodes,
                   "Node topology (hwloc or NCCL XML) of every host, or HOSTLIST=FILE "
                   "(default: hwloc/nvidiaDGX2.xml)");
    app.add_option("--fabric", s.cluster.fabric, "A fabric file to simulate as it is");
    app.add_option("--map", s.cluster.guid_map, "GUID map of --fabric");
    app.add_option("--shape-of", s.cluster.shape_of,
                   "A fabric whose shape is repeated to --hosts (default: fabric/X5.topofile)");
    app.add_option("--shape-map", s.cluster.shape_map, "GUID map of --shape-of");
    app.add_flag("--one-switch", c.one_switch,
                 "All hosts under one switch (the measurement testbed) instead of --shape-of");
    app.add_option("--hosts", s.cluster.hosts, "Hosts of a generated fabric")
        ->capture_default_str();
    app.add_option("--host-gbps", s.cluster.host_gbps, "Each host's link, Gb/s")
        ->check(kPositive)
        ->capture_default_str();
    app.add_option("--shape-profile", s.cluster.shape_profile,
                   "Measured step times by shape for the engine (ShapeProfile=): a file, "
                   "'measured' (from --measurements), or 'measured-without:MODEL,...'");
    app.add_option("--measurements", s.measurements,
                   "Directory of measured models (default: comm-measurements)");
    app.add_flag("--cost-model-only", c.cost_model_only,
                 "Step times from the cost model for every job, even of a measured model");
    app.add_option("--comm-share", s.comm_share,
                   "Communication share of a cost-model job's step on its ideal placement "
                   "(default: the measurements' median)")
        ->check(CLI::Range(0.0, 0.99));
    app.add_option("--request", c.request, "flexible (--gpus=G) or packed (-N n --gpus-per-node)")
        ->check(CLI::IsMember({"flexible", "packed"}))
        ->capture_default_str();
    app.add_option("--patterns", c.patterns,
                   "Shares of allreduce,pipeline,ps for multi-GPU jobs of no measured model "
                   "(default 0.7,0.2,0.1)");
    app.add_option("--limit-factor", s.jobs.limit_factor, "Time limit = duration x this")
        ->check(kPositive)
        ->capture_default_str();
    app.add_option("--seed", c.sim.seed, "Seed of the failures, patterns and drawn durations")
        ->capture_default_str();
    add_failure_and_scheduling_options(app, c);
}

// Failures (injected or replayed), recovery, backfill, contention and the suite's daemons.
void add_failure_and_scheduling_options(CLI::App &app, Cli &c) {
    auto &s = c.spec;
    app.add_option("--failure-rate", c.sim.failures.node_rate_per_day,
                   "Node failures per node per day")
        ->check(kNonNegative);
    app.add_option("--flaky-share", c.sim.failures.flaky_share,
                   "Share of nodes failing --flaky-factor times as often")
        ->check(CLI::Range(0.0, 1.0));
    app.add_option("--flaky-factor", c.sim.failures.flaky_factor,
                   "How many times as often flaky nodes fail")
        ->check(kNonNegative);
    app.add_option("--fault-trace", c.fault_trace,
                   "Replay a real fault trace (JSON, as failures/infinitehbd-fault-trace.json)");
    app.add_option("--fault-mapping", c.fault_mapping,
                   "Trace servers onto hosts: rack (simultaneous faults on one leaf) or random")
        ->check(CLI::IsMember({"rack", "random"}))
        ->capture_default_str();
    app.add_option("--fault-start", c.fault_start_day,
                   "The trace's day at the simulation's start (default: a day drawn with the "
                   "seed, leaving 30 days of trace after it)")
        ->check(kNonNegative);
    app.add_option("--fault-population", c.fault_population,
                   "Servers the trace followed, with or without faults")
        ->check(CLI::Range(1, 1000000))
        ->capture_default_str();
    app.add_flag("--paired", c.paired,
                 "At every start under a searched policy, also place the job as engine-norisk "
                 "would on the same state, and compare what each loses to the failures that "
                 "follow");
    app.add_option("--repair-h", c.repair_h, "Hours a failed node stays down")
        ->check(kNonNegative)
        ->capture_default_str();
    app.add_option("--checkpoint-h", c.checkpoint_h, "Hours between a job's checkpoints (0: none)")
        ->check(kNonNegative)
        ->capture_default_str();
    app.add_option("--bf-interval", c.sim.backfill.interval_s, "Backfill interval, s")
        ->check(kPositive)
        ->capture_default_str();
    app.add_option("--bf-window", c.sim.backfill.window_s, "Backfill window, s")
        ->check(kPositive)
        ->capture_default_str();
    app.add_option("--bf-max-job-test", c.sim.backfill.max_job_test,
                   "Jobs each backfill pass considers")
        ->check(CLI::Range(1, 1000000))
        ->capture_default_str();
    app.add_flag("--contention", c.sim.contention,
                 "Jobs share the leaves' uplinks: each job's communication slows with the "
                 "others' traffic (every policy); the engine places with it in view");
    app.add_option("--elastic-share", s.jobs.elastic_share,
                   "Share of the jobs that can be elastic submitted elastic "
                   "(-N n/2-n, MIN:MAX = n/2:2n)")
        ->check(CLI::Range(0.0, 1.0))
        ->capture_default_str();
    app.add_option("--suite-elastic", c.elastic_rule,
                   "The suite's ai-elasticd rule: goodput, priority or none")
        ->check(CLI::IsMember({"goodput", "priority", "none"}))
        ->capture_default_str();
    app.add_option("--suite-recovery", c.recovery,
                   "How the suite recovers from a failure: suite (ai-recover) or slurm")
        ->check(CLI::IsMember({"suite", "slurm"}))
        ->capture_default_str();
    app.add_flag("--suite-plans-backfill", c.sim.suite.plan_with_engine,
                 "The suite's backfill reservations placed by the engine too");
    app.add_option("--elastic-start", c.elastic_start,
                   "The select plugin's ElasticStart (the engine's policies): goodput or max")
        ->check(CLI::IsMember({"goodput", "max"}))
        ->capture_default_str();
    app.add_option("--min-gain", c.sim.suite.min_gain,
                   "Goodput rule (ElasticMinGain): the least goodput per GPU a grow must add, "
                   "and each node of an elastic job's start")
        ->check(CLI::Range(0.0, 1.0))
        ->capture_default_str();
    app.add_option("--threads", c.threads, "Policies simulated at once")
        ->check(CLI::Range(1, 64))
        ->capture_default_str();
}

// The options that need more than a plain value; an error names the option.
std::optional<InputError> finish_options(Cli &c) {
    c.spec.jobs.request = c.request == "packed" ? RequestStyle::kPacked : RequestStyle::kFlexible;
    c.spec.jobs.seed = c.sim.seed;
    c.spec.measured_steps = !c.cost_model_only;
    c.spec = with_defaults(c.spec);
    if (c.one_switch) {
        c.spec.cluster.fabric.clear();
        c.spec.cluster.shape_of.clear();
        c.spec.cluster.shape_map.clear();
    }
    if (!c.patterns.empty()) {
        PatternMix m{0, 0, 0};
        double *slot[] = {&m.allreduce, &m.pipeline, &m.ps};
        std::size_t pos = 0;
        for (int i = 0; i < 3; ++i) {
            auto next = c.patterns.find(',', pos);
            std::string cell =
                c.patterns.substr(pos, next == std::string::npos ? next : next - pos);
            try {
                std::size_t used = 0;
                *slot[i] = std::stod(cell, &used);
                if (used != cell.size() || *slot[i] < 0)
                    throw std::invalid_argument(cell);
            } catch (const std::exception &) {
                return InputError{"--patterns", c.patterns,
                                  "three shares >= 0 for allreduce,pipeline,ps, e.g. 0.7,0.2,0.1",
                                  "", 0};
            }
            if ((next == std::string::npos) != (i == 2))
                return InputError{"--patterns", c.patterns,
                                  "three shares >= 0 for allreduce,pipeline,ps, e.g. 0.7,0.2,0.1",
                                  "", 0};
            pos = next + 1;
        }
        c.spec.jobs.patterns = m;
    }
    for (const auto &p : c.policies)
        if (!known_sim_policy(p))
            return InputError{"--policy", p, "a policy of the placement engine, or suite", "", 0};
    c.sim.suite.elastic =
        c.elastic_rule == "none" ? std::nullopt : elastic_rule(c.elastic_rule);
    c.sim.suite.recovery = c.recovery == "slurm" ? Recovery::kSlurm : Recovery::kSuite;
    c.sim.goodput_start = c.elastic_start == "goodput";
    if (c.policies.empty())
        c.policies = kPolicies;
    c.sim.failures.repair_s = c.repair_h * 3600;
    c.sim.failures.checkpoint_s = c.checkpoint_h * 3600;
    c.sim.engine = deterministic_engine_options();
    return std::nullopt;
}

// Runs the policies, `threads` at a time; results in the order of the policies.
std::vector<RunResult> run_policies(const Scenario &s, const SimOptions &o,
                                    const std::vector<std::string> &policies, int threads) {
    std::vector<RunResult> out(policies.size());
    std::vector<std::function<void()>> tasks;
    for (std::size_t i = 0; i < policies.size(); ++i)
        tasks.push_back(
            [&, i] { out[i] = simulate(s.cluster, s.jobs.jobs, s.steps, o, policies[i]); });
    run_tasks(tasks, std::max(threads, 1));
    return out;
}

int cmd_run(Cli &c) {
    auto scenario = prepare(c.spec);
    if (!scenario) {
        std::cerr << "ai-sim: " << scenario.error().message() << '\n';
        return 1;
    }
    const Scenario &s = scenario.value();
    for (const auto &line : s.lines)
        std::cout << line << '\n';
    std::cout << fmt::format(
        "scheduling: main scheduler on every event, backfill every {:g} s (window {:g} h, {} jobs "
        "per pass); seed {}\n",
        c.sim.backfill.interval_s, c.sim.backfill.window_s / 3600, c.sim.backfill.max_job_test,
        c.sim.seed);
    std::cout << suite_line(c.sim, s.jobs) << '\n';
    if (!c.fault_trace.empty()) {
        auto trace = load_fault_trace(c.fault_trace, c.fault_population);
        if (!trace) {
            std::cerr << "ai-sim: " << trace.error().message() << '\n';
            return 1;
        }
        const FaultTrace &t = trace.value();
        double start = c.fault_start_day;
        if (start < 0) {
            std::mt19937_64 rng(c.sim.seed ^ 0x7374617274ull);
            std::uniform_real_distribution<double> day(t.first_day, std::max(t.first_day, t.last_day - 30));
            start = day(rng);
        }
        auto r = replay_faults(t, s.cluster.graph,
                               c.fault_mapping == "random" ? FaultMapping::kRandom : FaultMapping::kRack,
                               start, t.last_day - start, c.sim.seed);
        c.sim.failures.replayed = r.faults;
        c.sim.failures.history = r.history;
        std::cout << fmt::format(
            "faults: {} ({} faults of {} of {} servers over days {:.1f}-{:.1f}), mapped by {} from "
            "day {:.1f}: {} faults in the simulation's time, {} before it in the failure "
            "history\n",
            c.fault_trace.substr(c.fault_trace.rfind('/') + 1), t.faults.size(), t.servers.size(),
            t.population, t.first_day, t.last_day, c.fault_mapping, start, r.faults.size(),
            r.history.size());
    }
    c.sim.paired = c.paired;
    if (c.sim.failures.node_rate_per_day > 0)
        std::cout << fmt::format(
            "failures: {:g} per node per day, {:g} of the nodes {:g}x as often; down {:g} h; "
            "checkpoints every {:g} h\n",
            c.sim.failures.node_rate_per_day, c.sim.failures.flaky_share,
            c.sim.failures.flaky_factor, c.repair_h, c.checkpoint_h);
    auto runs = run_policies(s, c.sim, c.policies, c.threads);
    std::vector<Summary> rows;
    for (const auto &r : runs)
        rows.push_back(summarize(r, s.cluster.max_gpus_per_host));
    if (!c.jobs_csv.empty()) {
        if (auto err = write_output(c.jobs_csv, jobs_csv(s.jobs.jobs, runs))) {
            std::cerr << "ai-sim: " << *err << '\n';
            return 1;
        }
    }
    std::cout << '\n' << results_table(rows, false);
    std::cout << "\nstep times by source (jobs that started):\n" << sources_table(rows, false);
    if (auto f = failures_table(rows, false); !f.empty())
        std::cout << "\nfailures:\n" << f;
    for (auto &r : runs)
        if (!r.paired.empty()) {
            evaluate_paired(r, c.sim.failures.checkpoint_s);
            std::cout << "\npaired decisions, " << r.policy << " against engine-norisk:\n"
                      << paired_table(r.policy, tally_paired(r.paired), false);
        }
    return 0;
}

int cmd_bench(Cli &c, int gpus) {
    auto &spec = c.spec;
    // Hosts enough for `gpus` GPUs of the node file's size.
    ClusterSpec one = spec.cluster;
    one.hosts = 1;
    auto node = build_cluster(one);
    if (!node) {
        std::cerr << "ai-sim: " << node.error().message() << '\n';
        return 1;
    }
    spec.cluster.hosts = (gpus + node->max_gpus_per_host - 1) / node->max_gpus_per_host;
    auto scenario = prepare(spec);
    if (!scenario) {
        std::cerr << "ai-sim: " << scenario.error().message() << '\n';
        return 1;
    }
    const Scenario &s = scenario.value();
    for (const auto &line : s.lines)
        std::cout << line << '\n';
    std::cout << fmt::format("peak RSS after loading: {} MiB; one policy at a time, one thread\n\n",
                             peak_rss_mib());
    std::cout << fmt::format("{:<14} {:>9} {:>9} {:>11} {:>12} {:>10} {:>9} {:>12}\n", "policy",
                             "jobs", "done", "wall s", "placements", "place ms", "RSS MiB",
                             "vs default");
    double baseline = 0;
    for (const auto &p : c.policies) {
        auto t0 = std::chrono::steady_clock::now();
        RunResult r = simulate(s.cluster, s.jobs.jobs, s.steps, c.sim, p);
        double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (p == "slurm-default")
            baseline = wall;
        auto sum = summarize(r, s.cluster.max_gpus_per_host);
        std::cout << fmt::format("{:<14} {:>9} {:>9} {:>11.2f} {:>12} {:>10.0f} {:>9} {:>12}\n", p,
                                 sum.jobs, sum.finished, wall, r.placements_tried, r.placement_ms,
                                 peak_rss_mib(),
                                 baseline > 0 ? fmt::format("{:.2f}x", wall / baseline) : "-");
    }
    return 0;
}

}  // namespace

struct TrainCli {
    std::string trace, out;
    int population = 400, hosts = 0;
    double split_day = -1;
    std::vector<int> eval_hosts{64, 1024};
    TrainOptions train;
};

int cmd_train_risk(TrainCli &t) {
    auto trace = load_fault_trace(t.trace, t.population);
    if (!trace) {
        std::cerr << "ai-sim: " << trace.error().message() << '\n';
        return 1;
    }
    const FaultTrace &f = trace.value();
    const double split = t.split_day >= 0 ? t.split_day : f.first_day + (f.last_day - f.first_day) * 2 / 3;
    if (split <= f.first_day || split >= f.last_day) {
        std::cerr << "ai-sim: --split-day=" << split << ": expected a day within the trace ("
                  << f.first_day << " to " << f.last_day << ")\n";
        return 1;
    }
    const int hosts = t.hosts > 0 ? t.hosts : f.population;
    const double from = std::floor(f.first_day), to = f.last_day + 1;
    auto samples = risk_study_samples(f, hosts, split, t.train.seed);
    if (!samples) {
        std::cerr << "ai-sim: " << samples.error().message() << '\n';
        return 1;
    }
    const RiskSamples &train = samples->before, &test = samples->after;
    auto t0 = std::chrono::steady_clock::now();
    Judgement j;
    LearnedRisk model = train_and_judge(f, hosts, split, *samples, t.train, j);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::cout << fmt::format(
        "trained on {} hosts (the trace's servers by rack on X5's shape) and the Philly jobs of "
        "2017-10-10, days {:g}-{:g}: {} placements, {} stopped by a fault; {} epochs and weight "
        "decay {:g} (chosen on the training days' last quarter); {:.1f} s\n",
        hosts, from, split, train.x.size(), train.positives(), model.info.epochs,
        model.info.weight_decay, secs);
    std::cout << fmt::format("{:<10} {:>6} {:>9} {:>9} {:>14} {:>10} {:>14} {:>7} {:>12}\n",
                             "held out", "hosts", "samples", "stopped", "AUC learned", "hand",
                             "log-loss l/h", "pairs", "spared l/h");
    auto row = [&](int n, const RiskSamples &s, const Judgement &x) {
        std::cout << fmt::format(
            "{:<10} {:>6} {:>9} {:>9} {:>14.4f} {:>10.4f} {:>7.5f}/{:.5f} {:>7} {:>12}\n",
            fmt::format("{:g}-{:g}", split, to), n, s.x.size(), s.positives(), x.auc,
            x.auc_hand_written, x.log_loss, x.log_loss_hand_written, x.pairs,
            percent_or(x.pairs_accuracy, "-") + "/" + percent_or(x.pairs_accuracy_hand_written, "-"));
    };
    row(hosts, test, j);
    for (int n : t.eval_hosts) {
        auto other = risk_study_samples(f, n, split, t.train.seed);
        if (!other) {
            std::cerr << "ai-sim: " << other.error().message() << '\n';
            return 1;
        }
        row(n, other->after, judge(model, other->before, other->after, &other->pairs));
    }
    std::cout << (j.beats() ? "the learned model beats the hand-written one on the held-out days"
                            : "the learned model does NOT beat the hand-written one on the "
                              "held-out days: the select plugin will not use it")
              << '\n';
    if (!t.out.empty()) {
        if (auto err = write_output(t.out, model.to_json())) {
            std::cerr << "ai-sim: " << *err << '\n';
            return 1;
        }
        std::cout << "wrote " << t.out << '\n';
    }
    return 0;
}

// train-place's own options (the scenario's are add_scenario_options').
void add_train_place_options(CLI::App &app, TrainPlaceOptions &po, std::string &out) {
    app.add_option("--windows", po.windows, "Training windows, one after the other from --start")
        ->check(CLI::Range(1, 1000))
        ->capture_default_str();
    app.add_option("--validation", po.validation,
                   "Of the training windows, the last ones that only choose the best round")
        ->check(CLI::Range(0, 999))
        ->capture_default_str();
    app.add_option("--held-out", po.held_out,
                   "Judged windows at each size, after the training days")
        ->check(CLI::Range(1, 1000))
        ->capture_default_str();
    app.add_option("--sizes", po.sizes,
                   "Judged at these multiples of --hosts and --overlay (default 2 4 16)")
        ->check(CLI::Range(1, 1000));
    app.add_option("--width", po.width, "Width of the network")
        ->check(CLI::Range(1, kPlaceMaxWidth))
        ->capture_default_str();
    app.add_option("--imitation-epochs", po.imitation_epochs,
                   "Epochs of imitation of the engine's objective")
        ->check(CLI::Range(0, 10000))
        ->capture_default_str();
    app.add_option("--rounds", po.rounds,
                   "Rounds of policy gradient, each one episode per training window")
        ->check(CLI::Range(0, 10000))
        ->capture_default_str();
    app.add_option("--regularizer", po.regularizer,
                   "Weight of the SRR terms (decorrelation and KL to the standard normal); "
                   "0: none")
        ->check(CLI::Range(0.0, 100.0))
        ->capture_default_str();
    app.add_option("--learning-rate", po.learning_rate, "Adam's step size")
        ->check(kPositive)
        ->capture_default_str();
    app.add_option("--temperature", po.temperature,
                   "Softmax temperature of the policy-gradient episodes")
        ->check(kPositive)
        ->capture_default_str();
    app.add_option("--max-decisions", po.max_decisions, "Decisions kept per window and episode")
        ->check(CLI::Range(1, 10000000))
        ->capture_default_str();
    app.add_option("--out", out,
                   "Write the model here (JSON, PlacementModel= of ai_select.conf)")
        ->required();
}

int cmd_train_place(const Cli &c, TrainPlaceOptions o, const std::string &out) {
    o.spec = c.spec;
    o.sim = c.sim;
    o.seed = c.sim.seed;
    o.threads = c.threads;
    auto m = train_place(o, std::cout);
    if (!m) {
        std::cerr << "ai-sim: " << m.error().message() << '\n';
        return 1;
    }
    if (auto err = write_output(out, m->to_json())) {
        std::cerr << "ai-sim: " << *err << '\n';
        return 1;
    }
    std::cout << "judged: " << m->info.judged_text() << '\n'
              << (m->info.beats_engine()
                      ? "it beat the engine at every judged size: PlacementModel= will use it\n"
                      : "it did not beat the engine at every judged size: PlacementModel= "
                        "refuses it\n")
              << "wrote " << out << '\n';
    return 0;
}

int main(int argc, char **argv) {
    CLI::App app{"ai-sim: trace-driven simulation of the suite's placements against Slurm's"};
    app.require_subcommand(1);
    Cli c;

    auto *run = app.add_subcommand("run", "Simulate one scenario under every policy");
    add_scenario_options(*run, c);
    run->add_option("--policy", c.policies, "Policies to simulate (default: slurm-default, tree-bestfit, engine, engine-norisk, suite)");
    run->add_option("--jobs-csv", c.jobs_csv,
                    "Also write every job's figures under every policy, one row each (CSV)");

    auto *bench = app.add_subcommand(
        "bench",
        "One day of trace on a 10,000-GPU cluster: time and memory per policy (default: Philly "
        "from 2017-10-10, 40 days laid over one)");
    int bench_gpus = 10000;
    add_scenario_options(*bench, c);
    bench->add_option("--gpus", bench_gpus, "Cluster size in GPUs (DGX-2 hosts)")
        ->capture_default_str();
    bench->add_option("--policy", c.policies, "Policies (default: slurm-default, tree-bestfit, engine, engine-norisk, suite)");
    // The bench's own defaults, before its options are read.
    bench->preparse_callback([&c](std::size_t) {
        c.spec.start = "2017-10-10";
        c.spec.overlay = 40;
    });

    auto *train = app.add_subcommand(
        "train-risk", "Train the learned risk model on a fault trace and judge it on its later days");
    TrainCli tc;
    train->add_option("--fault-trace", tc.trace, "The fault trace (JSON)")->required();
    train->add_option("--fault-population", tc.population,
                      "Servers the trace followed, with or without faults")
        ->capture_default_str();
    train->add_option("--hosts", tc.hosts, "Hosts of the training cluster (default: the population)");
    train->add_option("--split-day", tc.split_day,
                      "Days before this train, after it judge (default: two thirds through)");
    train->add_option("--eval-hosts", tc.eval_hosts, "Other cluster sizes to judge it on")
        ->capture_default_str();
    train->add_option("--seed", tc.train.seed, "Seed of the initial weights and the mapping")
        ->capture_default_str();
    train->add_option("--out", tc.out, "Write the model here (JSON, RiskModel= of ai_select.conf)");

    auto *place = app.add_subcommand(
        "train-place",
        "Train the learned placement scorer on the simulator and judge it against the engine "
        "at larger cluster sizes (default windows: Philly from 2017-09-24)");
    TrainPlaceOptions po;
    std::string place_out;
    add_scenario_options(*place, c);
    add_train_place_options(*place, po, place_out);
    place->preparse_callback([&c](std::size_t) { c.spec.start = "2017-09-24"; });

    auto *targets = app.add_subcommand(
        "targets", "Judge the report's placement targets on one scenario of your choosing: every "
                   "variant (contention off and on; nothing, half and all elastic), Slurm's "
                   "policies, engine, suite and ideal; --elastic-share and --contention are the "
                   "matrix's");
    TargetsOptions to;
    add_scenario_options(*targets, c);
    targets->add_option("--name", to.name, "What the verdicts call the scenario")
        ->capture_default_str();
    targets->add_flag("--fabric-targets", to.fabric,
                      "Also the fabrics' targets: the engine alone 10% below the best Slurm "
                      "policy (contention on, nothing elastic), the suite 20% (headline)");
    targets->add_option("--json", to.json, "Also write the figures and verdicts as JSON");
    targets->add_option("--traces", to.traces,
                        "Several traces judged as one scenario, their figures averaged (as the "
                        "report's Pollux workloads); instead of --trace")
        ->excludes("--trace");

    auto *report = app.add_subcommand("report", "Run the evaluation and write its report");
    ReportOptions ro;
    report->add_option("--out", ro.markdown, "Markdown file to write")->required();
    report->add_option("--img", ro.image_dir, "Directory for the SVG figures")->required();
    report->add_option("--json", ro.json,
                       "Also write every figure as JSON: {\"scenarios\":[{\"name\":..., "
                       "\"policies\":[{\"policy\":..., \"mean_jct_h\":...}]}]}");
    report->add_option("--img-link", ro.image_link,
                       "How the markdown links the figures (default: relative to --out)");
    report->add_option("--seeds", ro.seeds, "Windows of the fault trace per cluster size in the failure study")
        ->check(CLI::Range(1, 1000))
        ->capture_default_str();
    report->add_option("--threads", ro.threads, "Simulations at once")
        ->check(CLI::Range(1, 64))
        ->capture_default_str();
    report->add_flag("--quick", ro.quick, "Smaller scenarios (for tests)");

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError &e) {
        return app.exit(e) == 0 ? 0 : 2;
    }
    try {
        if (*train)
            return cmd_train_risk(tc);
        if (*report)
            return write_report(ro);
        if (auto err = finish_options(c)) {
            std::cerr << "ai-sim: " << err->message() << '\n';
            return 1;
        }
        if (*bench)
            return cmd_bench(c, bench_gpus);
        if (*place)
            return cmd_train_place(c, po, place_out);
        if (*targets) {
            to.threads = c.threads;
            return judge_targets(c.spec, c.sim, to);
        }
        return cmd_run(c);
    } catch (const std::exception &e) {
        std::cerr << "ai-sim: internal error: " << e.what() << '\n';
        return 1;
    }
}
