#include "slurm_ai/job/job_hints.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <utility>
#include <string>

#include "slurm_ai/common/text_scan.hpp"

namespace slurm_ai {
namespace {

using text::lower;
using text::split;
using text::trim;

InputError error(std::string_view field, std::string_view value, std::string expected) {
    return InputError{std::string(field), std::string(value), std::move(expected), {}, 0};
}

// A leading decimal number and the unit after it ("1.5G" -> 1.5, "g"; "90 s" -> 90, "s"),
// or nothing when the text does not start with one.
std::optional<std::pair<double, std::string>> number_and_unit(std::string_view text) {
    auto t = trim(text);
    std::size_t i = 0;
    while (i < t.size() && (std::isdigit(static_cast<unsigned char>(t[i])) || t[i] == '.'))
        ++i;
    std::string number(t.substr(0, i));
    char *end = nullptr;
    const double v = std::strtod(number.c_str(), &end);
    if (i == 0 || end != number.c_str() + number.size() || !std::isfinite(v))
        return std::nullopt;
    return std::make_pair(v, lower(trim(t.substr(i))));
}

}  // namespace

Parsed<std::uint32_t> parse_count(std::string_view field, std::string_view text, std::uint32_t min,
                                  std::uint32_t max) {
    std::uint64_t v = 0;
    auto t = trim(text);
    auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (t.empty() || ec != std::errc() || end != t.data() + t.size() || v < min || v > max)
        return error(field, text,
                     "an integer from " + std::to_string(min) + " to " + std::to_string(max));
    return static_cast<std::uint32_t>(v);
}

// "USR1", "SIGUSR1", "usr1" or a number.
Parsed<int> parse_signal(std::string_view field, std::string_view text) {
    static constexpr std::array<std::pair<std::string_view, int>, 10> kNames{{
        {"HUP", SIGHUP},
        {"INT", SIGINT},
        {"QUIT", SIGQUIT},
        {"USR1", SIGUSR1},
        {"USR2", SIGUSR2},
        {"TERM", SIGTERM},
        {"CONT", SIGCONT},
        {"URG", SIGURG},
        {"ALRM", SIGALRM},
        {"XCPU", SIGXCPU},
    }};
    std::string up(trim(text));
    std::transform(up.begin(), up.end(), up.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    std::string_view name = up;
    if (name.starts_with("SIG"))
        name.remove_prefix(3);
    for (auto [n, v] : kNames)
        if (n == name)
            return v;
    auto num = parse_count(field, text, 1, 64);
    if (num)
        return static_cast<int>(num.value());
    return error(field, text, "a signal name (USR1, USR2, TERM, INT, HUP, ...) or number 1-64");
}

std::span<const HintOption> hint_options() {
    // --ai-comm's keys come from its field table (comm_spec.hpp), hence a table built once.
    static const std::string comm_usage =
        "[ai] Communication pattern for placement: " + comm_help();
    static const std::array<HintOption, 6> options{{
        {"ai-comm", "PATTERN[:key=value,...]", comm_usage.c_str()},
        {"ai-dag", "FILE", "[ai] Task DAG of the job (JSON, absolute path) for placement"},
        {"ai-elastic", "MIN:MAX[:signal=SIG]",
         "[ai] Run elastically on MIN to MAX nodes; SIG tells the job of every resize"},
        {"ai-gang", "NAME:SIZE[:TIMEOUT][:onfail=kill|keep]",
         "[ai] Start together with the other SIZE-1 jobs of gang NAME, or not at all; "
         "when one fails, end the others (kill, default) or keep them"},
        {"ai-checkpoint", "DIR[,signal=SIG@SECS][,keep=N]",
         "[ai] Checkpoint directory; signal SIG SECS before the time limit; keep N checkpoints"},
        {"ai-locality", "hard|soft[:WAIT]",
         "[ai] hard: only a compact placement; soft: wait up to WAIT for one, then any"},
    }};
    return options;
}

Parsed<std::uint64_t> parse_size(std::string_view field, std::string_view text) {
    static const std::string kExpected =
        "a size such as 4096, 512K, 1.5G or 2GiB (K, M, G, T are powers of 1024)";
    auto parsed = number_and_unit(text);
    if (!parsed)
        return error(field, text, kExpected);
    const auto &[v, unit] = *parsed;  // "2 GiB" as well as "2GiB"
    double scale = 1;
    static constexpr std::array<std::pair<char, double>, 4> kUnits{
        {{'k', 0x1p10}, {'m', 0x1p20}, {'g', 0x1p30}, {'t', 0x1p40}}};
    std::string_view u = unit;
    if (!u.empty() && u != "b") {
        auto it = std::find_if(kUnits.begin(), kUnits.end(),
                               [&](auto &p) { return p.first == u.front(); });
        if (it == kUnits.end())
            return error(field, text, kExpected);
        scale = it->second;
        u.remove_prefix(1);
        if (u.starts_with('i'))
            u.remove_prefix(1);
        if (u == "b")
            u.remove_prefix(1);
        if (!u.empty())
            return error(field, text, kExpected);
    }
    double bytes = v * scale;
    if (bytes < 1 || bytes > 0x1p50)
        return error(field, text, "a size from 1 byte to 1P");
    return static_cast<std::uint64_t>(std::llround(bytes));
}

std::string format_size(std::uint64_t bytes) {
    static constexpr std::array<const char *, 5> kUnits{"B", "KiB", "MiB", "GiB", "TiB"};
    double v = static_cast<double>(bytes);
    std::size_t u = 0;
    while (v >= 1024 && u + 1 < kUnits.size()) {
        v /= 1024;
        ++u;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g %s", v, kUnits[u]);
    return buf;
}

Parsed<std::uint32_t> parse_duration(std::string_view field, std::string_view text) {
    static const std::string kExpected = "a duration such as 90, 90s, 15m, 2h or 1d";
    auto t = trim(text);
    std::uint64_t scale = 1;
    if (!t.empty() && std::isalpha(static_cast<unsigned char>(t.back()))) {
        switch (std::tolower(static_cast<unsigned char>(t.back()))) {
            case 's':
                scale = 1;
                break;
            case 'm':
                scale = 60;
                break;
            case 'h':
                scale = 3600;
                break;
            case 'd':
                scale = 86400;
                break;
            default:
                return error(field, text, kExpected);
        }
        t.remove_suffix(1);
    }
    std::uint64_t v = 0;
    auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (t.empty() || ec != std::errc() || end != t.data() + t.size())
        return error(field, text, kExpected);
    if (v * scale > 366ull * 86400)
        return error(field, text, "a duration of at most a year");
    return static_cast<std::uint32_t>(v * scale);
}

Parsed<std::uint32_t> parse_millis(std::string_view field, std::string_view text) {
    static const std::string kExpected =
        "a time from 1ms to 1h such as 250ms, 1.5s or 2 (seconds)";
    auto parsed = number_and_unit(text);
    if (!parsed)
        return error(field, text, kExpected);
    const auto &[v, unit] = *parsed;
    const double ms = unit == "ms"                 ? v
                      : unit.empty() || unit == "s" ? v * 1e3
                      : unit == "m"                 ? v * 60e3
                      : unit == "h"                 ? v * 3600e3
                                                    : -1;
    if (ms < 0)
        return error(field, text, kExpected);
    if (ms < 1 || ms > 3600e3)
        return error(field, text, kExpected);
    return static_cast<std::uint32_t>(std::llround(ms));
}

Parsed<std::string> parse_dag_path(std::string_view text) {
    auto t = trim(text);
    if (t.empty() || t.front() != '/')
        return error("--ai-dag", text, "an absolute path to a JSON task DAG file");
    return std::string(t);
}

Parsed<ElasticSpec> parse_elastic(std::string_view text) {
    auto parts = split(trim(text), ':');
    if (parts.size() != 2 && parts.size() != 3)
        return error("--ai-elastic", text, "MIN:MAX[:signal=SIG], two node counts with MIN <= MAX");
    auto lo = parse_count("--ai-elastic MIN", parts[0], 1, 100000);
    if (!lo)
        return lo.error();
    auto hi = parse_count("--ai-elastic MAX", parts[1], 1, 100000);
    if (!hi)
        return hi.error();
    if (lo.value() > hi.value())
        return error("--ai-elastic", text, "MIN <= MAX");
    ElasticSpec e{lo.value(), hi.value(), 0};
    if (parts.size() == 3) {
        auto item = trim(parts[2]);
        auto eq = item.find('=');
        if (eq == std::string_view::npos || lower(trim(item.substr(0, eq))) != "signal")
            return error("--ai-elastic", item, "signal=SIG after MIN:MAX");
        auto sig = parse_signal("--ai-elastic signal", item.substr(eq + 1));
        if (!sig)
            return sig.error();
        e.signal = sig.value();
    }
    return e;
}

ElasticSpec elastic_within(const ElasticSpec &asked, NodeRange slurm) {
    const std::uint32_t lo = std::max<std::uint32_t>(slurm.min, 1);
    const std::uint32_t hi =
        slurm.max ? std::max(slurm.max, lo) : std::numeric_limits<std::uint32_t>::max();
    ElasticSpec e = asked;
    e.min_nodes = std::clamp(asked.min_nodes, lo, hi);
    e.max_nodes = std::clamp(asked.max_nodes, lo, hi);
    return e;
}

std::string to_string(NodeRange r) {
    if (r.max == 0 || r.max >= 500000)
        return std::to_string(r.min) + " or more";
    if (r.max <= r.min)
        return std::to_string(r.min);
    return std::to_string(r.min) + "-" + std::to_string(r.max);
}

Parsed<GangSpec> parse_gang(std::string_view text) {
    auto parts = split(trim(text), ':');
    // The failure policy may follow SIZE or TIMEOUT: NAME:SIZE:onfail=keep is accepted.
    std::optional<std::string_view> onfail;
    if (parts.size() >= 3 && trim(parts.back()).find('=') != std::string_view::npos) {
        onfail = trim(parts.back());
        parts.pop_back();
    }
    if (parts.size() < 2 || parts.size() > 3)
        return error("--ai-gang", text, "NAME:SIZE[:TIMEOUT][:onfail=kill|keep]");
    GangSpec g;
    g.name = std::string(trim(parts[0]));
    bool name_ok = !g.name.empty() && g.name.size() <= 64 &&
                   std::all_of(g.name.begin(), g.name.end(), [](unsigned char c) {
                       return std::isalnum(c) || c == '_' || c == '-' || c == '.';
                   });
    if (!name_ok)
        return error("--ai-gang NAME", parts[0],
                     "1-64 characters from letters, digits, '_', '-' and '.'");
    auto size = parse_count("--ai-gang SIZE", parts[1], 2, 4096);
    if (!size)
        return size.error();
    g.size = size.value();
    if (parts.size() == 3) {
        auto timeout = parse_duration("--ai-gang TIMEOUT", parts[2]);
        if (!timeout)
            return timeout.error();
        g.timeout_s = timeout.value();
    }
    if (onfail) {
        auto eq = onfail->find('=');
        std::string key = lower(trim(onfail->substr(0, eq)));
        std::string val = lower(trim(onfail->substr(eq + 1)));
        if (key != "onfail")
            return error("--ai-gang", *onfail, "onfail=kill or onfail=keep as the last part");
        if (val != "kill" && val != "keep")
            return error("--ai-gang onfail", onfail->substr(eq + 1), "kill or keep");
        g.keep_on_failure = val == "keep";
    }
    return g;
}

Parsed<CheckpointSpec> parse_checkpoint(std::string_view text) {
    auto parts = split(trim(text), ',');
    CheckpointSpec c;
    c.dir = std::string(trim(parts[0]));
    if (c.dir.empty() || c.dir.front() != '/')
        return error("--ai-checkpoint DIR", parts[0], "an absolute directory path");
    for (std::size_t i = 1; i < parts.size(); ++i) {
        auto item = trim(parts[i]);
        auto eq = item.find('=');
        std::string key = lower(item.substr(0, eq));
        auto val = eq == std::string_view::npos ? std::string_view{} : trim(item.substr(eq + 1));
        if (key == "signal") {
            auto at = val.find('@');
            auto sig = parse_signal("--ai-checkpoint signal", val.substr(0, at));
            if (!sig)
                return sig.error();
            c.signal = sig.value();
            if (at != std::string_view::npos) {
                auto secs = parse_duration("--ai-checkpoint signal SECS", val.substr(at + 1));
                if (!secs)
                    return secs.error();
                c.signal_before_s = secs.value();
            }
        } else if (key == "keep") {
            auto keep = parse_count("--ai-checkpoint keep", val, 1, 1000);
            if (!keep)
                return keep.error();
            c.keep = keep.value();
        } else {
            return error("--ai-checkpoint", item, "signal=SIG@SECS or keep=N after DIR");
        }
    }
    return c;
}

Parsed<LocalitySpec> parse_locality(std::string_view text) {
    auto t = trim(text);
    auto colon = t.find(':');
    std::string mode = lower(t.substr(0, colon));
    LocalitySpec l;
    if (mode == "hard") {
        l.hard = true;
        if (colon != std::string_view::npos)
            return error("--ai-locality", text, "'hard' without a wait, or soft[:WAIT]");
        return l;
    }
    if (mode != "soft")
        return error("--ai-locality", text, "hard or soft[:WAIT]");
    if (colon != std::string_view::npos) {
        auto wait = parse_duration("--ai-locality WAIT", t.substr(colon + 1));
        if (!wait)
            return wait.error();
        l.wait_s = wait.value();
    }
    return l;
}

std::optional<InputError> apply_hint(JobHints &hints, std::string_view name,
                                     std::string_view value) {
    std::string n;
    for (char c : name)
        n += c == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    while (n.starts_with('-'))
        n.erase(0, 1);
    auto store = [](auto &slot, auto parsed) -> std::optional<InputError> {
        if (!parsed)
            return parsed.error();
        slot = std::move(parsed).value();
        return std::nullopt;
    };
    if (n == "ai-comm")
        return store(hints.comm, parse_comm(value));
    if (n == "ai-dag")
        return store(hints.dag_file, parse_dag_path(value));
    if (n == "ai-elastic")
        return store(hints.elastic, parse_elastic(value));
    if (n == "ai-gang")
        return store(hints.gang, parse_gang(value));
    if (n == "ai-checkpoint")
        return store(hints.checkpoint, parse_checkpoint(value));
    if (n == "ai-locality")
        return store(hints.locality, parse_locality(value));
    return error("option", name,
                 "one of --ai-comm, --ai-dag, --ai-elastic, --ai-gang, "
                 "--ai-checkpoint, --ai-locality");
}

}  // namespace slurm_ai
