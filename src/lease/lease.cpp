#include "slurm_ai/lease/lease.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cstdio>
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

// "7,9" (or "") into ids; nullopt for anything else.
std::optional<std::vector<std::uint32_t>> ids_of(const std::string &text) {
    std::vector<std::uint32_t> out;
    std::istringstream in(text);
    for (std::string id; std::getline(in, id, ',');) {
        auto n = number<std::uint32_t>(id);
        if (!n)
            return std::nullopt;
        out.push_back(*n);
    }
    return out;
}

}  // namespace

std::string job_list(const std::vector<std::uint32_t> &jobs) {
    std::string out;
    for (auto id : jobs)
        out += (out.empty() ? "" : ",") + std::to_string(id);
    return out;
}

std::string seconds_text(double s) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f s", s);
    return text;
}

double steady_s() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

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

namespace {
// A renewal's fields after the magic and `kind`: a renewal's text, and the start of the
// book's hold lines.
std::string renewal_text(std::string_view kind, const Renewal &r) {
    return std::string(kMagic) + " " + std::string(kind) + " node=" + r.node +
           " boot=" + std::to_string(r.boot) + " seq=" + std::to_string(r.seq) +
           " jobs=" + job_list(r.jobs);
}
}  // namespace

std::string to_text(const Renewal &r) {
    return renewal_text("renew", r);
}

std::string to_text(const Grant &g) {
    return std::string(kMagic) + " grant node=" + g.node + " boot=" + std::to_string(g.boot) +
           " seq=" + std::to_string(g.seq) + " revoked=" + job_list(g.revoked);
}

std::string to_text(const Report &r) {
    std::string why = r.why.substr(0, 120);
    for (char &c : why)
        if (std::isspace(static_cast<unsigned char>(c)) || c == '=')
            c = '_';
    return std::string(kMagic) + " report node=" + r.node + " kind=" + r.kind +
           " job=" + std::to_string(r.job) + " suspect=" + r.suspect + " why=" + why;
}

std::string_view message_kind(std::string_view text) {
    for (std::string_view kind : {"renew", "grant", "report"}) {
        const std::string head = std::string(kMagic) + " " + std::string(kind) + " ";
        if (text.starts_with(head))
            return kind;
    }
    return {};
}


namespace {
// The fields of a renewal, and of the book's hold lines, checked.
Parsed<Renewal> renewal_of(const std::map<std::string, std::string> &f, std::string_view text) {
    Renewal r;
    r.node = f.at("node");
    auto boot = number<std::uint64_t>(f.at("boot"));
    auto seq = number<std::uint64_t>(f.at("seq"));
    if (r.node.empty())
        return bad("node", text, "a node name");
    if (!boot || !seq)
        return bad(!boot ? "boot" : "seq", text, "a whole number");
    r.boot = *boot;
    r.seq = *seq;
    auto jobs = ids_of(f.at("jobs"));
    if (!jobs)
        return bad("jobs", text, "job ids separated by commas");
    r.jobs = std::move(*jobs);
    return r;
}
}  // namespace

Parsed<Renewal> parse_renewal(std::string_view text) {
    InputError error;
    auto f = fields(text, "renew", {"node", "boot", "seq", "jobs"}, &error);
    if (!f)
        return error;
    return renewal_of(*f, text);
}

Parsed<Grant> parse_grant(std::string_view text) {
    InputError error;
    auto f = fields(text, "grant", {"node", "boot", "seq", "revoked"}, &error);
    if (!f)
        return error;
    auto boot = number<std::uint64_t>(f->at("boot"));
    auto seq = number<std::uint64_t>(f->at("seq"));
    if (f->at("node").empty())
        return bad("node", text, "a node name");
    if (!boot || !seq)
        return bad(!boot ? "boot" : "seq", text, "a whole number");
    auto revoked = ids_of(f->at("revoked"));
    if (!revoked)
        return bad("revoked", text, "job ids separated by commas");
    return Grant{f->at("node"), *boot, *seq, std::move(*revoked)};
}

Parsed<Report> parse_report(std::string_view text) {
    InputError error;
    auto f = fields(text, "report", {"node", "kind", "job", "suspect", "why"}, &error);
    if (!f)
        return error;
    Report r{f->at("node"), f->at("kind"), 0, f->at("suspect"), f->at("why")};
    if (r.node.empty())
        return bad("node", text, "a node name");
    if (r.kind != kHealthReport && r.kind != kPeerLostReport)
        return bad("kind", text, "health or peer_lost");
    auto job = number<std::uint32_t>(f->at("job"));
    if (!job || (r.kind == kPeerLostReport) != (*job != 0))
        return bad("job", text, "the job's id for peer_lost, 0 for health");
    r.job = *job;
    if (r.kind == kHealthReport && r.suspect != r.node)
        return bad("suspect", text, "the reporting node itself for a health event");
    return r;
}

bool LeaseBook::renewed(const Renewal &r, double now_s) {
    auto [it, added] = nodes_.try_emplace(r.node);
    Entry &e = it->second;
    if (!added && (r.boot < e.last.boot || (r.boot == e.last.boot && r.seq <= e.last.seq)))
        return false;
    if (added || r.jobs != e.last.jobs)
        changed_ = true;
    e.last = r;
    e.at = now_s;
    e.reported = false;
    // A revoked job's tasks there ended once a renewal leaves it out.
    if (std::erase_if(e.revoked, [&](std::uint32_t id) {
            return std::find(r.jobs.begin(), r.jobs.end(), id) == r.jobs.end();
        }))
        changed_ = true;
    return true;
}

Grant LeaseBook::grant(const Renewal &r) const {
    Grant g{r.node, r.boot, r.seq, {}};
    if (auto it = nodes_.find(r.node); it != nodes_.end())
        for (auto id : r.jobs)
            if (std::binary_search(it->second.revoked.begin(), it->second.revoked.end(), id))
                g.revoked.push_back(id);
    return g;
}

void LeaseBook::take_over(const std::string &node) {
    auto it = nodes_.find(node);
    if (it == nodes_.end())
        return;
    auto &revoked = it->second.revoked;
    revoked.insert(revoked.end(), it->second.last.jobs.begin(), it->second.last.jobs.end());
    std::sort(revoked.begin(), revoked.end());
    revoked.erase(std::unique(revoked.begin(), revoked.end()), revoked.end());
    changed_ = true;
}

std::string LeaseBook::saved() const {
    std::string out;
    for (const auto &[node, e] : nodes_)
        if (!e.last.jobs.empty() || !e.revoked.empty())
            out += renewal_text("hold", e.last) + " revoked=" + job_list(e.revoked) + "\n";
    return out;
}

std::size_t LeaseBook::nodes_with_jobs() const {
    return static_cast<std::size_t>(std::count_if(
        nodes_.begin(), nodes_.end(), [](const auto &n) { return !n.second.last.jobs.empty(); }));
}

std::size_t LeaseBook::revoked_jobs() const {
    std::size_t n = 0;
    for (const auto &[node, e] : nodes_)
        n += e.revoked.size();
    return n;
}

std::optional<InputError> LeaseBook::restore(std::string_view text, double now_s) {
    std::map<std::string, Entry> got;
    std::istringstream in{std::string(text)};
    int line_no = 0;
    for (std::string line; std::getline(in, line);) {
        ++line_no;
        if (line.empty())
            continue;
        InputError error;
        auto f = fields(line, "hold", {"node", "boot", "seq", "jobs", "revoked"}, &error);
        Parsed<Renewal> r = f ? renewal_of(*f, line) : Parsed<Renewal>(error);
        auto revoked = f ? ids_of(f->at("revoked")) : std::nullopt;
        if (r && !revoked)
            r = bad("revoked", line, "job ids separated by commas");
        if (!r) {
            error = r.error();
            error.line = line_no;
            return error;
        }
        Entry &e = got[r.value().node];
        e.last = r.value();
        e.at = now_s;
        e.revoked = std::move(*revoked);
        std::sort(e.revoked.begin(), e.revoked.end());
    }
    nodes_ = std::move(got);
    changed_ = false;
    return std::nullopt;
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
