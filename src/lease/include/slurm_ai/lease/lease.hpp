// The suite's own node-failure signal: a lease per compute node, independent of Slurm's
// SlurmdTimeout (docs/checkpoint.md, "Leases"). Each node's ai-lease agent renews its
// lease with ai-recover every LeasePeriod; ai-recover grants each renewal. Both messages
// are munge credentials (munge_seal.hpp), so no user can fake or suppress one.
//
//   - ai-recover counts a node whose lease went unrenewed for LeaseLapse as lapsed; a
//     second, independent probe (slurmd's port) confirms it before the node is set DOWN.
//   - The agent fences: with no grant for LeaseFence (shorter than LeaseLapse) while the
//     controller's host does not answer either, it freezes the node's --ai-checkpoint
//     tasks (SIGSTOP), so that a node cut off from the controller never runs a job that
//     is starting again elsewhere; a grant thaws them (the controller came back before
//     it took the lease over); after LeaseKill frozen they are killed. A restart of
//     ai-recover or slurmctld, whose host still answers, fences nothing.
//
// This file holds the messages' text and the two sides' bookkeeping, without sockets,
// munge or clocks: the callers pass the time in.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "slurm_ai/common/input_error.hpp"

namespace slurm_ai::lease {

struct LeaseTimes {
    double period_s = 1.0;  // between renewals
    double fence_s = 2.0;   // the agent fences after this long without a grant
    double lapse_s = 3.0;   // ai-recover counts the lease lapsed after this long
    double kill_s = 30.0;   // frozen this long, fenced tasks are killed
    bool operator==(const LeaseTimes &) const = default;
};
// The times make sense together: positive, a period under the fence time, the fence time
// under the lapse time (a node fences before its lease can be taken over). The error
// names the key (LeasePeriod, LeaseFence, LeaseLapse, LeaseKill) and the value.
std::optional<InputError> check(const LeaseTimes &t);

// A renewal, agent to ai-recover: the node, a sequence number that only grows for one run
// of the agent (`boot` tells runs apart), and the --ai-checkpoint jobs it runs now.
struct Renewal {
    std::string node;
    std::uint64_t boot = 0;  // the agent's start, ms since the epoch
    std::uint64_t seq = 0;
    std::vector<std::uint32_t> jobs;
    bool operator==(const Renewal &) const = default;
};
// A grant, ai-recover to agent: the renewal it answers, and the jobs of that renewal whose
// lease ai-recover took over (it found the node's lease lapsed and recovered them
// elsewhere): their tasks here must end, not go on.
struct Grant {
    std::string node;
    std::uint64_t boot = 0;
    std::uint64_t seq = 0;
    std::vector<std::uint32_t> revoked;
    bool operator==(const Grant &) const = default;
};

// A report, to ai-recover, of a failure that a lease would find only later:
//   health     the agent read a fatal GPU event in the admin's health file; suspect is its
//              own node
//   peer_lost  a task of `job` saw a peer fail (a gloo or NCCL error) and said so with the
//              command its environment names (AI_REPORT_FAILURE); suspect is the peer's
//              node, or empty when the task cannot tell (any other node of the job)
struct Report {
    std::string node;  // where it was seen
    std::string kind;  // "health" or "peer_lost"
    std::uint32_t job = 0;  // peer_lost: the job; health: 0
    std::string suspect;
    std::string why;  // a few words ("Xid 79", "NCCL error"); blanks are sent as '_'
    bool operator==(const Report &) const = default;
};
inline constexpr std::string_view kHealthReport = "health";
inline constexpr std::string_view kPeerLostReport = "peer_lost";
// A health report goes out once more with each of the next renewals, this many times (a
// datagram can be lost); ai-recover acts on the first copy and drops the others for
// kHealthRepeatS seconds.
inline constexpr int kHealthResends = 2;
inline constexpr double kHealthRepeatS = 60.0;

// "slurm-ai-lease/1 renew node=c1 boot=1795732147000 seq=42 jobs=7,9"
std::string to_text(const Renewal &r);
// "slurm-ai-lease/1 grant node=c1 boot=1795732147000 seq=42 revoked="
std::string to_text(const Grant &g);
// "slurm-ai-lease/1 report node=c2 kind=peer_lost job=7 suspect=c3 why=NCCL_error"
std::string to_text(const Report &r);
// "7,9": the job lists of the messages, and of the daemons' logs.
std::string job_list(const std::vector<std::uint32_t> &jobs);
// "3.2 s", for the daemons' logs.
std::string seconds_text(double s);
// The clock both sides keep leases by: steady, so that a step of the wall clock (NTP)
// lapses no lease and fences no node. Seconds.
double steady_s();

// Errors name the field and the text; any other message is an error, not a guess.
Parsed<Renewal> parse_renewal(std::string_view text);
Parsed<Grant> parse_grant(std::string_view text);
Parsed<Report> parse_report(std::string_view text);
// The kind of a message ("renew", "grant", "report"), "" for no lease message.
std::string_view message_kind(std::string_view text);

// ai-recover's side: the last renewal of every node, and which have lapsed.
class LeaseBook {
  public:
    explicit LeaseBook(LeaseTimes times) : times_(times) {}
    // A renewal received at now_s. False (and nothing kept) for one older than the last
    // of the same run (a replay) or of an older run.
    bool renewed(const Renewal &r, double now_s);
    // Nodes whose lease lapsed at now_s: last renewed more than lapse_s ago, reported
    // once per lapse (the next renewal rearms them). Only nodes that were running
    // --ai-checkpoint jobs at their last renewal: their jobs are what a lapse costs.
    std::vector<std::string> newly_lapsed(double now_s);
    // The grant of a renewal just taken: the renewal's jobs that were taken over.
    Grant grant(const Renewal &r) const;
    // ai-recover confirmed the node's lapse and recovers its jobs elsewhere: the jobs of
    // its last renewal are revoked there, until a renewal no longer lists them (their
    // tasks ended).
    void take_over(const std::string &node);
    // The jobs a node ran at its last renewal; empty for a node never heard of.
    std::vector<std::uint32_t> jobs_of(const std::string &node) const;
    std::optional<double> last_renewal(const std::string &node) const;

    // What ai-recover keeps across its restarts (state_paths::lease_book): a line for each
    // node that runs --ai-checkpoint jobs or has jobs revoked,
    //   "slurm-ai-lease/1 hold node=c1 boot=1795732147000 seq=42 jobs=7,9 revoked=7".
    // Without it a restarted ai-recover would never count a node that died meanwhile as
    // lapsed (it had no renewal to miss), and would thaw the old copy of a job it had
    // taken over when the node came back.
    std::string saved() const;
    // Puts a saved book back at now_s. Each node counts as renewed then: its agent's next
    // renewal goes on unnoticed, and a node that never renews lapses lapse_s later. On an
    // error (it names the line's field) nothing is restored.
    std::optional<InputError> restore(std::string_view text, double now_s);
    // True once after each change that saved() shows (jobs, revoked lists, nodes), so the
    // file is written on those and not on every renewal.
    bool take_changed() { return std::exchange(changed_, false); }
    // For ai-metrics: the nodes whose last renewal named --ai-checkpoint jobs, and the jobs
    // taken over whose tasks are not known to be gone yet, over all nodes.
    std::size_t nodes_with_jobs() const;
    std::size_t revoked_jobs() const;

  private:
    struct Entry {
        Renewal last;
        double at = 0;
        bool reported = false;
        std::vector<std::uint32_t> revoked;  // sorted
    };
    LeaseTimes times_;
    std::map<std::string, Entry> nodes_;
    bool changed_ = false;
};

// The agent's side: when it last got a grant, and whether it must fence.
class LeaseHolder {
  public:
    LeaseHolder(LeaseTimes times, std::string node, std::uint64_t boot, double now_s)
        : times_(times), node_(std::move(node)), boot_(boot), granted_at_(now_s) {}
    // The next renewal to send, with the jobs running now.
    Renewal next(std::vector<std::uint32_t> jobs);
    // A grant received at now_s: true when it answers this agent's own renewal (its node,
    // its run, a sequence number it sent).
    bool granted(const Grant &g, double now_s);
    // No grant for fence_s since the last one: the node may be cut off, and its jobs may
    // start elsewhere. Never before a first grant (a cluster whose ai-recover does not
    // watch leases fences nothing).
    bool must_fence(double now_s) const {
        return granted_ && now_s - granted_at_ > times_.fence_s;
    }
    // Fenced for kill_s already.
    bool must_kill(double now_s) const {
        return granted_ && now_s - granted_at_ > times_.fence_s + times_.kill_s;
    }
    double granted_at() const { return granted_at_; }

  private:
    LeaseTimes times_;
    std::string node_;
    std::uint64_t boot_;
    std::uint64_t seq_ = 0, granted_seq_ = 0;
    double granted_at_;
    bool granted_ = false;
};

}  // namespace slurm_ai::lease
