#include "slurm_ai/lease/lease.hpp"

#include <charconv>
#include <cmath>
#include <sstream>

namespace slurm_ai::lease {
namespace {

constexpr std::string_view kMagic = "slurm-ai-lease/1";

InputError bad(std::string field, std::string_view text, std::string expected) {
    return InputError{std::move(field), std::string(text.substr(0, 120)), std::move(expected),
                      "lease message", 0};
}

// "KEY=VALUE" words after the magic and the kind; every key of `keys` exactly once.
std::optional<std::map<std::string, std::string>> fields(std::string_view text,
                                                         std::string_view kind,
                                                         std::initializer_list<const char *> keys,
                                                         InputError *error) {
    std::istringstream in{std::string(text)};
    std::string magic, got_kind;
    in >> magic >> got_kind;
    if (magic != kMagic || got_kind != kind) {
        *error = bad("message", text, std::string(kMagic) + " " + std::string(kind) + " ...");
        return std::nullopt;
    }
    std::map<std::string, std::string> out;
    for (std::string word; in >> word;) {
        const auto eq = word.find('=');
        if (eq == std::string::npos ||
            !out.emplace(word.substr(0, eq), word.substr(eq + 1)).second) {
            *error = bad(word.substr(0, eq), text, "KEY=VALUE, each key once");
            return std::nullopt;
        }
    }
    for (const char *k : keys)
        if (!out.count(k)) {
            *error = bad(k, text, std::string("a ") + k + "= field");
            return std::nullopt;
        }
    return out;
}

template <typename T>
std::optional<T> number(const std::string &s) {
    T v{};
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || s.empty())
        return std::nullopt;
    return v;
}

}  // namespace

std::optional<InputError> check(const LeaseTimes &t) {
    auto wrong = [](const char *key, double v, const char *expected) {
        std::ostringstream text;
        text << v;
        return InputError{key, text.str(), expected, "", 0};
    };
    for (auto [key, v] : {std::pair{"LeasePeriod", t.period_s}, std::pair{"LeaseFence", t.fence_s},
                          std::pair{"LeaseLapse", t.lapse_s}, std::pair{"LeaseKill", t.kill_s}})
        if (!std::isfinite(v) || v <= 0)
            return wrong(key, v, "a positive time");
    if (t.fence_s <= t.period_s)
        return wrong("LeaseFence", t.fence_s,
                     "longer than LeasePeriod (a renewal or two may be late)");
    if (t.lapse_s <= t.fence_s)
        return wrong("LeaseLapse", t.lapse_s,
                     "longer than LeaseFence (a node fences before its lease is taken over)");
    return std::nullopt;
}

std::string to_text(const Renewal &r) {
    std::string jobs;
    for (auto id : r.jobs)
        jobs += (jobs.empty() ? "" : ",") + std::to_string(id);
    return std::string(kMagic) + " renew node=" + r.node + " boot=" + std::to_string(r.boot) +
           " seq=" + std::to_string(r.seq) + " jobs=" + jobs;
}

std::string to_text(const Grant &g) {
    return std::string(kMagic) + " grant node=" + g.node + " boot=" + std::to_string(g.boot) +
           " seq=" + std::to_string(g.seq);
}

Parsed<Renewal> parse_renewal(std::string_view text) {
    InputError error;
    auto f = fields(text, "renew", {"node", "boot", "seq", "jobs"}, &error);
    if (!f)
        return error;
    Renewal r;
    r.node = f->at("node");
    auto boot = number<std::uint64_t>(f->at("boot"));
    auto seq = number<std::uint64_t>(f->at("seq"));
    if (r.node.empty())
        return bad("node", text, "a node name");
    if (!boot || !seq)
        return bad(!boot ? "boot" : "seq", text, "a whole number");
    r.boot = *boot;
    r.seq = *seq;
    std::istringstream jobs(f->at("jobs"));
    for (std::string id; std::getline(jobs, id, ',');) {
        auto n = number<std::uint32_t>(id);
        if (!n)
            return bad("jobs", text, "job ids separated by commas");
        r.jobs.push_back(*n);
    }
    return r;
}

Parsed<Grant> parse_grant(std::string_view text) {
    InputError error;
    auto f = fields(text, "grant", {"node", "boot", "seq"}, &error);
    if (!f)
        return error;
    auto boot = number<std::uint64_t>(f->at("boot"));
    auto seq = number<std::uint64_t>(f->at("seq"));
    if (f->at("node").empty())
        return bad("node", text, "a node name");
    if (!boot || !seq)
        return bad(!boot ? "boot" : "seq", text, "a whole number");
    return Grant{f->at("node"), *boot, *seq};
}

bool LeaseBook::renewed(const Renewal &r, double now_s) {
    auto [it, added] = nodes_.try_emplace(r.node);
    Entry &e = it->second;
    if (!added && (r.boot < e.last.boot || (r.boot == e.last.boot && r.seq <= e.last.seq)))
        return false;
    e.last = r;
    e.at = now_s;
    e.reported = false;
    return true;
}

std::vector<std::string> LeaseBook::newly_lapsed(double now_s) {
    std::vector<std::string> out;
    for (auto &[node, e] : nodes_)
        if (!e.reported && !e.last.jobs.empty() && now_s - e.at > times_.lapse_s) {
            e.reported = true;
            out.push_back(node);
        }
    return out;
}

std::vector<std::uint32_t> LeaseBook::jobs_of(const std::string &node) const {
    auto it = nodes_.find(node);
    return it == nodes_.end() ? std::vector<std::uint32_t>{} : it->second.last.jobs;
}

std::optional<double> LeaseBook::last_renewal(const std::string &node) const {
    auto it = nodes_.find(node);
    return it == nodes_.end() ? std::nullopt : std::optional(it->second.at);
}

Renewal LeaseHolder::next(std::vector<std::uint32_t> jobs) {
    return Renewal{node_, boot_, ++seq_, std::move(jobs)};
}

bool LeaseHolder::granted(const Grant &g, double now_s) {
    // A grant of this run, for a renewal it sent, newer than the last one granted (a late
    // or replayed grant renews nothing).
    if (g.node != node_ || g.boot != boot_ || g.seq <= granted_seq_ || g.seq > seq_)
        return false;
    granted_seq_ = g.seq;
    granted_at_ = now_s;
    granted_ = true;
    return true;
}

}  // namespace slurm_ai::lease
