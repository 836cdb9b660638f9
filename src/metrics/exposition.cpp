#include "slurm_ai/metrics/exposition.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <stdexcept>

namespace slurm_ai::metrics {
namespace {

bool valid_name(std::string_view n, bool label) {
    if (n.empty())
        return false;
    for (std::size_t i = 0; i < n.size(); ++i) {
        const char c = n[i];
        const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
                           (!label && c == ':');
        if (!alpha && !(i > 0 && c >= '0' && c <= '9'))
            return false;
    }
    return !(label && n.starts_with("__"));
}

void fail(const std::string &what) { throw std::logic_error("metrics: " + what); }

std::string number(double v) {
    if (std::isnan(v))
        return "NaN";
    if (std::isinf(v))
        return v > 0 ? "+Inf" : "-Inf";
    char buf[32];
    auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
    return ec == std::errc() ? std::string(buf, end) : std::to_string(v);
}

// Backslash, newline and (in label values, and in OpenMetrics' help) double quote.
std::string escaped(std::string_view s, bool quote) {
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
        if (c == '\\')
            out += "\\\\";
        else if (c == '\n')
            out += "\\n";
        else if (c == '"' && quote)
            out += "\\\"";
        else
            out += c;
    }
    return out;
}

std::string label_text(const Labels &labels, const std::pair<std::string, std::string> *extra) {
    if (labels.empty() && !extra)
        return "";
    std::string out = "{";
    auto one = [&](const std::pair<std::string, std::string> &l) {
        if (out.size() > 1)
            out += ',';
        out += l.first + "=\"" + escaped(l.second, true) + '"';
    };
    for (const auto &l : labels)
        one(l);
    if (extra)
        one(*extra);
    return out + "}";
}

std::string_view type_name(Type t) {
    switch (t) {
        case Type::kCounter:
            return "counter";
        case Type::kHistogram:
            return "histogram";
        case Type::kGauge:
            break;
    }
    return "gauge";
}

void write_family(std::string &out, const Family &f, Format format) {
    const bool om = format == Format::kOpenMetrics;
    // The classic format names a counter's family by its sample (with _total).
    const std::string head = !om && f.type == Type::kCounter ? f.name + "_total" : f.name;
    const std::string type_line = "# TYPE " + head + " " + std::string(type_name(f.type)) + "\n";
    const std::string help_line = "# HELP " + head + " " + escaped(f.help, om) + "\n";
    if (om) {
        out += type_line;
        if (!f.unit.empty())
            out += "# UNIT " + head + " " + f.unit + "\n";
        out += help_line;
    } else {
        out += help_line + type_line;
    }
    const std::string sample = f.type == Type::kCounter ? f.name + "_total" : f.name;
    for (const auto &[labels, value] : f.samples)
        out += sample + label_text(labels, nullptr) + " " + number(value) + "\n";
    for (const auto &[labels, h] : f.histograms) {
        const auto cumulative = h.cumulative();
        for (std::size_t i = 0; i < cumulative.size(); ++i) {
            const std::pair<std::string, std::string> le{
                "le", i < h.bounds().size() ? number(h.bounds()[i]) : "+Inf"};
            out += f.name + "_bucket" + label_text(labels, &le) + " " +
                   std::to_string(cumulative[i]) + "\n";
        }
        out += f.name + "_sum" + label_text(labels, nullptr) + " " + number(h.sum()) + "\n";
        out += f.name + "_count" + label_text(labels, nullptr) + " " + std::to_string(h.count()) +
               "\n";
    }
}

}  // namespace

Histogram::Histogram(std::vector<double> upper_bounds)
    : bounds_(std::move(upper_bounds)), counts_(bounds_.size() + 1, 0) {
    for (std::size_t i = 0; i < bounds_.size(); ++i)
        if (!std::isfinite(bounds_[i]) || (i > 0 && bounds_[i] <= bounds_[i - 1]))
            fail("histogram bounds must be finite and increasing");
}

void Histogram::observe(double value) {
    const auto it = std::lower_bound(bounds_.begin(), bounds_.end(), value);
    ++counts_[static_cast<std::size_t>(it - bounds_.begin())];
    sum_ += value;
    ++count_;
}

std::vector<std::uint64_t> Histogram::cumulative() const {
    std::vector<std::uint64_t> out(counts_.size());
    std::uint64_t running = 0;
    for (std::size_t i = 0; i < counts_.size(); ++i)
        out[i] = running += counts_[i];
    return out;
}

Family &Registry::add(std::string name, Type type, std::string unit, std::string help) {
    if (!valid_name(name, false))
        fail("family name '" + name + "'");
    if (type == Type::kCounter && name.ends_with("_total"))
        fail("counter '" + name + "' named with _total (the writer adds it)");
    if (!unit.empty() && !name.ends_with("_" + unit))
        fail("family '" + name + "' does not end in its unit '" + unit + "'");
    if (help.empty())
        fail("family '" + name + "' without help");
    for (const auto &f : families_)
        if (f.name == name)
            fail("family '" + name + "' twice");
    families_.push_back(Family{std::move(name), type, std::move(unit), std::move(help), {}, {}});
    return families_.back();
}

void Registry::check_labels(const Family &f, const Labels &labels) const {
    for (const auto &[name, value] : labels)
        if (!valid_name(name, true) || name == "le")
            fail("label '" + name + "' of '" + f.name + "'");
    const Labels *first = !f.samples.empty()      ? &f.samples.front().first
                          : !f.histograms.empty() ? &f.histograms.front().first
                                                  : nullptr;
    if (!first)
        return;
    bool same = first->size() == labels.size();
    for (std::size_t i = 0; same && i < labels.size(); ++i)
        same = (*first)[i].first == labels[i].first;
    if (!same)
        fail("samples of '" + f.name + "' with different label names");
}

void Registry::set(Family &f, Labels labels, double value) {
    if (f.type == Type::kHistogram)
        fail("a plain sample on histogram '" + f.name + "'");
    check_labels(f, labels);
    f.samples.emplace_back(std::move(labels), value);
}

Histogram &Registry::histogram(Family &f, Labels labels, std::vector<double> upper_bounds) {
    if (f.type != Type::kHistogram)
        fail("a histogram on '" + f.name + "'");
    check_labels(f, labels);
    f.histograms.emplace_back(std::move(labels), Histogram(std::move(upper_bounds)));
    return f.histograms.back().second;
}

std::string write_exposition(const std::deque<Family> &families, Format format) {
    std::string out;
    for (const auto &f : families)
        write_family(out, f, format);
    if (format == Format::kOpenMetrics)
        out += "# EOF\n";
    return out;
}

std::string_view content_type(Format format) {
    return format == Format::kOpenMetrics
               ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
               : "text/plain; version=0.0.4; charset=utf-8";
}

Format format_for_accept(std::string_view accept) {
    return accept.find("application/openmetrics-text") != std::string_view::npos
               ? Format::kOpenMetrics
               : Format::kPrometheusText;
}

}  // namespace slurm_ai::metrics
