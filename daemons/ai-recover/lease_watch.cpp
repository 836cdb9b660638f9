// Built with libmunge only (SLURM_AI_HAVE_MUNGE): without it `watch` takes no leases.
#include "lease_watch.hpp"

#if SLURM_AI_HAVE_MUNGE

#include <spawn.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>

#include "slurm_ai/common/file_io.hpp"
#include "slurm_ai/lease/munge_seal.hpp"

extern char **environ;

namespace slurm_ai::recover {
LeaseWatch::LeaseWatch(LeaseConfig conf, ControllerAddress controller,
                       std::vector<std::string> program, std::string book, Log log)
    : conf_(std::move(conf)),
      ctl_(std::move(controller)),
      program_(std::move(program)),
      log_(std::move(log)),
      socket_(lease::Datagram::listen(conf_.port)),
      book_(conf_.times),
      book_path_(std::move(book)) {
    restore_book();
}

// The book a previous run left: its nodes count as renewed now (LeaseBook::restore). A
// file that cannot be read is logged and left for an admin; the watch starts empty.
void LeaseWatch::restore_book() {
    std::error_code ec;
    if (!std::filesystem::exists(book_path_, ec))
        return;
    auto text = read_text_file(book_path_);
    std::optional<InputError> error;
    if (!text)
        error = text.error();
    else if ((error = book_.restore(*text, lease::steady_s())))
        error->source = book_path_;
    if (error) {
        log_("leases: the saved lease book is not used: " + error->message());
        return;
    }
    log_("leases: restored from " + book_path_ + ": " +
         std::to_string(book_.nodes_with_jobs()) + " nodes with checkpointing jobs (each lapses " +
         lease::seconds_text(conf_.times.lapse_s) + " from now unless renewed), " +
         std::to_string(book_.revoked_jobs()) + " jobs revoked");
}

// After each change; a write that failed is tried again on the next turn, and logged once.
void LeaseWatch::save_book() {
    if (!book_.take_changed() && !save_failed_)
        return;
    try {
        std::filesystem::create_directories(std::filesystem::path(book_path_).parent_path());
        write_text_file_atomically(book_path_, book_.saved());
        if (save_failed_)
            log_("leases: the lease book is saved again");
        save_failed_ = false;
    } catch (const std::exception &e) {
        if (!save_failed_)
            log_(std::string("leases: cannot save the lease book (trying again): ") + e.what());
        save_failed_ = true;
    }
}

void LeaseWatch::run(const std::atomic<bool> &stop) {
    log_("leases: taking renewals on UDP port " + std::to_string(conf_.port) + ", lapse after " +
         lease::seconds_text(conf_.times.lapse_s));
    double noted = lease::steady_s();
    while (!stop) {
        if (auto got = socket_.receive(0.2); got && !got->first.empty())
            on_message(got->first, got->second, lease::steady_s());
        check_lapses(lease::steady_s());
        reap();
        save_book();
        if (refused_ > 0 && lease::steady_s() - noted > 60) {
            log_("leases: " + std::to_string(refused_) +
                 " messages refused in the last minute (not sealed by root or SlurmUser with "
                 "this cluster's munge key, replayed, or malformed)");
            refused_ = 0;
            noted = lease::steady_s();
        }
    }
    for (auto &[pid, child] : children_)
        ::waitpid(pid, nullptr, 0);  // a recovery under way finishes
}

void LeaseWatch::on_message(const std::string &credential, const lease::Peer &from, double now) {
    auto opened = lease::open_sealed(credential, ctl_.munge_socket);
    if (!opened) {
        ++refused_;
        return;
    }
    const std::string &text = opened->payload;
    const auto kind = lease::message_kind(text);
    if (kind == "renew") {
        auto r = lease::parse_renewal(text);
        if (!r || !trusted(opened->uid) || !book_.renewed(r.value(), now)) {
            ++refused_;
            return;
        }
        try {
            const auto grant = lease::to_text(book_.grant(r.value()));
            socket_.send_to(lease::seal(grant, ctl_.munge_socket), from);
        } catch (const std::exception &e) {
            log_(std::string("leases: cannot grant: ") + e.what());  // munged down
        }
    } else if (kind == "report") {
        auto r = lease::parse_report(text);
        if (!r) {
            ++refused_;
            return;
        }
        on_report(r.value(), opened->uid, now);
    } else {
        ++refused_;
    }
}

// A health event (from a node's agent, as root) or a task's peer_lost (as the job's user,
// which lease-down checks).
void LeaseWatch::on_report(const lease::Report &r, std::uint32_t uid, double now) {
    if (r.kind == lease::kHealthReport) {
        if (!trusted(uid)) {
            ++refused_;
            return;
        }
        if (busy(r.node, 0) || repeated_health(r, now))
            return;
        log_("leases: " + r.node + " reports a health event: " + r.why);
        spawn({"--drain", "--why", "health event on " + r.node + ": " + r.why, r.node},
              {r.node, 0});
        return;
    }
    if (busy(r.suspect, r.job))
        return;
    log_("leases: job " + std::to_string(r.job) + "'s task on " + r.node +
         " reports a peer lost (" + r.why + "), suspect " +
         (r.suspect.empty() ? std::string("any other node of the job") : r.suspect));
    std::vector<std::string> args{"--probe", "--job", std::to_string(r.job), "--uid",
                                  std::to_string(uid), "--from", r.node, "--why",
                                  "job " + std::to_string(r.job) + "'s task on " + r.node +
                                      " lost a peer (" + r.why + ")"};
    if (!r.suspect.empty())
        args.push_back(r.suspect);
    spawn(std::move(args), {"", r.job});
}

// A copy of a health report acted on less than kHealthRepeatS ago (the agent sends each
// one more than once).
bool LeaseWatch::repeated_health(const lease::Report &r, double now) {
    std::erase_if(health_seen_,
                  [now](const auto &seen) { return now - seen.second >= lease::kHealthRepeatS; });
    return !health_seen_.try_emplace(r.node + " " + r.why, now).second;
}

void LeaseWatch::check_lapses(double now) {
    for (const auto &node : book_.newly_lapsed(now)) {
        const std::string since =
            lease::seconds_text(now - book_.last_renewal(node).value_or(now));
        log_("leases: " + node + "'s lease lapsed, last renewed " + since + " ago");
        if (busy(node, 0))
            continue;
        spawn({"--probe", "--why", "lease lapsed (no renewal for " + since + ")", node}, {node, 0});
    }
}

bool LeaseWatch::busy(const std::string &node, std::uint32_t job) const {
    for (const auto &[pid, c] : children_)
        if ((!node.empty() && c.node == node) || (job != 0 && c.job == job))
            return true;
    return false;
}

void LeaseWatch::spawn(std::vector<std::string> args, Child child) {
    std::vector<std::string> argv = program_;
    argv.push_back("lease-down");
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char *> cargv;
    for (auto &a : argv)
        cargv.push_back(a.data());
    cargv.push_back(nullptr);
    pid_t pid = 0;
    if (int rc = posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, cargv.data(), environ)) {
        log_("leases: cannot start lease-down: " + std::string(std::strerror(rc)));
        return;
    }
    children_.emplace(pid, std::move(child));
}

// A lease-down that ended: 0 means its node is DOWN and its jobs recovered elsewhere, so
// the node's lease is taken over (its agent is told to end those jobs' tasks).
void LeaseWatch::reap() {
    for (auto it = children_.begin(); it != children_.end();) {
        int status = 0;
        if (::waitpid(it->first, &status, WNOHANG) != it->first) {
            ++it;
            continue;
        }
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && !it->second.node.empty())
            book_.take_over(it->second.node);
        it = children_.erase(it);
    }
}

}  // namespace slurm_ai::recover

#endif  // SLURM_AI_HAVE_MUNGE
