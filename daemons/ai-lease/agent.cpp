#include "agent.hpp"

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

#include "slurm_ai/lease/munge_seal.hpp"
#include "slurm_ai/lease/probe.hpp"

namespace slurm_ai::lease_agent {
namespace {

std::uint64_t epoch_ms() {
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                          std::chrono::system_clock::now().time_since_epoch())
                                          .count());
}

}  // namespace

Agent::Agent(AgentOptions options, Log log)
    : opt_(std::move(options)),
      log_(std::move(log)),
      holder_(opt_.lease.times, opt_.node, epoch_ms(), lease::steady_s()) {
    // %n: this node's name (one file per node where nodes share a file system).
    std::string health = opt_.lease.health_file;
    for (auto at = health.find("%n"); at != std::string::npos; at = health.find("%n", at))
        health.replace(at, 2, opt_.node);
    if (!health.empty())
        health_.emplace(health);
}

void Agent::run(const std::atomic<bool> &stop) {
    log_("ai-lease: node " + opt_.node + ", renewing with " + opt_.controller_host + ":" +
         std::to_string(opt_.lease.port) + " every " +
         lease::seconds_text(opt_.lease.times.period_s) +
         (health_ ? ", health events from " + health_->path() : std::string()));
    double next = lease::steady_s();
    while (!stop) {
        double now = lease::steady_s();
        if (now >= next) {
            renew();
            next = std::max(next + opt_.lease.times.period_s, now);
        }
        if (!socket_) {
            std::this_thread::sleep_for(std::chrono::duration<double>(std::min(0.2, next - now)));
        } else if (auto got = socket_->receive(std::min(0.2, next - now));
                   got && !got->first.empty()) {
            on_datagram(got->first, lease::steady_s());
        }
        fence(lease::steady_s());
        read_health();
    }
}

bool Agent::connect() {
    try {
        socket_.emplace(lease::Datagram::toward(opt_.controller_host, opt_.lease.port));
        controller_address_ = socket_->peer_address();
        connect_error_.clear();
        return true;
    } catch (const std::exception &e) {
        socket_.reset();
        if (connect_error_ != e.what())
            log_(std::string("ai-lease: ") + e.what() + " (trying again every period)");
        connect_error_ = e.what();
        return false;
    }
}

void Agent::send_sealed(const std::string &text) {
    if (!socket_ && !connect())
        return;
    try {
        // A send the kernel refuses (no route: cut off) is fence()'s to handle.
        socket_->send(lease::seal(text, opt_.munge_socket));
        noted_seal_error_ = false;
    } catch (const std::exception &e) {
        if (!noted_seal_error_)
            log_(std::string("ai-lease: cannot seal a message: ") + e.what());
        noted_seal_error_ = true;
    }
}

void Agent::renew() {
    tasks_ = lease::node_tasks(opt_.proc_root, opt_.node);
    jobs_ = lease::checkpointing_jobs(tasks_);
    if (!frozen_.empty() && !killed_)
        lease::signal_jobs(tasks_, frozen_, SIGSTOP);  // a fenced job's new processes too
    send_sealed(lease::to_text(holder_.next(jobs_)));
    for (auto &r : resend_) {
        send_sealed(r.text);
        --r.left;
    }
    std::erase_if(resend_, [](const Resend &r) { return r.left <= 0; });
}

void Agent::on_datagram(const std::string &credential, double now) {
    auto opened = lease::open_sealed(credential, opt_.munge_socket);
    if (!opened || (opened->uid != 0 && opened->uid != opt_.slurm_user))
        return;  // not ai-recover's
    auto g = lease::parse_grant(opened->payload);
    if (g && holder_.granted(g.value(), now))
        on_grant(g.value());
}

void Agent::on_grant(const lease::Grant &g) {
    if (!g.revoked.empty()) {
        // Recovered elsewhere while this node was out of touch: these processes must not
        // go on, frozen or not. (The grant answers the renewal tasks_ was read for.)
        auto pids = lease::signal_jobs(tasks_, g.revoked, SIGKILL);
        if (!pids.empty())
            log_("ai-lease: jobs " + lease::job_list(g.revoked) + " run elsewhere now: killed " +
                 std::to_string(pids.size()) + " processes");
    }
    noted_unfenced_ = false;
    if (frozen_.empty())
        return;
    std::vector<std::uint32_t> thaw;
    std::set_difference(frozen_.begin(), frozen_.end(), g.revoked.begin(), g.revoked.end(),
                        std::back_inserter(thaw));
    if (!thaw.empty() && !killed_) {
        lease::signal_jobs(tasks_, thaw, SIGCONT);
        log_("ai-lease: granted again: jobs " + lease::job_list(thaw) + " go on");
    }
    frozen_.clear();
    killed_ = false;
}

// No grant for LeaseFence: fence when the controller's host is silent too (a restart of
// ai-recover or slurmctld leaves the host answering, and fences nothing).
void Agent::fence(double now) {
    if (!holder_.must_fence(now) || (jobs_.empty() && frozen_.empty()))
        return;
    const double silent_for = now - holder_.granted_at();
    if (!frozen_.empty()) {
        // Frozen (renew() freezes their new processes too): killed after LeaseKill.
        if (holder_.must_kill(now) && !killed_) {
            auto pids = lease::signal_jobs(tasks_, frozen_, SIGKILL);
            const double fenced_for = silent_for - opt_.lease.times.fence_s;
            log_("ai-lease: fenced for " + lease::seconds_text(fenced_for) +
                 ": killed " + std::to_string(pids.size()) + " processes of jobs " +
                 lease::job_list(frozen_));
            killed_ = true;
        }
        return;
    }
    if (now - last_probe_ < opt_.lease.times.period_s)
        return;
    last_probe_ = now;
    const std::string &host =
        controller_address_.empty() ? opt_.controller_host : controller_address_;
    const auto reach = lease::probe_tcp(host, opt_.controller_port, 0.5);
    if (reach != lease::Reach::kSilent) {
        connect();  // the controller answers: maybe at another address now
        if (!noted_unfenced_)
            log_("ai-lease: no grant for " + lease::seconds_text(silent_for) +
                 ", but slurmctld's host " + lease::to_string(reach) +
                 ": not fencing (ai-recover restarting?)");
        noted_unfenced_ = true;
        return;
    }
    frozen_ = jobs_;
    auto pids = lease::signal_jobs(tasks_, frozen_, SIGSTOP);
    log_("ai-lease: no grant for " + lease::seconds_text(silent_for) + " and " +
         opt_.controller_host + " silent: fenced jobs " + lease::job_list(frozen_) + " (" +
         std::to_string(pids.size()) + " processes frozen)");
}

void Agent::read_health() {
    if (!health_)
        return;
    for (const auto &line : health_->new_lines()) {
        auto e = lease::fatal_xid(line);
        if (!e)
            continue;
        log_("ai-lease: health event: " + e->text);
        lease::Report r{opt_.node, std::string(lease::kHealthReport), 0, opt_.node,
                        "Xid " + std::to_string(e->xid) + " on " + e->device};
        resend_.push_back({lease::to_text(r), lease::kHealthResends});
        send_sealed(resend_.back().text);
    }
}

}  // namespace slurm_ai::lease_agent
