#include "slurm_ai/placement/failure_history.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include <nlohmann/json.hpp>

#include "slurm_ai/common/json_text.hpp"

namespace slurm_ai {
namespace {

using nlohmann::json;

constexpr double kOnceWithinS = 3600;

double decay(double dt, double half_life_days) {
    return std::exp2(-dt / (half_life_days * kDaySeconds));
}

InputError corrupt_history(std::string field, std::string value, std::string expected,
                           std::string_view source) {
    return InputError{std::move(field), std::move(value), std::move(expected) + " (corrupt: starting clean)",
                      std::string(source), 0};
}

// One number of a host's entry: a finite time, or (count) a finite count >= 0. Throws
// json's exception when the key is missing or not a number.
Parsed<double> history_number(const json &h, const std::string &name, const char *key, bool count,
                              std::string_view source) {
    const double v = h.at(key).get<double>();
    if (!std::isfinite(v) || (count && v < 0))
        return corrupt_history("failures." + name + "." + key, h.at(key).dump(),
                               count ? "a finite count >= 0" : "a finite time", source);
    return v;
}

// The first format kept the weekly count alone: the other counts start from it, the class
// is unknown.
Parsed<HostFailures> host_v1(const json &h, const std::string &name, std::string_view source) {
    auto count = history_number(h, name, "count", true, source);
    if (!count)
        return count.error();
    auto at = history_number(h, name, "at", false, source);
    if (!at)
        return at.error();
    HostFailures r;
    r.day = r.week = r.month = count.value();
    r.by_class[static_cast<std::size_t>(FailureClass::kOther)] = count.value();
    r.at = r.last = at.value();
    return r;
}

std::optional<FailureClass> class_named(std::string_view name) {
    for (int c = 0; c < kFailureClasses; ++c)
        if (to_string(static_cast<FailureClass>(c)) == name)
            return static_cast<FailureClass>(c);
    return std::nullopt;
}

Parsed<HostFailures> host_v2(const json &h, const std::string &name, std::string_view source) {
    HostFailures r;
    for (auto [key, out] : {std::pair<const char *, double *>{"day", &r.day},
                            {"week", &r.week},
                            {"month", &r.month},
                            {"at", &r.at},
                            {"last", &r.last}}) {
        const bool count = out != &r.at && out != &r.last;
        auto v = history_number(h, name, key, count, source);
        if (!v)
            return v.error();
        *out = v.value();
    }
    for (const auto &[cls, v] : h.at("classes").items()) {
        const auto c = class_named(cls);
        if (!c || !v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0)
            return corrupt_history("failures." + name + ".classes." + cls, v.dump(),
                                   "a class of failure_class.hpp with a count >= 0", source);
        r.by_class[static_cast<std::size_t>(*c)] = v.get<double>();
    }
    return r;
}

Parsed<FailureHistory> history_of(const json &j, std::string_view source) {
    const int version = j.value("version", 0);
    if (version != 1 && version != 2)
        return InputError{"version", j.value("version", json()).dump(), "1 or 2 (starting clean)",
                          std::string(source), 0};
    FailureHistory out;
    for (const auto &[name, h] : j.at("failures").items()) {
        auto r = version == 1 ? host_v1(h, name, source) : host_v2(h, name, source);
        if (!r)
            return r.error();
        out[name] = std::move(r).value();
    }
    return out;
}

}  // namespace

Parsed<FailureHistory> parse_failure_history(std::string_view text, std::string_view source) {
    try {
        return history_of(json::parse(text), source);
    } catch (const std::exception &e) {
        return corrupt_history("json", std::string(e.what()).substr(0, 120),
                               "the plugin's state file", source);
    }
}

std::string dump_failure_history(const FailureHistory &history) {
    json j{{"version", 2}, {"failures", json::object()}};
    for (const auto &[name, h] : history) {
        json classes = json::object();
        for (int c = 0; c < kFailureClasses; ++c)
            if (h.by_class[static_cast<std::size_t>(c)] > 0)
                classes[std::string(to_string(static_cast<FailureClass>(c)))] =
                    h.by_class[static_cast<std::size_t>(c)];
        j["failures"][name] = {{"day", h.day}, {"week", h.week}, {"month", h.month},
                               {"at", h.at},   {"last", h.last}, {"classes", classes}};
    }
    return json_text(j, 1) + "\n";
}

HostFailures HostFailures::as_of(double t) const {
    if (t <= at)
        return *this;
    HostFailures h = *this;
    const double dt = t - at;
    h.day *= decay(dt, 1);
    h.week *= decay(dt, 7);
    h.month *= decay(dt, 30);
    for (auto &c : h.by_class)
        c *= decay(dt, 7);
    h.at = t;
    return h;
}

void HostFailures::note(double t, FailureClass c) {
    auto &cls = by_class[static_cast<std::size_t>(c)];
    if (any() && t >= last && t - last < kOnceWithinS) {
        cls = std::max(cls, 1.0);  // the same failure, seen again: its class is remembered
        return;
    }
    *this = as_of(t);
    day += 1;
    week += 1;
    month += 1;
    by_class[static_cast<std::size_t>(c)] += 1;
    last = t;
}

}  // namespace slurm_ai
