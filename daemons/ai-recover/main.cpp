// ai-recover: brings jobs with --ai-checkpoint back after node failures, with Slurm's own
// machinery (strigger, --no-kill, requeue, ExcNodeList), and asks them to checkpoint
// before their time limit or on demand.
//
//   ai-recover node-down NODES...   the program of `strigger --set --node --down --flags=PERM`
//   ai-recover watch                time-limit checkpoint requests, keep=N, run bookkeeping,
//                                   and the nodes' leases (LeaseWatch in ai_select.conf)
//   ai-recover lease-down NODES...  what the lease watch starts: confirm, set DOWN, recover
//   ai-recover checkpoint JOBID     ask a running job to checkpoint now
//   ai-recover resume-path DIR      the newest complete checkpoint in DIR
//   ai-recover prune DIR --keep N   keep=N by hand
//
// Exit status: 0 done, 1 failed or nothing found (resume-path), 2 bad usage.
// See docs/checkpoint.md.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "lease_watch.hpp"
#include "recovery.hpp"
#include "slurm_ai/checkpoint/checkpoint.hpp"
#include "slurm_ai/common/hostlist.hpp"
#include "slurm_ai/common/state_paths.hpp"
#include "slurm_ai/slurm/site_config.hpp"

using namespace slurm_ai;

namespace {

std::atomic<bool> g_stop{false};

void on_stop(int) {
    g_stop = true;
}

// slurmctld starts trigger programs with every descriptor closed: give 0-2 to /dev/null
// so that a file opened later never becomes someone's stdout.
void ensure_std_fds() {
    for (int fd = 0; fd <= 2; ++fd)
        if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
            int null = ::open("/dev/null", O_RDWR);
            if (null >= 0 && null != fd) {
                dup2(null, fd);
                ::close(null);
            }
        }
}

// ai-recover with this process' options, for the lease watch's lease-down processes.
std::vector<std::string> same_options(const recover::Options &opt, bool keep_begin) {
    auto num = [](double v) {
        char text[32];
        std::snprintf(text, sizeof text, "%g", v);
        return std::string(text);
    };
    std::vector<std::string> out{"ai-recover",  "--state-dir",    opt.state_dir,
                                 "--log",       opt.log_path,     "--grace",
                                 num(opt.grace_s), "--wait-running", num(opt.running_wait_s)};
    if (keep_begin)
        out.push_back("--keep-begin-delay");
    return out;
}

// watch: the lease watch beside the loop, unless LeaseWatch=no or there is no munge.
int watch_with_leases(recover::Recovery &recovery, recover::Slurm &slurm,
                      std::vector<std::string> program, const std::string &state_dir) {
    struct sigaction sa {};
    sa.sa_handler = on_stop;
    sigaction(SIGTERM, &sa, nullptr);
    sigaction(SIGINT, &sa, nullptr);
    const LeaseConfig conf = load_site_config().lease;
    std::thread leases;
#if SLURM_AI_HAVE_MUNGE
    if (conf.watch) {
        auto log = [&recovery](const std::string &m) { recovery.log(m); };
        try {
            auto watch = std::make_shared<recover::LeaseWatch>(
                conf, slurm.controller(), std::move(program), state_paths::lease_book(state_dir),
                log);
            leases = std::thread([watch] { watch->run(g_stop); });
        } catch (const std::exception &e) {
            // The rest of watch goes on: failures are then Slurm's to find, as before.
            recovery.log(std::string("leases: not watched: ") + e.what());
        }
    } else {
        recovery.log("leases: LeaseWatch=no: node failures are found by Slurm alone");
    }
#else
    (void)slurm;
    (void)program;
    (void)state_dir;
    recovery.log("leases: built without libmunge: node failures are found by Slurm alone");
#endif
    const int rc = recovery.watch(g_stop);
    g_stop = true;
    if (leases.joinable())
        leases.join();
    return rc;
}

// resume-path (resume) and prune: the checkpoint directory alone, no Slurm.
int checkpoint_dir_command(bool resume, const std::string &dir, std::uint32_t keep,
                           bool dry_run) {
    auto all = checkpoint::scan(dir);
    if (!all) {
        std::cerr << "ai-recover: " << all.error().message() << '\n';
        return 1;
    }
    if (resume) {
        auto newest = checkpoint::newest_complete(all.value());
        if (!newest) {
            std::cerr << "ai-recover: no complete checkpoint in " << dir << '\n';
            return 1;
        }
        std::cout << newest->path << '\n';
        return 0;
    }
    auto doomed = checkpoint::plan_prune(all.value(), keep);
    for (const auto &c : doomed)
        std::cout << (dry_run ? "would remove " : "removing ") << c.path << '\n';
    if (dry_run)
        return 0;
    auto errors = checkpoint::apply_prune(doomed);
    for (const auto &e : errors)
        std::cerr << "ai-recover: " << e << '\n';
    return errors.empty() ? 0 : 1;
}

}  // namespace

int main(int argc, char **argv) {
    ensure_std_fds();
    CLI::App app{"ai-recover: checkpoint-triggered rescheduling for --ai-checkpoint jobs"};
    app.require_subcommand(1);
    recover::Options opt;
    std::string conf;
    app.add_option("--conf", conf, "slurm.conf to use (sets SLURM_CONF for Slurm's commands)");
    app.add_option("--state-dir", opt.state_dir,
                   "Slurm's StateSaveLocation (default: asked from slurmctld)");
    app.add_option("--log", opt.log_path,
                   "Log file (default: STATE_DIR/ai_recover/ai-recover.log)");
    // How a failure is handled, by node-down and by watch alike.
    app.add_option("--grace", opt.grace_s, "Seconds the survivors get to checkpoint")
        ->check(CLI::Range(0.0, 240.0))
        ->capture_default_str();
    app.add_option("--wait-running", opt.running_wait_s,
                   "Seconds to wait for a restarted job to run again (for its record)")
        ->check(CLI::Range(0.0, 240.0))
        ->capture_default_str();
    bool keep_begin = false;
    app.add_flag("--keep-begin-delay", keep_begin,
                 "Leave the start delay Slurm puts on requeued jobs (AuthInfo cred_expire)");
    app.fallthrough();  // the options above also after the subcommand

    auto *down = app.add_subcommand("node-down", "Recover the jobs that held the failed nodes");
    std::vector<std::string> down_nodes;
    down->add_option("nodes", down_nodes, "Failed nodes (hostlists), as strigger passes them")
        ->required();

    auto *watch = app.add_subcommand("watch", "Time-limit checkpoint requests and keep=N");
    watch->add_option("--interval", opt.interval_s, "Seconds between looks at the queue")
        ->check(CLI::Range(0.2, 3600.0))
        ->capture_default_str();

    auto *lease_down = app.add_subcommand(
        "lease-down", "Confirm a failure the leases found, set the nodes DOWN and recover");
    recover::LeaseDown ld;
    lease_down->add_option("nodes", ld.nodes, "Suspected nodes (with --job: of the job)");
    lease_down->add_option("--why", ld.why, "The signal, for the nodes' reason")->required();
    lease_down->add_flag("--probe", ld.probe, "Confirm first: slurmd must not answer");
    lease_down->add_flag("--drain", ld.drain, "Then drain the nodes: out until resumed");
    lease_down->add_option("--job", ld.job, "A task's report: its job");
    lease_down->add_option("--uid", ld.uid, "A task's report: who sealed it");
    lease_down->add_option("--from", ld.from, "A task's report: its node");

    auto *ckpt = app.add_subcommand("checkpoint", "Ask a running job to checkpoint now");
    std::uint32_t job_id = 0;
    ckpt->add_option("jobid", job_id, "Job id")->required()->check(CLI::PositiveNumber);

    auto *resume = app.add_subcommand("resume-path", "Print the newest complete checkpoint");
    std::string dir;
    resume->add_option("dir", dir, "Checkpoint directory")->required();

    auto *prune = app.add_subcommand("prune", "Remove checkpoints beyond the N newest complete");
    std::uint32_t keep = 0;
    bool dry_run = false;
    prune->add_option("dir", dir, "Checkpoint directory")->required();
    prune->add_option("--keep", keep, "Complete checkpoints to keep")
        ->required()
        ->check(CLI::Range(1u, 1000u));
    prune->add_flag("--dry-run", dry_run, "Only print what would go");

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError &e) {
        return app.exit(e) == 0 ? 0 : 2;  // --help is not an error
    }

    if (*resume || *prune)
        return checkpoint_dir_command(static_cast<bool>(*resume), dir, keep, dry_run);

    if (!conf.empty())
        setenv("SLURM_CONF", conf.c_str(), 1);
    opt.release_begin = !keep_begin;
    recover::Slurm slurm;
    try {
        if (opt.state_dir.empty())
            opt.state_dir = slurm.state_save_location();
        if (opt.log_path.empty())
            opt.log_path = state_paths::recover_log(opt.state_dir);
        recover::Recovery recovery(slurm, opt);  // shares slurm's client
        if (*down) {
            std::vector<std::string> nodes;
            for (const auto &expr : down_nodes) {
                auto names = expand_hostlist(expr, "nodes");
                if (!names) {
                    recovery.log("node-down: " + names.error().message());
                    return 2;
                }
                nodes.insert(nodes.end(), names->begin(), names->end());
            }
            return recovery.node_down(nodes);
        }
        if (*ckpt)
            return recovery.checkpoint_now(job_id);
        if (*lease_down) {
            if (ld.job == 0 && ld.nodes.empty()) {
                recovery.log("lease-down: no node named and no job");
                return 2;
            }
            return recovery.lease_down(ld);
        }
        return watch_with_leases(recovery, slurm, same_options(opt, keep_begin), opt.state_dir);
    } catch (const std::exception &e) {
        std::cerr << "ai-recover: " << e.what() << '\n';
        return 1;
    }
}
