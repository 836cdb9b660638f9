#include "slurm_ai/checkpoint_recovery.hpp"

#include <algorithm>
#include <charconv>
#include <ctime>
#include <set>

#include "slurm_ai/hostlist.hpp"

namespace slurm_ai::checkpoint {
namespace {

// The value of " Key=" in a `scontrol -o` line; nullopt when the key is absent. Keys are
// matched at the start of the line or after a blank, so "ReqNodeList=" is not "NodeList=".
std::optional<std::string_view> field(std::string_view line, std::string_view key) {
    for (std::size_t pos = 0; (pos = line.find(key, pos)) != std::string_view::npos; ++pos) {
        bool starts = pos == 0 || line[pos - 1] == ' ';
        std::size_t eq = pos + key.size();
        if (starts && eq < line.size() && line[eq] == '=') {
            auto end = line.find(' ', eq + 1);
            return line.substr(eq + 1, end == std::string_view::npos ? end : end - eq - 1);
        }
    }
    return std::nullopt;
}

bool is_null(std::string_view v) {
    return v.empty() || v == "(null)" || v == "None" || v == "Unknown" || v == "N/A";
}

// "2026-11-22T13:05:02" in local time; 0 for Unknown/None.
std::int64_t parse_time(std::string_view v) {
    if (is_null(v))
        return 0;
    std::tm tm{};
    std::string s(v);
    if (!strptime(s.c_str(), "%Y-%m-%dT%H:%M:%S", &tm))
        return 0;
    tm.tm_isdst = -1;
    return static_cast<std::int64_t>(std::mktime(&tm));
}

std::uint32_t leading_uint(std::string_view v) {
    std::uint32_t out = 0;
    std::from_chars(v.data(), v.data() + v.size(), out);
    return out;
}

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

Parsed<JobView> parse_job_line(std::string_view line) {
    auto bad = [&](std::string_view what) {
        return InputError{"scontrol show job", std::string(line.substr(0, 120)), std::string(what),
                          "", 0};
    };
    auto id = field(line, "JobId");
    std::uint32_t job_id = 0;
    if (!id || std::from_chars(id->data(), id->data() + id->size(), job_id).ec != std::errc() ||
        job_id == 0)
        return bad("a line starting with JobId=<number>");
    auto state = field(line, "JobState");
    if (!state || state->empty())
        return bad("a JobState= field");
    JobView j;
    j.job_id = job_id;
    j.state = std::string(*state);
    j.reason = std::string(field(line, "Reason").value_or(""));
    for (auto [key, out] :
         {std::pair{"NodeList", &j.nodes}, std::pair{"ExcNodeList", &j.excluded}}) {
        auto v = field(line, key);
        if (!v || is_null(*v))
            continue;
        auto names = expand_hostlist(*v, key);
        if (!names)
            return names.error();
        *out = std::move(names).value();
    }
    if (auto v = field(line, "BatchHost"); v && !is_null(*v))
        j.batch_host = std::string(*v);
    j.partition = std::string(field(line, "Partition").value_or(""));
    j.requeue = field(line, "Requeue").value_or("0") == "1";
    j.restarts = leading_uint(field(line, "Restarts").value_or("0"));
    j.num_nodes = leading_uint(field(line, "NumNodes").value_or("0"));
    j.submit_time = parse_time(field(line, "SubmitTime").value_or(""));
    j.start_time = parse_time(field(line, "StartTime").value_or(""));
    j.end_time = parse_time(field(line, "EndTime").value_or(""));
    return j;
}

std::string node_reason(std::string_view show_node_line) {
    // Reason= is the last field but one and may hold blanks: "Reason=Not responding
    // [slurm@2026-11-22T13:05:02]". Take it up to the " [user@time]" stamp or the end.
    auto pos = show_node_line.find(" Reason=");
    if (pos == std::string_view::npos)
        return {};
    auto v = show_node_line.substr(pos + 8);
    if (auto stamp = v.find(" ["); stamp != std::string_view::npos)
        v = v.substr(0, stamp);
    while (!v.empty() && (v.back() == ' ' || v.back() == '\n'))
        v.remove_suffix(1);
    return is_null(v) ? std::string() : std::string(v);
}

std::string_view to_string(Action a) {
    switch (a) {
        case Action::kShrink:
            return "shrink";
        case Action::kRequeue:
            return "requeue";
        case Action::kExclude:
            return "exclude";
        case Action::kNone:
            break;
    }
    return "none";
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
