// ai-elasticd: the suite's elasticity and gang daemon. It runs beside slurmctld (it reads
// the select plugin's records in StateSaveLocation) and, every ElasticInterval:
//   1. carries on the grows it started: merges each expansion job once it runs, cancels
//      it past ElasticGrowTimeout;
//   2. settles expansion jobs nobody carries on (an ai-resize that died, a grow of a
//      previous run of this daemon): past their deadline they are merged when both jobs
//      run, cancelled otherwise;
//   3. releases gangs whose TIMEOUT passed before they could start (their pending
//      members are cancelled, the reason in their AdminComment) and, for gangs with
//      onfail=kill, ends the other members of a gang whose member failed;
//   4. keeps the view files of elastic and resized jobs in step with slurmctld;
//   5. with ElasticAuto=yes, resizes --ai-elastic jobs within MIN:MAX by ElasticPolicy:
//      goodput (waiting jobs first, then idle nodes where they add most goodput) or
//      priority (shrinks for waiting jobs of higher priority, grows into idle nodes); see
//      elastic_policy.hpp.
// Its state file (grows under way, last resizes, gang events handled) makes a restart of
// the daemon or of slurmctld at any point safe; slurmctld stays the truth.
//
//   ai-elasticd [--slurm-conf PATH] [--conf PATH] [--state FILE] [--interval DURATION]
//               [--once] [--verbose]
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "slurm_ai/common/file_io.hpp"
#include "slurm_ai/common/state_paths.hpp"
#include "slurm_ai/elastic/elastic_plan.hpp"
#include "slurm_ai/elastic/elastic_policy.hpp"
#include "slurm_ai/gang/gang.hpp"
#include "slurm_ai/gang/gang_file.hpp"
#include "slurm_ai/job/job_record.hpp"
#include "slurm_ai/slurm/resize_ops.hpp"

using namespace slurm_ai;
using namespace slurm_ai::elastic;
namespace fs = std::filesystem;

namespace {

std::atomic<bool> g_stop{false}, g_reload{false};

void log(const std::string &msg) {
    char stamp[32];
    std::time_t t = std::time(nullptr);
    std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", std::localtime(&t));
    std::cerr << "[" << stamp << "] ai-elasticd: " << msg << std::endl;
}

class Daemon {
  public:
    Daemon(std::string conf, std::string state_path, std::uint32_t interval_s, bool verbose)
        : conf_(std::move(conf)),
          state_path_(std::move(state_path)),
          interval_override_(interval_s),
          verbose_(verbose) {
        reload();
        load_state();
    }

    std::uint32_t interval() const {
        return interval_override_ ? interval_override_ : model_->config.elastic.interval_s;
    }

    void reload() {
        model_ = load_cluster_model(slurm_, conf_);
        if (!model_->warning.empty())
            log(model_->warning);
        starts_.clear();
        log(fmt::format(
            "configuration: views in {}, ElasticAuto={}, ElasticPolicy={}, interval {} s, grow "
            "timeout {} s, cooldown {} s",
            model_->view_dir, model_->config.elastic.auto_resize ? "yes" : "no",
            model_->config.elastic.policy, interval(), model_->config.elastic.grow_timeout_s,
            model_->config.elastic.grow_cooldown_s));
    }

    void tick() {
        const std::int64_t now = std::time(nullptr);
        std::vector<JobInfo> jobs;
        try {
            jobs = slurm_.jobs();
        } catch (const std::exception &e) {
            if (!unreachable_)
                log(std::string("slurmctld does not answer: ") + e.what() + "; trying again");
            unreachable_ = true;
            return;
        }
        if (unreachable_)
            log("slurmctld answers again");
        unreachable_ = false;
        jobs_.clear();
        resized_.clear();
        for (const auto &j : jobs)
            jobs_[j.job_id] = j;
        const ElasticdState before = state_;
        step("grows", [&] { carry_on_grows(now); });
        step("expansion jobs", [&] { settle_orphans(now); });
        step("gangs", [&] { run_gangs(now); });
        step("views", [&] { refresh_views(); });
        if (model_->config.elastic.auto_resize)
            step("automatic elasticity", [&] { autoscale(now); });
        forget_old();
        if (!(state_ == before))
            save_state();
    }

  private:
    template <class F>
    void step(const char *what, F &&f) {
        try {
            f();
        } catch (const std::exception &e) {
            log(fmt::format("{}: {}", what, e.what()));
        }
    }

    const JobStart &start_of(const JobInfo &job) {
        auto it = starts_.find(job.job_id);
        if (it == starts_.end())
            it = starts_.emplace(job.job_id, job_start(*model_, job)).first;
        return it->second;
    }
    const JobHints &hints_of(const JobInfo &job) { return start_of(job).hints; }
    // The options of a job of this pass's list, for the resize operations not to read its
    // record again; nullptr for one the list does not hold (they read it then).
    const JobHints *known_hints(std::uint32_t job_id) {
        auto it = jobs_.find(job_id);
        return it == jobs_.end() ? nullptr : &hints_of(it->second);
    }

    void notify(std::uint32_t job_id, const std::string &reason, std::int64_t now) {
        auto n = notify_job(slurm_, *model_, job_id, reason, 0, known_hints(job_id));
        resized_.insert(job_id);
        state_.last_resize[job_id] = now;
        log(fmt::format(
            "job {}: {}; view generation {}, {} node(s){}{}", job_id, reason, n.view.generation,
            n.view.nodes.size(), n.signal ? ", signal " + signal_name(n.signal) : std::string(),
            n.view_error.empty() ? std::string() : "; view not written: " + n.view_error));
    }

    void carry_on_grows(std::int64_t now) {
        std::vector<GrowOp> still;
        for (const auto &op : state_.grows) {
            auto s = advance_grow(slurm_, op, now);
            if (s.status == GrowStep::Status::kWaiting) {
                still.push_back(op);
            } else if (s.status == GrowStep::Status::kMerged) {
                notify(op.job_id, op.reason, now);
            } else {
                log(fmt::format("job {}: grow given up: {}", op.job_id, s.reason));
                state_.last_resize[op.job_id] = now;  // no new try before the cooldown
            }
        }
        state_.grows = std::move(still);
    }

    void settle_orphans(std::int64_t now) {
        const std::int64_t grace = 2 * interval() + 5;
        for (const auto &[id, e] : jobs_) {
            std::uint32_t parent = expanded_job_of(e.name);
            if (!parent || !(e.pending() || e.running()))
                continue;
            if (std::any_of(state_.grows.begin(), state_.grows.end(),
                            [&](const GrowOp &op) { return op.expansion_id == id; }))
                continue;
            std::int64_t deadline = expansion_deadline(e.comment);
            if (deadline == 0)
                deadline = e.submit_time + model_->config.elastic.grow_timeout_s;
            if (now < deadline + grace)
                continue;  // whoever submitted it may still carry it on
            auto p = jobs_.find(parent);
            GrowOp op{parent,      id,
                      e.num_nodes, p != jobs_.end() ? p->second.num_nodes : 0,
                      deadline,    "orphaned expansion"};
            auto s = advance_grow(slurm_, op, now);
            if (s.status == GrowStep::Status::kMerged)
                notify(parent,
                       fmt::format("grow +{} (expansion job {} merged by ai-elasticd)", e.num_nodes,
                                   id),
                       now);
            else
                log(fmt::format("expansion job {} of job {} settled: {}", id, parent, s.reason));
        }
    }

    bool started(std::uint32_t job_id) const {
        std::error_code ec;
        return fs::exists(job_record_path(model_->state_dir, job_id), ec);
    }

    void run_gangs(std::int64_t now) {
        auto file = read_gang_file(model_->state_dir);
        gangs_waiting_.clear();
        if (!file) {
            // Written atomically by the plugin: a bad file is damage, said once per change.
            if (file.error().message() != gang_file_error_)
                log("gangs left alone: " + file.error().message());
            gang_file_error_ = file.error().message();
            return;
        }
        gang_file_error_.clear();
        for (const GangRecord &g : file.value()) {
            std::vector<GangJob> members;
            for (auto id : g.members)
                if (auto it = jobs_.find(id); it != jobs_.end())
                    members.push_back(gang_job(it->second));
            auto next = follow_up_gang(g.spec, g.state, g.deadline, members, now,
                                       state_.gangs_released.count(g.key) > 0,
                                       state_.failures_handled);
            gangs_waiting_.insert(next.waiting.begin(), next.waiting.end());
            if (next.released)
                state_.gangs_released.insert(g.key);
            state_.failures_handled.insert(next.failures_seen.begin(), next.failures_seen.end());
            for (const GangAction &a : next.actions) {
                for (auto id : a.cancel) {
                    slurm_.set_admin_comment(id, a.comment);
                    slurm_.cancel(id);
                }
                log(fmt::format("gang {} ({}): {}", g.spec.name, g.key, a.comment.substr(4)));
            }
        }
    }

    // A job as the gang rules see it; a job record says it ever started.
    GangJob gang_job(const JobInfo &j) const {
        const MemberState state = j.ended()     ? MemberState::kEnded
                                  : j.pending() ? MemberState::kPending
                                                : MemberState::kRunning;
        return {j.job_id, state, j.state, started(j.job_id)};
    }

    void refresh_views() {
        for (const auto &[id, j] : jobs_) {
            // A job resized in this look has its view already; the list above is older.
            if (!j.running() || expanded_job_of(j.name) || resized_.count(id))
                continue;
            std::error_code ec;
            const std::string dir = job_view_dir(model_->view_dir, id);
            if (!hints_of(j).elastic && !fs::exists(dir, ec))
                continue;
            auto old = read_view(dir);
            auto v =
                publish_view(dir, current_view(*model_, j, "started or resized outside the suite"),
                             static_cast<long>(j.user_id));
            if (old && old->generation != v.generation)
                log(fmt::format("job {}: view updated to generation {} ({} node(s))", id,
                                v.generation, v.nodes.size()));
        }
    }

    void autoscale(std::int64_t now) {
        ElasticPolicyInput in;
        in.now = now;
        in.grow_cooldown_s = model_->config.elastic.grow_cooldown_s;
        in.can_grow = SlurmClient::grow_unsupported() == nullptr;
        std::set<std::uint32_t> resizing;
        for (const auto &op : state_.grows)
            resizing.insert(op.job_id);
        for (const auto &[id, j] : jobs_)
            if (auto parent = expanded_job_of(j.name); parent && (j.pending() || j.running()))
                resizing.insert(parent);
        const auto &cfg = model_->config.elastic;
        const ElasticRule rule = elastic_rule(cfg.policy).value_or(ElasticRule::kGoodput);
        in.min_gain = cfg.min_gain;
        for (const auto &[id, j] : jobs_) {
            if (j.running() && !expanded_job_of(j.name) && hints_of(j).elastic) {
                auto last = state_.last_resize.find(id);
                ElasticJob e;
                e.job_id = id;
                e.priority = j.priority;
                e.partition = j.partition;
                e.nodes = j.num_nodes;
                e.spec = *hints_of(j).elastic;
                e.resizing = resizing.count(id) > 0;
                e.last_resize = last != state_.last_resize.end() ? last->second : 0;
                if (rule == ElasticRule::kGoodput)
                    goodput_of(j, e);
                in.elastic.push_back(std::move(e));
            } else if (j.pending() && j.priority > 0 && !expanded_job_of(j.name) &&
                       !gangs_waiting_.count(id) &&
                       (j.reason == "Resources" || j.reason == "Priority" || j.reason == "None")) {
                in.waiting.push_back({id, j.priority, j.partition, std::max(j.num_nodes, 1u)});
            }
        }
        if (in.elastic.empty())
            return;
        for (const auto &n : slurm_.nodes())
            if (n.idle)
                for (const auto &p : n.partitions)
                    ++in.idle[p];
        auto actions = plan_elastic(in, rule);
        if (verbose_) {
            std::string idle;
            for (const auto &[p, n] : in.idle)
                idle += fmt::format(" {}={}", p, n);
            log(fmt::format("look ({} rule): {} elastic job(s), {} waiting, idle:{}; {} action(s)",
                            to_string(rule), in.elastic.size(), in.waiting.size(), idle,
                            actions.size()));
            for (const auto &e : in.elastic) {
                auto gain = gain_per_gpu(e), loss = loss_per_gpu(e);
                if (!e.goodput.empty())
                    log(fmt::format("job {}: {} node(s), goodput {:.2f} GPUs' worth; next node "
                                    "adds {}, last node gives {} per GPU",
                                    e.job_id, e.nodes, e.goodput[std::min<std::size_t>(e.nodes, e.goodput.size() - 1)],
                                    gain ? fmt::format("{:.3f}", *gain) : "-",
                                    loss ? fmt::format("{:.3f}", *loss) : "-"));
            }
        }
        for (const auto &a : actions) {
            if (a.kind == ElasticAction::Kind::kShrink) {
                auto r = shrink_job(slurm_, *model_, a.job_id, a.nodes, {}, false,
                                    "shrunk by ai-elasticd: " + a.reason, 0,
                                    known_hints(a.job_id));
                state_.last_resize[a.job_id] = now;
                resized_.insert(a.job_id);
                log(fmt::format("job {}: released {} for job {} ({}); keeps {}", a.job_id,
                                fmt::join(r.released, ","), a.for_job, a.reason, r.nodes));
            } else {
                auto op = start_grow(slurm_, *model_, a.job_id, a.nodes, now,
                                     model_->config.elastic.grow_timeout_s, false,
                                     "grown by ai-elasticd: " + a.reason,
                                     known_hints(a.job_id));
                state_.grows.push_back(op);
                save_state();  // at once: a crash before the next save must not lose it
                log(fmt::format("job {}: grows by {} through expansion job {} ({})", a.job_id,
                                a.nodes, op.expansion_id, a.reason));
            }
        }
    }

    // The goodput rule's curve of an elastic job (elastic_plan.hpp's goodput_curve): a
    // step's computation from its --ai-comm compute=, else from CommShare at the size the
    // select plugin measured its start at (comm_share_size of the record's
    // elastic_start_max), so that growing or shrinking leaves the curve as it was; at its
    // present size where the record does not say.
    // None without the cluster's topology (it then neither grows nor is the first to
    // shrink).
    void goodput_of(const JobInfo &j, ElasticJob &e) {
        if (!model_->engine || j.num_nodes == 0)
            return;
        const JobStart &start = start_of(j);
        const JobDemand demand = job_demand(j, start.hints);
        const std::uint32_t at = start.elastic_start_max
                                     ? comm_share_size(*model_->engine, start.elastic_start_max)
                                     : j.num_nodes;
        e.goodput = job_goodput(*model_->engine, demand, at, e.spec.max_nodes,
                                model_->config.comm_share);
        e.gpus_per_node = std::max<std::uint32_t>(demand.gpus_per_host(), 1);
    }

    // What concerns jobs slurmctld no longer knows is history.
    void forget_old() {
        std::erase_if(state_.last_resize, [&](const auto &kv) { return !jobs_.count(kv.first); });
        std::erase_if(state_.failures_handled, [&](std::uint32_t id) { return !jobs_.count(id); });
        // A start read before the job's record was written is read again next look.
        std::erase_if(starts_, [&](const auto &kv) {
            return !kv.second.recorded || !jobs_.count(kv.first);
        });
    }

    void load_state() {
        std::error_code ec;
        if (!fs::exists(state_path_, ec)) {
            log("no state file " + state_path_ + ": a first start");
            return;
        }
        auto text = read_text_file(state_path_, 16u << 20);
        auto parsed = text ? parse_elasticd_state(text.value(), state_path_)
                           : Parsed<ElasticdState>(text.error());
        if (!parsed) {
            log(parsed.error().message() +
                "; starting clean (expansion jobs are settled by "
                "their deadline)");
            return;
        }
        state_ = std::move(parsed).value();
        log(fmt::format("state restored: {} grow(s) under way", state_.grows.size()));
    }

    void save_state() {
        try {
            fs::create_directories(fs::path(state_path_).parent_path());
            write_text_file_atomically(state_path_, dump_elasticd_state(state_));
        } catch (const std::exception &e) {
            log(std::string("cannot save state: ") + e.what());
        }
    }

    SlurmClient slurm_{5};
    std::string conf_, state_path_;
    std::uint32_t interval_override_;
    bool verbose_;
    std::unique_ptr<ClusterModel> model_;
    ElasticdState state_;
    std::map<std::uint32_t, JobInfo> jobs_;
    std::map<std::uint32_t, JobStart> starts_;
    std::set<std::uint32_t> gangs_waiting_;
    std::string gang_file_error_;      // the last one logged
    std::set<std::uint32_t> resized_;  // in this look
    bool unreachable_ = false;
};

}  // namespace

int main(int argc, char **argv) {
    CLI::App app{"ai-elasticd: automatic elasticity, expansion-job hygiene and gangs"};
    std::string slurm_conf, conf, state_path, interval_text;
    bool once = false, verbose = false;
    app.add_option("--slurm-conf", slurm_conf, "slurm.conf (default: $SLURM_CONF, then Slurm's)");
    app.add_option("--conf", conf, "ai_select.conf (default: beside slurm.conf)");
    app.add_option("--state", state_path,
                   "State file (default: StateSaveLocation/ai_elastic/elasticd.json)");
    app.add_option("--interval", interval_text, "Seconds between looks (default ElasticInterval)");
    app.add_flag("--once", once, "Look once and exit");
    app.add_flag("-v,--verbose", verbose, "Log every look at the cluster");
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError &e) {
        return app.exit(e) == 0 ? 0 : 2;  // --help is no error; bad usage exits 2
    }

    if (!slurm_conf.empty())
        setenv("SLURM_CONF", slurm_conf.c_str(), 1);
    std::signal(SIGTERM, [](int) { g_stop = true; });
    std::signal(SIGINT, [](int) { g_stop = true; });
    std::signal(SIGHUP, [](int) { g_reload = true; });
    try {
        std::uint32_t interval = 0;
        if (!interval_text.empty()) {
            auto d = parse_duration("--interval", interval_text);
            if (!d || d.value() == 0)
                throw std::runtime_error("--interval='" + interval_text +
                                         "': expected a duration such as 5 or 10s");
            interval = d.value();
        }
        if (state_path.empty()) {
            SlurmClient probe(60);
            state_path = state_paths::elasticd_state(probe.state_save_location());
        }
        // One daemon per state file: a second one would act twice on every event.
        fs::create_directories(fs::path(state_path).parent_path());
        int lock = open((state_path + ".lock").c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
        if (lock < 0 || flock(lock, LOCK_EX | LOCK_NB) != 0)
            throw std::runtime_error("another ai-elasticd holds " + state_path + ".lock");
        Daemon d(conf, state_path, interval, verbose);
        log(fmt::format("running (pid {}, state {})", getpid(), state_path));
        if (const char *why = SlurmClient::grow_unsupported())
            log(std::string("shrinks only: ") + why);
        while (!g_stop) {
            // A configuration broken by hand must not stop the daemon: the last good
            // one stays in force until the file is fixed and SIGHUP comes again.
            if (g_reload.exchange(false)) {
                try {
                    d.reload();
                } catch (const std::exception &e) {
                    log(std::string("reload failed, keeping the previous configuration: ") +
                        e.what());
                }
            }
            d.tick();
            if (once)
                break;
            for (std::uint32_t i = 0; i < d.interval() * 10 && !g_stop && !g_reload; ++i)
                std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        log("stopping");
        return 0;
    } catch (const std::exception &e) {
        log(e.what());
        return 1;
    }
}
