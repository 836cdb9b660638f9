#include "slurm_ai/checkpoint/checkpoint_recovery.hpp"

#include <algorithm>
#include <set>

#include "slurm_ai/common/enum_names.hpp"
#include "slurm_ai/common/hostlist.hpp"

namespace slurm_ai::checkpoint {
namespace {

std::vector<std::string> minus(const std::vector<std::string> &a,
                               const std::vector<std::string> &b) {
    std::set<std::string> drop(b.begin(), b.end());
    std::vector<std::string> out;
    for (const auto &x : a)
        if (!drop.count(x))
            out.push_back(x);
    return out;
}

std::vector<std::string> both(const std::vector<std::string> &a,
                              const std::vector<std::string> &b) {
    std::set<std::string> keep(b.begin(), b.end());
    std::vector<std::string> out;
    for (const auto &x : a)
        if (keep.count(x))
            out.push_back(x);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

}  // namespace

std::string_view to_string(Action a) {
    static constexpr std::string_view kNames[] = {"none", "shrink", "requeue", "exclude"};
    return enum_name(a, kNames);
}

std::vector<std::string> plan_exclusions(const std::vector<std::string> &existing,
                                         const std::vector<std::string> &lost,
                                         const std::vector<std::string> &partition_nodes,
                                         std::uint32_t needed, std::string *note) {
    std::set<std::string> all(existing.begin(), existing.end());
    all.insert(lost.begin(), lost.end());
    std::vector<std::string> merged(all.begin(), all.end());
    if (partition_nodes.empty() || minus(partition_nodes, merged).size() >= needed)
        return merged;
    if (note)
        *note = "not excluding " + compress_hostlist(minus(merged, existing)) + ": the job needs " +
                std::to_string(needed) + " of its partition's " +
                std::to_string(partition_nodes.size()) + " nodes";
    std::vector<std::string> kept(existing.begin(), existing.end());
    std::sort(kept.begin(), kept.end());
    return kept;
}

RecoveryPlan plan_recovery(const RecoveryInput &in) {
    RecoveryPlan p;
    const JobView &job = in.job;
    p.lost = both(in.failed, in.run_nodes);
    if (p.lost.empty()) {
        p.why = "no failed node belongs to the job";
        return p;
    }
    std::string lost = compress_hostlist(p.lost);
    std::uint32_t needed = job.num_nodes ? job.num_nodes : 1;
    std::string note;
    p.exclude = plan_exclusions(job.excluded, p.lost, in.partition_nodes, needed, &note);
    auto with_note = [&](std::string s) { return note.empty() ? s : s + " (" + note + ")"; };

    if (job.pending()) {
        p.action = Action::kExclude;
        p.why = with_note("lost " + lost + " and is back in the queue: excluded " + lost);
        return p;
    }
    const bool ended_by_failure = ended_by_node_failure(job, in.failed_at);
    if (!job.running() && !ended_by_failure) {
        p.exclude = job.excluded;
        p.why = "lost " + lost + " but is " + job.state + ": nothing to restart";
        return p;
    }
    if (ended_by_failure) {
        if (!job.requeue) {
            p.exclude = job.excluded;
            p.why = "lost " + lost + " and ended " + job.state +
                    " but does not allow requeue (--no-requeue): left to Slurm";
            return p;
        }
        p.action = Action::kRequeue;
        p.why = with_note("lost " + lost + " and ended " + job.state + " with it: requeued with " +
                          lost + " excluded");
        return p;
    }
    p.survivors = minus(job.nodes, p.lost);
    p.ask_checkpoint = in.hints.checkpoint.has_value() && !p.survivors.empty();
    const bool batch_host_lost =
        !job.batch_host.empty() &&
        std::find(p.lost.begin(), p.lost.end(), job.batch_host) != p.lost.end();
    if (in.hints.elastic && !batch_host_lost && !p.survivors.empty() &&
        p.survivors.size() >= in.hints.elastic->min_nodes) {
        p.action = Action::kShrink;
        p.exclude = job.excluded;  // a running job's exclusions no longer matter
        p.why = "lost " + lost + "; elastic " + std::to_string(in.hints.elastic->min_nodes) + ":" +
                std::to_string(in.hints.elastic->max_nodes) + " job shrinks to its " +
                std::to_string(p.survivors.size()) + " surviving nodes";
        return p;
    }
    if (!job.requeue) {
        p.exclude = job.excluded;
        p.why = "lost " + lost + " but does not allow requeue (--no-requeue): left to Slurm";
        return p;
    }
    p.action = Action::kRequeue;
    std::string because;
    if (batch_host_lost)
        because = " (its batch host)";
    else if (in.hints.elastic)
        because = ", below its elastic minimum of " + std::to_string(in.hints.elastic->min_nodes);
    p.why = with_note("lost " + lost + because + ": requeued with " + lost + " excluded");
    return p;
}

bool ended_by_node_failure(const JobView &job, std::int64_t failed_at) {
    constexpr std::int64_t kWindow = 300;
    return (job.state == "FAILED" || job.state == "NODE_FAIL") && failed_at > 0 &&
           job.end_time > 0 && job.end_time >= failed_at - kWindow &&
           job.end_time <= failed_at + kWindow;
}

bool begin_delayed_by_requeue(const JobView &job, std::int64_t now) {
    // Slurm's credential lifetime (AuthInfo=cred_expire) defaults to 120 s; a few times
    // that covers any sane setting without catching a user's --begin hours ahead.
    constexpr std::int64_t kMaxDelay = 4 * 1200;
    return job.pending() && job.restarts > 0 && job.start_time > now && job.submit_time > 0 &&
           job.start_time - job.submit_time <= kMaxDelay;
}

std::optional<std::int64_t> checkpoint_signal_due(const JobView &job, const CheckpointSpec &spec) {
    if (!job.running() || job.end_time <= 0)
        return std::nullopt;
    return job.end_time - static_cast<std::int64_t>(spec.signal_before_s);
}

}  // namespace slurm_ai::checkpoint
