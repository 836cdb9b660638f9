#include "slurm_ai/job/comm_spec.hpp"

#include <algorithm>
#include <array>
#include <initializer_list>
#include <type_traits>
#include <utility>

#include <nlohmann/json.hpp>

#include "slurm_ai/common/text_scan.hpp"
#include "slurm_ai/job/job_hints.hpp"

namespace slurm_ai {
namespace {

using text::lower;
using text::trim;

constexpr unsigned pattern_bits(std::initializer_list<CommPattern> patterns) {
    unsigned bits = 0;
    for (auto p : patterns)
        bits |= 1u << static_cast<unsigned>(p);
    return bits;
}

constexpr unsigned kEveryPatternButNone =
    pattern_bits({CommPattern::kAllReduce, CommPattern::kPipeline, CommPattern::kTensorParallel,
                  CommPattern::kMoE, CommPattern::kParameterServer});

struct CommPatternName {
    std::string_view name;
    CommPattern pattern;
};
constexpr std::array<CommPatternName, 6> kCommPatterns{{
    {"allreduce", CommPattern::kAllReduce},
    {"pipeline", CommPattern::kPipeline},
    {"tp", CommPattern::kTensorParallel},
    {"moe", CommPattern::kMoE},
    {"ps", CommPattern::kParameterServer},
    {"none", CommPattern::kNone},
}};

// In the order the help text, the printed form and the error messages list the keys: a
// pattern's own keys first.
constexpr std::array<CommField, 8> kCommFields{{
    {"stages", "stages", "N", "", CommUnit::kCount, &CommSpec::stages, 2, 4096,
     pattern_bits({CommPattern::kPipeline})},
    {"microbatches", "microbatches", "N", "", CommUnit::kCount, &CommSpec::microbatches, 1,
     1 << 20, pattern_bits({CommPattern::kPipeline})},
    {"size", "tp_size", "N", "", CommUnit::kCount, &CommSpec::tp_size, 2, 1024,
     pattern_bits({CommPattern::kTensorParallel})},
    {"experts", "experts", "N", "", CommUnit::kCount, &CommSpec::experts, 2, 1 << 20,
     pattern_bits({CommPattern::kMoE})},
    {"servers", "servers", "N", "", CommUnit::kCount, &CommSpec::servers, 1, 4096,
     pattern_bits({CommPattern::kParameterServer})},
    {"bytes", "bytes", "SIZE", "", CommUnit::kSize, &CommSpec::bytes, 0, 0, kEveryPatternButNone},
    {"algo", "algo", "ring|tree|hierarchical|auto", "", CommUnit::kChoice, &CommSpec::algo, 0, 0,
     pattern_bits({CommPattern::kAllReduce})},
    {"compute", "compute_ms", "TIME", "a step's computation on one GPU", CommUnit::kMillis,
     &CommSpec::compute_ms, 0, 0, kEveryPatternButNone},
}};

InputError comm_error(std::string_view field, std::string_view value, std::string expected) {
    return InputError{std::string(field), std::string(value), std::move(expected), {}, 0};
}

// "a, b, c" from the words of "a|b|c".
std::string choices_of(std::string_view arg) {
    std::string out;
    for (auto word : text::split(arg, '|'))
        out += (out.empty() ? "" : ", ") + std::string(word);
    return out;
}

// The keys a pattern takes, for error messages: "stages, microbatches, bytes, compute".
std::string keys_of(CommPattern p) {
    std::string out;
    for (const auto &f : kCommFields)
        if (f.used_by(p))
            out += (out.empty() ? "" : ", ") + std::string(f.key);
    return out.empty() ? "no keys" : out;
}

// Bytes exactly, in the largest unit that divides them: "64M", "1536K", "1000".
std::string exact_size(std::uint64_t bytes) {
    static constexpr std::array<std::pair<char, int>, 4> kUnits{
        {{'T', 40}, {'G', 30}, {'M', 20}, {'K', 10}}};
    for (auto [unit, shift] : kUnits)
        if (bytes >= (1ull << shift) && bytes % (1ull << shift) == 0)
            return std::to_string(bytes >> shift) + unit;
    return std::to_string(bytes);
}

std::string value_text(const CommField &f, const CommSpec &c) {
    return std::visit(
        [&](auto member) -> std::string {
            const auto &v = c.*member;
            if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::string>)
                return v;
            else if (f.unit == CommUnit::kSize)
                return exact_size(v);
            else if (f.unit == CommUnit::kMillis)
                return std::to_string(v) + "ms";
            else
                return std::to_string(v);
        },
        f.member);
}

// Reads `text` as the value of field `f` into `c`; `field` names it in an error.
std::optional<InputError> read_value(const CommField &f, const std::string &field,
                                     std::string_view text, CommSpec &c) {
    auto store = [&](auto member, auto parsed) -> std::optional<InputError> {
        if (!parsed)
            return parsed.error();
        c.*member = std::move(parsed).value();
        return std::nullopt;
    };
    using Count = std::uint32_t CommSpec::*;
    switch (f.unit) {
        case CommUnit::kSize:
            return store(std::get<std::uint64_t CommSpec::*>(f.member), parse_size(field, text));
        case CommUnit::kCount:
            return store(std::get<Count>(f.member), parse_count(field, text, f.min, f.max));
        case CommUnit::kMillis:
            return store(std::get<Count>(f.member), parse_millis(field, text));
        case CommUnit::kChoice:
            break;
    }
    const std::string word = lower(text);
    const auto words = text::split(f.arg, '|');
    if (std::find(words.begin(), words.end(), word) == words.end())
        return comm_error(field, text, "one of " + choices_of(f.arg));
    c.*std::get<std::string CommSpec::*>(f.member) = word == "auto" ? "" : word;
    return std::nullopt;
}

}  // namespace

bool CommField::given(const CommSpec &c) const {
    return std::visit(
        [&](auto m) {
            if constexpr (std::is_same_v<std::decay_t<decltype(c.*m)>, std::string>)
                return !(c.*m).empty();
            else
                return c.*m != 0;
        },
        member);
}

std::span<const CommField> comm_fields() {
    return kCommFields;
}

std::string_view to_string(CommPattern p) {
    for (const auto &d : kCommPatterns)
        if (d.pattern == p)
            return d.name;
    return "?";
}

std::optional<CommPattern> comm_pattern_named(std::string_view name) {
    for (const auto &d : kCommPatterns)
        if (d.name == name)
            return d.pattern;
    return std::nullopt;
}

Parsed<CommSpec> parse_comm(std::string_view text) {
    const std::string_view field = "--ai-comm";
    auto t = trim(text);
    auto colon = t.find(':');
    const std::string name = lower(t.substr(0, colon));
    const auto pattern = comm_pattern_named(name);
    if (!pattern) {
        std::string names;
        for (const auto &d : kCommPatterns)
            names += (names.empty() ? "" : ", ") + std::string(d.name);
        return comm_error(field, text,
                          "one of " + names + " (optionally followed by :key=value,...)");
    }
    CommSpec spec;
    spec.pattern = *pattern;
    if (colon == std::string_view::npos)
        return spec;

    // Each pattern accepts only its own keys; anything else is a typo worth refusing.
    const std::string allowed = keys_of(*pattern);
    for (auto item : text::split(t.substr(colon + 1), ',')) {
        auto eq = item.find('=');
        std::string key = lower(trim(item.substr(0, eq)));
        if (eq == std::string_view::npos || key.empty())
            return comm_error(field, text,
                              "key=value pairs after '" + name + ":' (" + allowed + ")");
        auto f = std::find_if(kCommFields.begin(), kCommFields.end(), [&](const CommField &c) {
            return c.key == key && c.used_by(*pattern);
        });
        if (f == kCommFields.end())
            return comm_error(field, text,
                              "for " + name + ": " + allowed + " (got key '" + key + "')");
        const std::string key_field = "--ai-comm " + name + " key '" + key + "'";
        if (auto err = read_value(*f, key_field, trim(item.substr(eq + 1)), spec))
            return *err;
    }
    return spec;
}

std::string to_string(const CommSpec &c) {
    std::string out(to_string(c.pattern));
    char sep = ':';
    for (const auto &f : kCommFields)
        if (f.given(c)) {
            out += sep;
            out += f.key;
            out += '=';
            out += value_text(f, c);
            sep = ',';
        }
    return out;
}

std::string comm_help() {
    std::string out;
    for (const auto &p : kCommPatterns) {
        std::string keys;
        for (const auto &f : kCommFields)
            if (f.used_by(p.pattern))
                keys += (keys.empty() ? "" : ",") + std::string(f.key) + "=" + std::string(f.arg);
        out += (out.empty() ? "" : ", ") + std::string(p.name);
        if (!keys.empty())
            out += "[:" + keys + "]";
    }
    for (const auto &f : kCommFields)
        if (!f.help.empty())
            out += "; " + std::string(f.key) + ": " + std::string(f.help);
    return out;
}

void to_json(nlohmann::json &j, const CommSpec &c) {
    j = nlohmann::json::object();
    j["pattern"] = std::string(to_string(c.pattern));
    for (const auto &f : kCommFields)
        if (f.given(c))
            std::visit([&](auto m) { j[std::string(f.json)] = c.*m; }, f.member);
}

void from_json(const nlohmann::json &j, CommSpec &c) {
    c = CommSpec{};
    const auto name = j.at("pattern").get<std::string>();
    const auto pattern = comm_pattern_named(name);
    if (!pattern)
        throw nlohmann::json::other_error::create(501, "unknown pattern " + name, &j);
    c.pattern = *pattern;
    for (const auto &f : kCommFields)
        std::visit(
            [&](auto m) {
                using Value = std::decay_t<decltype(c.*m)>;
                c.*m = j.value(std::string(f.json), Value{});
            },
            f.member);
}

}  // namespace slurm_ai
