// ai-lease: the suite's own node-failure signal on a compute node (docs/checkpoint.md,
// "Leases").
//
//   ai-lease run [--node NAME]     the agent, as root: renews the node's lease, fences its
//                                  --ai-checkpoint jobs when cut off, reports health events
//   ai-lease report [--peer NODE] [--why TEXT]
//                                  from a job's task, as its user: a peer was lost (a gloo
//                                  or NCCL error); AI_REPORT_FAILURE in a --ai-checkpoint
//                                  task's environment is this command
//
// Both read ai_select.conf beside slurm.conf (LeasePort, LeasePeriod, ..., HealthEventFile)
// and slurm.conf for the controller. Exit status: 0 done, 1 failed, 2 bad usage.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

#include "agent.hpp"
#include "slurm_ai/lease/datagram.hpp"
#include "slurm_ai/lease/munge_seal.hpp"
#include "slurm_ai/slurm/site_config.hpp"
#include "slurm_ai/slurm/slurm_client.hpp"

using namespace slurm_ai;

namespace {

std::atomic<bool> g_stop{false};

void on_stop(int) {
    g_stop = true;
}

void log_line(const std::string &message) {
    std::time_t t = std::time(nullptr);
    std::tm tm{};
    localtime_r(&t, &tm);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
    std::cerr << stamp << ' ' << message << std::endl;
}

std::string env_or(const char *name, std::string fallback) {
    const char *v = std::getenv(name);
    return v && *v ? v : fallback;
}

std::string short_hostname() {
    char name[256] = "";
    gethostname(name, sizeof name - 1);
    std::string out = name;
    return out.substr(0, out.find('.'));
}

// A task's report: sealed as the job's user, sent once (the lease lapses anyway).
int report(const LeaseConfig &conf, const ControllerAddress &ctl, lease::Report r) {
    if (r.job == 0) {
        std::cerr << "ai-lease report: no job: run it inside a job (SLURM_JOB_ID) or give --job\n";
        return 2;
    }
    auto socket = lease::Datagram::toward(ctl.host, conf.port);
    if (!socket.send(lease::seal(lease::to_text(r), ctl.munge_socket))) {
        std::cerr << "ai-lease report: cannot reach " << ctl.host << ":" << conf.port << '\n';
        return 1;
    }
    std::cerr << "ai-lease: reported to ai-recover: job " << r.job << " lost a peer"
              << (r.suspect.empty() ? std::string() : " on " + r.suspect) << '\n';
    return 0;
}

}  // namespace

int main(int argc, char **argv) {
    CLI::App app{"ai-lease: the suite's node lease, fencing and failure reports"};
    app.require_subcommand(1);
    std::string conf;
    app.add_option("--conf", conf, "slurm.conf to use (sets SLURM_CONF)");
    auto *run = app.add_subcommand("run", "The node's agent (as root)");
    lease_agent::AgentOptions opt;
    run->add_option("--node", opt.node, "This node's name in Slurm (default: the host name)");
    run->add_option("--proc", opt.proc_root, "Where processes are listed")->capture_default_str();
    auto *rep = app.add_subcommand("report", "From a job's task: a peer was lost");
    lease::Report r{"", std::string(lease::kPeerLostReport), 0, "", "peer lost"};
    rep->add_option("--peer", r.suspect, "The lost peer's node, when the error names it");
    rep->add_option("--why", r.why, "What the task saw (the error)")->capture_default_str();
    rep->add_option("--job", r.job, "The job (default: SLURM_JOB_ID)");
    rep->add_option("--node", r.node, "This node (default: SLURMD_NODENAME)");
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError &e) {
        return app.exit(e) == 0 ? 0 : 2;
    }
    if (!conf.empty())
        setenv("SLURM_CONF", conf.c_str(), 1);
    try {
        SlurmClient slurm;
        const ControllerAddress ctl = slurm.controller();
        const LeaseConfig lease_conf = load_site_config().lease;
        if (*rep) {
            if (r.job == 0)
                r.job = static_cast<std::uint32_t>(std::strtoul(env_or("SLURM_JOB_ID", "0").c_str(),
                                                                nullptr, 10));
            if (r.node.empty())
                r.node = env_or("SLURMD_NODENAME", short_hostname());
            return report(lease_conf, ctl, r);
        }
        if (!lease_conf.watch) {
            log_line("ai-lease: LeaseWatch=no in ai_select.conf: nothing to do");
            return 0;
        }
        if (opt.node.empty())
            opt.node = short_hostname();
        opt.controller_host = ctl.host;
        opt.controller_port = ctl.port;
        opt.slurm_user = ctl.slurm_user;
        opt.munge_socket = ctl.munge_socket;
        opt.lease = lease_conf;
        struct sigaction sa {};
        sa.sa_handler = on_stop;
        sigaction(SIGTERM, &sa, nullptr);
        sigaction(SIGINT, &sa, nullptr);
        lease_agent::Agent agent(opt, log_line);
        agent.run(g_stop);
        log_line("ai-lease: stopped");
        return 0;
    } catch (const std::exception &e) {
        std::cerr << "ai-lease: " << e.what() << '\n';
        return 1;
    }
}
