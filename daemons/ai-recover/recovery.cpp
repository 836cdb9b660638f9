#include "recovery.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <thread>

#include "slurm_ai/checkpoint/checkpoint.hpp"
#include "slurm_ai/checkpoint/checkpoint_restart_log.hpp"
#include "slurm_ai/checkpoint/recover_run.hpp"
#include "slurm_ai/common/file_io.hpp"
#include "slurm_ai/common/hostlist.hpp"
#include "slurm_ai/common/state_paths.hpp"
#include "slurm_ai/common/unique_fd.hpp"
#include "slurm_ai/job/job_record.hpp"

namespace slurm_ai::recover {
namespace {

namespace fs = std::filesystem;
using checkpoint::Action;
using checkpoint::Checkpoint;
using checkpoint::JobView;
using checkpoint::RecoverRun;
using checkpoint::RestartRecord;

double now_s() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

void sleep_s(double s) {
    std::this_thread::sleep_for(std::chrono::duration<double>(s));
}

// What ai-recover remembers of the job's current run; nothing when there is no file yet
// or a torn one (the run's bookkeeping starts over).
RecoverRun read_run(const std::string &state_dir, std::uint32_t id) {
    const std::string path = state_paths::recover_run(state_dir, id);
    auto text = read_text_file(path, 1u << 20);
    if (!text)
        return {};
    auto run = checkpoint::parse_recover_run(text.value(), path);
    return run ? std::move(run).value() : RecoverRun{};
}

void write_run(const std::string &state_dir, std::uint32_t id, const RecoverRun &r) {
    const std::string path = state_paths::recover_run(state_dir, id);
    fs::create_directories(fs::path(path).parent_path());
    write_text_file_atomically(path, checkpoint::dump_recover_run(r));
}

// Serialises everything ai-recover does to one job across processes (two down triggers
// in a row, the watch loop, an on-demand request).
class JobLock {
  public:
    // wait=false: held() tells whether the lock was free.
    JobLock(const std::string &state_dir, std::uint32_t id, bool wait = true) {
        const fs::path path = state_paths::recover_lock(state_dir, id);
        fs::create_directories(path.parent_path());
        fd_ = UniqueFd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
        if (fd_.get() < 0)
            throw std::runtime_error("cannot open " + path.string());
        if (flock(fd_.get(), wait ? LOCK_EX : LOCK_EX | LOCK_NB) == 0)
            held_ = true;
        else if (wait || errno != EWOULDBLOCK)
            throw std::runtime_error("cannot lock " + path.string());
    }
    bool held() const { return held_; }

  private:
    UniqueFd fd_;
    bool held_ = false;
};

std::optional<Checkpoint> newest_in(const std::string &dir) {
    auto all = checkpoint::scan(dir);
    if (!all)
        return std::nullopt;
    return checkpoint::newest_complete(all.value());
}

std::vector<std::string> sorted(std::set<std::string> s) {
    return {s.begin(), s.end()};
}

}  // namespace

// A job with --ai-checkpoint, as the select plugin recorded it and Slurm shows it now.
struct Recovery::Job {
    JobView view;
    JobHints hints;
    std::vector<std::string> record_nodes;
    double recorded_at = 0;
    RecoverRun run;

    std::string dir() const {
        return checkpoint::expand_dir(hints.checkpoint->dir, std::to_string(view.job_id));
    }
    // Every node the current (or, pending again, the last) run held.
    std::vector<std::string> run_nodes() const {
        std::set<std::string> all(view.nodes.begin(), view.nodes.end());
        if (view.pending() || run.run_start == view.start_time)
            all.insert(run.nodes.begin(), run.nodes.end());
        // The record is rewritten at each start the engine places; an older one (a restart
        // that fell back to cons_tres) must not attribute old nodes to this run.
        if (view.pending() || recorded_at + 5 >= static_cast<double>(view.start_time))
            all.insert(record_nodes.begin(), record_nodes.end());
        return sorted(std::move(all));
    }
};

Recovery::Recovery(Slurm slurm, Options options)
    : slurm_(std::move(slurm)), opt_(std::move(options)) {}

void Recovery::log(const std::string &message) const {
    std::time_t t = std::time(nullptr);
    std::tm tm{};
    localtime_r(&t, &tm);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
    std::string line =
        std::string(stamp) + " ai-recover[" + std::to_string(getpid()) + "]: " + message + "\n";
    std::fputs(line.c_str(), stderr);
    if (!opt_.log_path.empty())
        (void)append_to_file(opt_.log_path, line);  // stderr has the line either way
}

std::optional<Recovery::Job> Recovery::checkpoint_job(JobView view) const {
    const std::string path = job_record_path(opt_.state_dir, view.job_id);
    std::error_code ec;
    if (!fs::exists(path, ec))
        return std::nullopt;  // not placed by the suite's select plugin: no hints known
    auto rec = read_job_record(opt_.state_dir, view.job_id);
    if (!rec) {
        log("job " + std::to_string(view.job_id) + ": unreadable record: " + rec.error().message());
        return std::nullopt;
    }
    if (!rec->hints.checkpoint)
        return std::nullopt;
    Job job;
    job.hints = rec->hints;
    if (auto nodes = expand_hostlist(rec->nodes, "nodes"))
        job.record_nodes = std::move(nodes).value();
    job.recorded_at = static_cast<double>(rec->recorded_at);
    job.view = std::move(view);
    job.run = read_run(opt_.state_dir, job.view.job_id);
    return job;
}

std::vector<Recovery::Job> Recovery::checkpoint_jobs() const {
    std::vector<Job> out;
    for (auto &view : slurm_.jobs())
        if (auto job = checkpoint_job(std::move(view)))
            out.push_back(std::move(*job));
    return out;
}

// One job's recovery from one node-down event, from plan to record.
struct Recovery::Work {
    Job job;
    checkpoint::RecoveryPlan plan;
    std::optional<Checkpoint> before, after;  // newest complete checkpoint
    bool signalled = false;
    double waited = 0;
    bool failed = false;
    std::vector<std::string> ended_steps;
};

std::vector<std::string> Recovery::lost_nodes(const Job &j, const std::vector<std::string> &failed,
                                              std::int64_t failed_at,
                                              const std::set<std::string> &back) const {
    const bool ended = !j.view.running() && !j.view.pending() && !j.view.settling();
    if (ended && !checkpoint::ended_by_node_failure(j.view, failed_at))
        return {};  // ended on its own: nothing to bring back
    // Not again for a node already handled in this run (a trigger and watch both see a
    // failure; a trigger fires again for a node that went down again): a job back in the
    // queue excludes it, a run that went on (shrunk) has it in its restart log.
    std::set<std::string> handled;
    if (!j.view.running())
        handled.insert(j.view.excluded.begin(), j.view.excluded.end());
    if (!j.view.pending()) {
        auto history = checkpoint::read_restart_log(
            checkpoint::restart_log_path(opt_.state_dir, j.view.job_id));
        if (history)
            for (const auto &r : history->records)
                if (r.event == "node_failure" && r.run_start == j.view.start_time)
                    handled.insert(r.failed.begin(), r.failed.end());
    }
    // A node back in service that the running job still holds serves this run: Slurm takes
    // a failed node out of a --no-kill job and ends any other job on it, so the failure
    // came before this run (a trigger that ran late, after the node was resumed).
    if (j.view.running())
        for (const auto &n : j.view.nodes)
            if (back.count(n))
                handled.insert(n);
    std::vector<std::string> out;
    for (const auto &n : j.run_nodes())
        if (std::find(failed.begin(), failed.end(), n) != failed.end() && !handled.count(n))
            out.push_back(n);
    return out;
}

int Recovery::node_down(const std::vector<std::string> &failed) {
    const double t0 = now_s();
    std::map<std::string, NodeDown> down;
    std::set<std::string> back;
    std::string what;
    for (const auto &n : failed) {
        down[n] = slurm_.node_down(n);
        if (down[n].back)
            back.insert(n);
        what += (what.empty() ? "" : ", ") + n +
                (down[n].back           ? std::string(" DOWN, back in service now")
                 : down[n].reason.empty() ? std::string(" DOWN")
                                          : " DOWN (" + down[n].reason + ")");
    }
    log("nodes down: " + what);
    // The earliest DOWN stamp; now when none is known (a node back in service already has
    // none): the trigger runs within 15 s of a failure, the watch loop sooner.
    std::int64_t failed_at = 0;
    for (const auto &[n, d] : down)
        if (d.since > 0 && (failed_at == 0 || d.since < failed_at))
            failed_at = d.since;
    if (failed_at == 0)
        failed_at = static_cast<std::int64_t>(t0);

    std::vector<std::uint32_t> ids;
    for (const auto &j : checkpoint_jobs())
        if (!lost_nodes(j, failed, failed_at, back).empty())
            ids.push_back(j.view.job_id);
    if (ids.empty()) {
        log("no checkpointing job to recover from " + compress_hostlist(failed) +
            " (none held it, or it was handled already)");
        return 0;
    }
    std::sort(ids.begin(), ids.end());  // one lock order for every process
    std::vector<std::unique_ptr<JobLock>> locks;
    for (auto id : ids)
        locks.push_back(std::make_unique<JobLock>(opt_.state_dir, id));
    // Slurm may be requeueing a job itself (no --no-kill): let that settle first.
    for (double t = now_s(); now_s() - t < opt_.requeue_wait_s; sleep_s(0.25)) {
        bool settling = false;
        for (auto id : ids)
            if (auto v = slurm_.job(id); v && v->settling())
                settling = true;
        if (!settling)
            break;
    }
    // Another process may have acted while this one waited for the locks: look again.
    std::vector<Work> work;
    for (auto &j : checkpoint_jobs()) {
        if (!std::binary_search(ids.begin(), ids.end(), j.view.job_id))
            continue;
        auto lost = lost_nodes(j, failed, failed_at, back);
        if (lost.empty())
            continue;
        checkpoint::RecoveryInput in{
            j.view,   j.run_nodes(), lost, j.hints, slurm_.partition_nodes(j.view.partition),
            failed_at};
        Work w{std::move(j), checkpoint::plan_recovery(in), {}, {}, false, 0, false, {}};
        log("job " + std::to_string(w.job.view.job_id) + ": " +
            std::string(to_string(w.plan.action)) + ": " + w.plan.why);
        work.push_back(std::move(w));
    }

    ask_survivors(work);
    int rc = 0;
    for (auto &w : work) {
        act(w);
        record_failure(w, down);
        rc |= w.failed ? 1 : 0;
    }
    for (auto &w : work)
        if (!w.failed && (w.plan.action == Action::kRequeue || w.plan.action == Action::kExclude))
            await_running(w, static_cast<double>(failed_at),
                          t0 + opt_.running_wait_s + opt_.grace_s);
    return rc;
}

// All jobs at once: the checkpoint signal, then the grace until each one's newest complete
// checkpoint is newer than before.
void Recovery::ask_survivors(std::vector<Work> &work) {
    for (auto &w : work) {
        w.before = newest_in(w.job.dir());
        w.after = w.before;
        if (!w.plan.ask_checkpoint || w.plan.action == Action::kNone)
            continue;
        try {
            slurm_.signal_steps(w.job.view.job_id, w.job.hints.checkpoint->signal);
            w.signalled = true;
        } catch (const SlurmError &e) {
            log("job " + std::to_string(w.job.view.job_id) +
                ": checkpoint request failed: " + e.what());
        }
    }
    const double asked_at = now_s();
    for (bool waiting = true; waiting && now_s() - asked_at < opt_.grace_s;) {
        waiting = false;
        for (auto &w : work) {
            if (!w.signalled || checkpoint::advanced(w.before, w.after))
                continue;
            w.after = newest_in(w.job.dir());
            w.waited = now_s() - asked_at;
            waiting = waiting || !checkpoint::advanced(w.before, w.after);
        }
        if (waiting)
            sleep_s(0.25);
    }
}

// The plan, with Slurm's own commands. Sets w.failed when one of them fails.
void Recovery::act(Work &w) {
    const auto id = w.job.view.job_id;
    try {
        switch (w.plan.action) {
            case Action::kShrink: {
                // --no-kill already made Slurm drop a DOWN node; a node that only stopped
                // responding may still be listed.
                const auto &nodes = w.job.view.nodes;
                if (std::any_of(w.plan.lost.begin(), w.plan.lost.end(), [&](const auto &n) {
                        return std::find(nodes.begin(), nodes.end(), n) != nodes.end();
                    }))
                    slurm_.update(id, {"NodeList=" + compress_hostlist(w.plan.survivors)});
                // A step that spanned the failed node cannot go on (its collectives wait
                // for the lost ranks): end it, and the job's script starts a new one on the
                // nodes left, from the checkpoint just written.
                for (const auto &step : slurm_.steps_on(id, w.plan.lost)) {
                    try {
                        slurm_.cancel_step(step);
                    } catch (const SlurmError &) {
                        // Its ranks on the lost node may have ended it between the listing
                        // and the cancel ("Invalid job id specified"): gone is what we want.
                        const auto left = slurm_.steps_on(id, w.plan.lost);
                        if (std::find(left.begin(), left.end(), step) != left.end())
                            throw;
                    }
                    w.ended_steps.push_back(step);
                }
                return;
            }
            case Action::kRequeue:
                slurm_.requeue(id);
                [[fallthrough]];
            case Action::kExclude:
                release_pending(id, compress_hostlist(w.plan.exclude));
                return;
            case Action::kNone:
                return;
        }
    } catch (const std::exception &e) {
        w.failed = true;
        log("job " + std::to_string(id) + ": " + std::string(to_string(w.plan.action)) +
            " failed: " + e.what());
    }
}

// Once the old run is cleaned up (the job reads PENDING again and Slurm has set its start
// delay): the exclusions, and the start delay lifted.
void Recovery::release_pending(std::uint32_t id, const std::string &excluded) {
    std::optional<JobView> v;
    for (double t = now_s(); now_s() - t < opt_.requeue_wait_s; sleep_s(0.25)) {
        v = slurm_.job(id);
        if (!v || v->pending())
            break;
    }
    if (!v || !v->pending())
        throw SlurmError("job did not become pending again within " +
                         std::to_string(int(opt_.requeue_wait_s)) + " s");
    std::vector<std::string> settings;
    if (compress_hostlist(v->excluded) != excluded)
        settings.push_back("ExcNodeList=" + excluded);
    if (opt_.release_begin &&
        checkpoint::begin_delayed_by_requeue(*v, static_cast<std::int64_t>(now_s())))
        // Not now: a launch credential made in the second the old run was revoked would
        // be refused on its nodes, failing the job.
        settings.push_back("StartTime=now+1");
    if (!settings.empty())
        slurm_.update(id, settings);
}

void Recovery::record_failure(const Work &w, const std::map<std::string, NodeDown> &down) {
    const auto id = w.job.view.job_id;
    auto now_view = slurm_.job(id);
    RestartRecord r;
    r.at = now_s();
    r.event = "node_failure";
    r.action = w.failed ? "failed" : std::string(to_string(w.plan.action));
    for (const auto &n : w.plan.lost) {
        auto it = down.find(n);
        r.reason +=
            (r.reason.empty() ? "" : ", ") + n + " DOWN" +
            (it == down.end() || it->second.reason.empty() ? std::string()
                                                           : " (" + it->second.reason + ")");
    }
    r.reason += ": " + w.plan.why;
    if (!w.ended_steps.empty()) {
        std::string steps;
        for (const auto &s : w.ended_steps)
            steps += (steps.empty() ? "" : ", ") + s;
        r.reason += "; ended step " + steps + " for the job to start it again on them";
    }
    r.run_start = w.job.view.pending() ? w.job.run.run_start : w.job.view.start_time;
    r.failed = w.plan.lost;
    r.nodes = compress_hostlist(w.job.run_nodes());
    r.survivors = compress_hostlist(w.plan.survivors);
    r.excluded = compress_hostlist(w.plan.exclude);
    if (w.before)
        r.step_before = w.before->step;
    if (w.after)
        r.step_after = w.after->step;
    r.waited_s = w.signalled ? w.waited : 0;
    if (w.plan.action != Action::kNone)
        r.checkpoint = w.after ? w.after->path : "";
    r.restarts = now_view ? now_view->restarts : w.job.view.restarts;
    if (auto err = checkpoint::append_record(checkpoint::restart_log_path(opt_.state_dir, id), r))
        log("job " + std::to_string(id) + ": cannot write its restart record: " + *err);
}

// Waits (until `deadline`) for a restarted job to run, then notes where, how long after
// `failed_at`, and from which checkpoint; the new run's nodes start its bookkeeping.
void Recovery::await_running(const Work &w, double failed_at, double deadline) {
    const auto id = w.job.view.job_id;
    std::optional<JobView> v;
    for (; now_s() < deadline; sleep_s(0.25)) {
        v = slurm_.job(id);
        if (!v || v->running() || (!v->pending() && !v->settling()))
            break;
    }
    if (!v || !v->running()) {
        log("job " + std::to_string(id) + ": not running again yet (" +
            (v ? v->state + ", " + v->reason : std::string("gone")) + ")");
        return;
    }
    auto newest = newest_in(w.job.dir());
    RestartRecord r;
    r.at = now_s();
    r.event = "running_again";
    r.run_start = v->start_time;
    r.nodes = compress_hostlist(v->nodes);
    r.checkpoint = newest ? newest->path : "";
    r.down_s = r.at - failed_at;
    r.reason = "restart " + std::to_string(v->restarts) + " on " + r.nodes;
    r.restarts = v->restarts;
    RecoverRun run;
    run.run_start = v->start_time;
    run.nodes.insert(v->nodes.begin(), v->nodes.end());
    write_run(opt_.state_dir, id, run);
    if (auto err = checkpoint::append_record(checkpoint::restart_log_path(opt_.state_dir, id), r))
        log("job " + std::to_string(id) + ": cannot write its restart record: " + *err);
    log("job " + std::to_string(id) + ": running again on " + r.nodes + " from " +
        (r.checkpoint.empty() ? std::string("scratch") : r.checkpoint));
}

int Recovery::checkpoint_now(std::uint32_t job_id) {
    std::optional<Job> j;
    if (auto view = slurm_.job(job_id))
        j = checkpoint_job(std::move(*view));
    if (!j) {
        log("job " + std::to_string(job_id) +
            " has no --ai-checkpoint record (unknown job, not started, or not placed by "
            "select/ai_cons_tres)");
        return 1;
    }
    if (!j->view.running()) {
        log("job " + std::to_string(job_id) + " is " + j->view.state + ", not running");
        return 1;
    }
    // No lock and no write needed: a user may ask for a checkpoint of their own job.
    slurm_.signal_steps(job_id, j->hints.checkpoint->signal);
    RestartRecord r;
    r.at = now_s();
    r.event = "checkpoint_request";
    r.reason = "on demand (signal " + std::to_string(j->hints.checkpoint->signal) + ")";
    r.run_start = j->view.start_time;
    r.nodes = compress_hostlist(j->view.nodes);
    r.restarts = j->view.restarts;
    if (auto err =
            checkpoint::append_record(checkpoint::restart_log_path(opt_.state_dir, job_id), r))
        log("job " + std::to_string(job_id) + ": cannot write its record: " + *err);
    log("job " + std::to_string(job_id) + ": checkpoint requested on demand");
    return 0;
}

void Recovery::watch_once(double now) {
    std::set<std::uint32_t> known;
    for (auto &j : checkpoint_jobs()) {
        known.insert(j.view.job_id);
        if (!j.view.running())
            continue;
        const auto id = j.view.job_id;
        JobLock lock(opt_.state_dir, id, false);
        if (!lock.held())
            continue;  // a recovery is under way; look again next time
        RecoverRun run = read_run(opt_.state_dir, id);
        if (run.run_start != j.view.start_time)
            run = RecoverRun{j.view.start_time, {}, false};
        bool changed = false;
        for (const auto &n : j.view.nodes)
            changed = run.nodes.insert(n).second || changed;

        auto due = checkpoint::checkpoint_signal_due(j.view, *j.hints.checkpoint);
        if (due && !run.signalled && now >= static_cast<double>(*due)) {
            try {
                slurm_.signal_steps(id, j.hints.checkpoint->signal);
                RestartRecord r;
                r.at = now;
                r.event = "checkpoint_request";
                r.reason = "time limit in " +
                           std::to_string(std::max<std::int64_t>(
                               0, j.view.end_time - static_cast<std::int64_t>(now))) +
                           " s (signal " + std::to_string(j.hints.checkpoint->signal) + ")";
                r.run_start = j.view.start_time;
                r.nodes = compress_hostlist(j.view.nodes);
                r.restarts = j.view.restarts;
                checkpoint::append_record(checkpoint::restart_log_path(opt_.state_dir, id), r);
                log("job " + std::to_string(id) + ": checkpoint requested, " + r.reason);
            } catch (const SlurmError &e) {
                log("job " + std::to_string(id) +
                    ": time-limit checkpoint request failed: " + e.what());
            }
            run.signalled = true;  // once per run, also when it failed
            changed = true;
        }
        // keep=N, where the directory can be read from here, and of the job's user's
        // entries alone: the user may swap the directory for a link to SlurmUser's own.
        if (auto all = checkpoint::scan(j.dir())) {
            auto doomed = checkpoint::plan_prune(all.value(), j.hints.checkpoint->keep);
            for (const auto &err : checkpoint::apply_prune(doomed, j.view.user_id))
                log("job " + std::to_string(id) + ": keep: " + err);
        }
        if (changed)
            write_run(opt_.state_dir, id, run);
    }
    // Forget the runs of jobs slurmctld no longer knows.
    std::error_code ec;
    for (auto it = fs::directory_iterator(state_paths::recover_runs(opt_.state_dir), ec);
         !ec && it != fs::directory_iterator(); it.increment(ec)) {
        auto stem = it->path().stem().string();
        std::uint32_t id = 0;
        if (std::sscanf(stem.c_str(), "%u", &id) == 1 && !known.count(id) &&
            it->path().extension() == ".json")
            fs::remove(it->path(), ec);
    }
}

void Recovery::react_to_down_nodes() {
    auto now_down = slurm_.down_nodes();
    std::set<std::string> down(now_down.begin(), now_down.end());
    std::vector<std::string> fresh;
    if (known_down_)  // nodes down when watch started are old news
        std::set_difference(down.begin(), down.end(), known_down_->begin(), known_down_->end(),
                            std::back_inserter(fresh));
    known_down_ = std::move(down);
    if (!fresh.empty())
        node_down(fresh);
}

int Recovery::watch(const std::atomic<bool> &stop) {
    char every[32];
    std::snprintf(every, sizeof every, "%g", opt_.interval_s);
    log(std::string("watching checkpointing jobs every ") + every + " s");
    while (!stop) {
        try {
            react_to_down_nodes();
            watch_once(now_s());
        } catch (const std::exception &e) {
            log(std::string("watch: ") + e.what());  // slurmctld restarting, ...: try again
        }
        for (double t = 0; t < opt_.interval_s && !stop; t += 0.2)
            sleep_s(0.2);
    }
    log("watch stopped");
    return 0;
}

}  // namespace slurm_ai::recover
