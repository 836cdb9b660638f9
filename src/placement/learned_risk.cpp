#include "slurm_ai/placement/learned_risk.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

namespace slurm_ai {
namespace {

constexpr std::string_view kFormat = "slurm-ai learned risk model";
constexpr int kVersion = 1;
constexpr const char *kInputNames[kHazardInputs] = {
    "log1p day count",     "log1p week count",    "log1p month count",
    "log1p weekly gpu",    "log1p weekly network", "log1p weekly other",
    "recency (7 days)",    "log1p leaf week",      "leaf share with failures"};

// Parameter layout in LearnedRisk::w.
constexpr int kW1 = 0;
constexpr int kB1 = kW1 + kHazardHidden * kHazardInputs;
constexpr int kW2 = kB1 + kHazardHidden;
constexpr int kB2 = kW2 + kHazardHidden;

double sigmoid(double z) {
    return z >= 0 ? 1 / (1 + std::exp(-z)) : std::exp(z) / (1 + std::exp(z));
}

InputError bad(std::string_view source, std::string field, std::string value,
               std::string expected) {
    return InputError{std::move(field), std::move(value), std::move(expected),
                      std::string(source), 0};
}

}  // namespace

HazardInputs hazard_inputs(const HostFailures &host_now, double t, double leaf_week,
                           double leaf_share) {
    const HostFailures h = host_now.as_of(t);
    double other = 0;
    for (int c = 0; c < kFailureClasses; ++c)
        if (c != static_cast<int>(FailureClass::kGpu) && c != static_cast<int>(FailureClass::kNetwork))
            other += h.by_class[static_cast<std::size_t>(c)];
    return {std::log1p(h.day),
            std::log1p(h.week),
            std::log1p(h.month),
            std::log1p(h.by_class[static_cast<std::size_t>(FailureClass::kGpu)]),
            std::log1p(h.by_class[static_cast<std::size_t>(FailureClass::kNetwork)]),
            std::log1p(other),
            h.any() ? std::exp(-(t - h.last) / kWeekHalfLifeS) : 0.0,
            std::log1p(std::max(leaf_week, 0.0)),
            std::clamp(leaf_share, 0.0, 1.0)};
}

LearnedRisk::LearnedRisk() {
    scale.fill(1.0);
}

double LearnedRisk::probability(const HazardInputs &x) const {
    double z = w[kB2];
    for (int k = 0; k < kHazardHidden; ++k) {
        double a = w[static_cast<std::size_t>(kB1 + k)];
        for (int i = 0; i < kHazardInputs; ++i)
            a += w[static_cast<std::size_t>(kW1 + k * kHazardInputs + i)] *
                 (x[static_cast<std::size_t>(i)] - mean[static_cast<std::size_t>(i)]) /
                 scale[static_cast<std::size_t>(i)];
        z += w[static_cast<std::size_t>(kW2 + k)] * std::tanh(a);
    }
    return sigmoid(z);
}

double LearnedRisk::rate_per_day(const HazardInputs &x) const {
    return -std::log1p(-std::min(probability(x), 1 - 1e-12));
}

double LearnedRisk::backprop(const HazardInputs &x, double positives, double total,
                             std::array<double, kParameters> &grad) const {
    std::array<double, kHazardInputs> n{};
    for (int i = 0; i < kHazardInputs; ++i)
        n[static_cast<std::size_t>(i)] =
            (x[static_cast<std::size_t>(i)] - mean[static_cast<std::size_t>(i)]) /
            scale[static_cast<std::size_t>(i)];
    std::array<double, kHazardHidden> h{};
    double z = w[kB2];
    for (int k = 0; k < kHazardHidden; ++k) {
        double a = w[static_cast<std::size_t>(kB1 + k)];
        for (int i = 0; i < kHazardInputs; ++i)
            a += w[static_cast<std::size_t>(kW1 + k * kHazardInputs + i)] * n[static_cast<std::size_t>(i)];
        h[static_cast<std::size_t>(k)] = std::tanh(a);
        z += w[static_cast<std::size_t>(kW2 + k)] * h[static_cast<std::size_t>(k)];
    }
    const double p = sigmoid(z);
    const double dz = total * p - positives;  // d(-log-likelihood)/dz
    grad[kB2] += dz;
    for (int k = 0; k < kHazardHidden; ++k) {
        const double hk = h[static_cast<std::size_t>(k)];
        grad[static_cast<std::size_t>(kW2 + k)] += dz * hk;
        const double da = dz * w[static_cast<std::size_t>(kW2 + k)] * (1 - hk * hk);
        grad[static_cast<std::size_t>(kB1 + k)] += da;
        for (int i = 0; i < kHazardInputs; ++i)
            grad[static_cast<std::size_t>(kW1 + k * kHazardInputs + i)] +=
                da * n[static_cast<std::size_t>(i)];
    }
    const double q = std::clamp(p, 1e-12, 1 - 1e-12);
    return -positives * std::log(q) - (total - positives) * std::log(1 - q);
}

std::string LearnedRisk::to_json() const {
    nlohmann::json j;
    j["format"] = kFormat;
    j["version"] = kVersion;
    j["inputs"] = std::vector<std::string>(std::begin(kInputNames), std::end(kInputNames));
    j["mean"] = mean;
    j["scale"] = scale;
    j["hidden"] = kHazardHidden;
    j["parameters"] = w;
    j["trained"] = {{"trace", info.trace},
                    {"days", {info.train_from_day, info.train_to_day}},
                    {"hosts", info.hosts},
                    {"samples", info.samples},
                    {"positives", info.positives},
                    {"epochs", info.epochs},
                    {"weight_decay", info.weight_decay}};
    j["held_out"] = {{"days", {info.train_to_day, info.test_to_day}},
                     {"auc", info.auc},
                     {"auc_hand_written", info.auc_hand_written},
                     {"log_loss", info.log_loss},
                     {"log_loss_hand_written", info.log_loss_hand_written}};
    j["beats_hand_written"] = info.beats_hand_written;
    return j.dump(2) + "\n";
}

Parsed<LearnedRisk> LearnedRisk::parse(std::string_view text, std::string_view source) {
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception &e) {
        return bad(source, "JSON", e.what(), "a learned risk model written by ai-sim train-risk");
    }
    // The header's fields as written, whatever their JSON type: "" when absent.
    auto field = [&](const char *key) {
        if (!j.is_object() || !j.contains(key))
            return std::string();
        return j[key].is_string() ? j[key].get<std::string>() : j[key].dump();
    };
    if (field("format") != kFormat)  // another type's text never reads as the format's name
        return bad(source, "format", field("format"), std::string(kFormat));
    if (j.value("version", nlohmann::json()) != kVersion)
        return bad(source, "version", field("version"), std::to_string(kVersion));
    if (j.value("hidden", nlohmann::json()) != kHazardHidden)
        return bad(source, "hidden", field("hidden"), std::to_string(kHazardHidden));
    LearnedRisk m;
    auto numbers = [&](const char *key, auto &out, bool positive) -> std::optional<InputError> {
        auto it = j.find(key);
        if (it == j.end() || !it->is_array() || it->size() != out.size())
            return bad(source, key, it == j.end() ? "" : it->dump().substr(0, 80),
                       "an array of " + std::to_string(out.size()) + " numbers");
        for (std::size_t i = 0; i < out.size(); ++i) {
            const auto &v = (*it)[i];
            if (!v.is_number() || !std::isfinite(v.get<double>()) ||
                (positive && v.get<double>() <= 0))
                return bad(source, std::string(key) + "[" + std::to_string(i) + "]", v.dump(),
                           positive ? "a positive number" : "a finite number");
            out[i] = v.get<double>();
        }
        return std::nullopt;
    };
    if (auto e = numbers("mean", m.mean, false))
        return *e;
    if (auto e = numbers("scale", m.scale, true))
        return *e;
    if (auto e = numbers("parameters", m.w, false))
        return *e;
    try {
        const auto &t = j.at("trained");
        m.info.trace = t.value("trace", std::string());
        m.info.train_from_day = t.at("days").at(0).get<double>();
        m.info.train_to_day = t.at("days").at(1).get<double>();
        m.info.hosts = t.value("hosts", 0);
        m.info.samples = t.value("samples", 0L);
        m.info.positives = t.value("positives", 0L);
        m.info.epochs = t.value("epochs", 0);
        m.info.weight_decay = t.value("weight_decay", 0.0);
        const auto &h = j.at("held_out");
        m.info.test_to_day = h.at("days").at(1).get<double>();
        m.info.auc = h.at("auc").get<double>();
        m.info.auc_hand_written = h.at("auc_hand_written").get<double>();
        m.info.log_loss = h.at("log_loss").get<double>();
        m.info.log_loss_hand_written = h.at("log_loss_hand_written").get<double>();
        m.info.beats_hand_written = j.at("beats_hand_written").get<bool>();
    } catch (const nlohmann::json::exception &e) {
        return bad(source, "trained/held_out/beats_hand_written", e.what(),
                   "the training record ai-sim train-risk writes");
    }
    return m;
}

Parsed<LearnedRisk> LearnedRisk::load(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return bad(path, "RiskModel", path, "a readable learned risk model file");
    std::stringstream s;
    s << in.rdbuf();
    if (s.str().size() > (1u << 20))
        return bad(path, "RiskModel", path, "a file under 1 MiB");
    return parse(s.str(), path);
}

}  // namespace slurm_ai
