#include "slurm_ai/placement/learned_risk.hpp"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "slurm_ai/common/file_io.hpp"

namespace slurm_ai {
namespace {

constexpr std::string_view kFormat = "slurm-ai learned risk model";
// Version 1 rated a host, not a placement; its files are refused with a word on why.
constexpr int kVersion = 2;
constexpr double kFlagged = 0.05;  // a weekly count above this marks a host of a leaf
constexpr const char *kInputNames[kRiskInputs] = {
    "cyclic graph",          "cascading graph",        "ln hosts",
    "ln leaves",             "log1p nvlink domains",   "ln mean leaf size",
    "log1p mean domain size", "log1p day count",       "log1p week count",
    "log1p month count",     "log1p weekly gpu",       "log1p weekly network",
    "log1p weekly other",    "max recency (7 days)",   "log1p other leaf hosts' week",
    "share of other leaf hosts with failures"};

// Parameter layout in LearnedRisk::w.
constexpr int kW1 = 0;
constexpr int kB1 = kW1 + kRiskHidden * kRiskInputs;
constexpr int kW2 = kB1 + kRiskHidden;
constexpr int kB2 = kW2 + kRiskHidden;

double sigmoid(double z) {
    return z >= 0 ? 1 / (1 + std::exp(-z)) : std::exp(z) / (1 + std::exp(z));
}

nlohmann::json optional_json(const std::optional<double> &v) {
    return v ? nlohmann::json(*v) : nlohmann::json();
}

double softplus(double z) {
    return z > 30 ? z : std::log1p(std::exp(z));
}

InputError bad(std::string_view source, std::string field, std::string value,
               std::string expected) {
    return InputError{std::move(field), std::move(value), std::move(expected),
                      std::string(source), 0};
}

}  // namespace

void RiskHistory::add(int host, const HostFailures &history) {
    const HostFailures &now = hosts_[host] = history.as_of(now_);
    auto &l = leaves_[graph_->host_leaf(host)];
    l.first += now.week;
    l.second += now.week > kFlagged;
}

const HostFailures *RiskHistory::host(int h) const {
    auto it = hosts_.find(h);
    return it == hosts_.end() ? nullptr : &it->second;
}

std::pair<double, int> RiskHistory::leaf(int leaf) const {
    auto it = leaves_.find(leaf);
    return it == leaves_.end() ? std::pair<double, int>{0, 0} : it->second;
}

RiskInputs placement_risk_inputs(const ClusterGraph &graph, RiskGraph kind,
                                 const std::vector<int> &hosts, const RiskHistory &history) {
    RiskInputs x{};
    if (hosts.empty())
        return x;
    x[0] = kind == RiskGraph::kCyclic;
    x[1] = kind == RiskGraph::kCascade;
    // In slurmctld's hot path: no allocation beyond these two small vectors.
    std::vector<int> leaves, domains;
    double day = 0, week = 0, month = 0, gpu = 0, network = 0, other = 0, recency = 0;
    std::vector<std::pair<int, std::pair<double, int>>> mine;  // per leaf: the placement's own
    for (int h : hosts) {
        const int leaf = graph.host_leaf(h);
        leaves.push_back(leaf);
        if (int d = graph.nvlink_domain(h); d >= 0)
            domains.push_back(d);
        const HostFailures *f = history.host(h);
        if (!f)
            continue;
        day += f->day;
        week += f->week;
        month += f->month;
        for (int c = 0; c < kFailureClasses; ++c) {
            const double n = f->by_class[static_cast<std::size_t>(c)];
            if (c == static_cast<int>(FailureClass::kGpu))
                gpu += n;
            else if (c == static_cast<int>(FailureClass::kNetwork))
                network += n;
            else
                other += n;
        }
        if (f->any())
            recency = std::max(recency, std::exp(-(history.now() - f->last) / kWeekHalfLifeS));
        auto m = std::find_if(mine.begin(), mine.end(), [&](const auto &e) { return e.first == leaf; });
        if (m == mine.end())
            m = mine.insert(mine.end(), {leaf, {0.0, 0}});
        m->second.first += f->week;
        m->second.second += f->week > kFlagged;
    }
    for (auto *v : {&leaves, &domains}) {
        std::sort(v->begin(), v->end());
        v->erase(std::unique(v->begin(), v->end()), v->end());
    }
    double leaf_hosts = 0, others_week = 0, others_flagged = 0, others = 0;
    for (int leaf : leaves) {
        const double size = leaf >= 0 ? static_cast<double>(graph.hosts_at_leaf(leaf).size()) : 1;
        leaf_hosts += size;
        if (leaf < 0)
            continue;
        const auto [sum, flagged] = history.leaf(leaf);
        auto m = std::find_if(mine.begin(), mine.end(), [&](const auto &e) { return e.first == leaf; });
        const auto own = m == mine.end() ? std::pair<double, int>{0, 0} : m->second;
        others_week += sum - own.first;
        others_flagged += flagged - own.second;
    }
    others = leaf_hosts - static_cast<double>(hosts.size());
    double domain_hosts = 0;
    for (int d : domains)
        domain_hosts += static_cast<double>(graph.domain_hosts(d).size());
    x[2] = std::log(static_cast<double>(hosts.size()));
    x[3] = std::log(static_cast<double>(leaves.size()));
    x[4] = std::log1p(static_cast<double>(domains.size()));
    x[5] = std::log(std::max(leaf_hosts / static_cast<double>(leaves.size()), 1.0));
    x[6] = domains.empty() ? 0.0 : std::log1p(domain_hosts / static_cast<double>(domains.size()));
    x[7] = std::log1p(day);
    x[8] = std::log1p(week);
    x[9] = std::log1p(month);
    x[10] = std::log1p(gpu);
    x[11] = std::log1p(network);
    x[12] = std::log1p(other);
    x[13] = recency;
    x[14] = std::log1p(std::max(others_week, 0.0));
    x[15] = others > 0 ? std::clamp(others_flagged / others, 0.0, 1.0) : 0.0;
    return x;
}

LearnedRisk::LearnedRisk() {
    scale.fill(1.0);
}

double LearnedRisk::output(const RiskInputs &x, std::array<double, kRiskHidden> *hidden) const {
    double z = w[kB2];
    for (int k = 0; k < kRiskHidden; ++k) {
        double a = w[static_cast<std::size_t>(kB1 + k)];
        for (int i = 0; i < kRiskInputs; ++i)
            a += w[static_cast<std::size_t>(kW1 + k * kRiskInputs + i)] *
                 (x[static_cast<std::size_t>(i)] - mean[static_cast<std::size_t>(i)]) /
                 scale[static_cast<std::size_t>(i)];
        const double h = std::tanh(a);
        if (hidden)
            (*hidden)[static_cast<std::size_t>(k)] = h;
        z += w[static_cast<std::size_t>(kW2 + k)] * h;
    }
    return z;
}

double LearnedRisk::rate_per_day(const RiskInputs &x) const {
    return softplus(output(x, nullptr));
}

double LearnedRisk::probability(const RiskInputs &x, double days) const {
    return days > 0 ? -std::expm1(-rate_per_day(x) * days) : 0.0;
}

double LearnedRisk::backprop(const RiskInputs &x, double days, double hit, double total,
                             std::array<double, kParameters> &grad) const {
    std::array<double, kRiskHidden> h{};
    const double z = output(x, &h);
    // rate r = softplus(z); each of `hit` placements was stopped within `days` (chance
    // 1 - e^(-r days)), each of the others was not (e^(-r days)).
    const double r = std::max(softplus(z), 1e-12), e = r * std::max(days, 1e-9);
    const double loss = -hit * std::log(-std::expm1(-e)) + (total - hit) * e;
    const double dr = -hit * days / std::expm1(e) + (total - hit) * days;
    const double dz = dr * sigmoid(z);
    grad[kB2] += dz;
    for (int k = 0; k < kRiskHidden; ++k) {
        const double hk = h[static_cast<std::size_t>(k)];
        grad[static_cast<std::size_t>(kW2 + k)] += dz * hk;
        const double da = dz * w[static_cast<std::size_t>(kW2 + k)] * (1 - hk * hk);
        grad[static_cast<std::size_t>(kB1 + k)] += da;
        for (int i = 0; i < kRiskInputs; ++i)
            grad[static_cast<std::size_t>(kW1 + k * kRiskInputs + i)] +=
                da * (x[static_cast<std::size_t>(i)] - mean[static_cast<std::size_t>(i)]) /
                scale[static_cast<std::size_t>(i)];
    }
    return loss;
}

std::string LearnedRisk::to_json() const {
    nlohmann::json j;
    j["format"] = kFormat;
    j["version"] = kVersion;
    j["inputs"] = std::vector<std::string>(std::begin(kInputNames), std::end(kInputNames));
    j["mean"] = mean;
    j["scale"] = scale;
    j["hidden"] = kRiskHidden;
    j["parameters"] = w;
    j["trained"] = {{"trace", info.trace},
                    {"jobs", info.jobs},
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
                     {"log_loss_hand_written", info.log_loss_hand_written},
                     {"pairs_accuracy", optional_json(info.pairs_accuracy)},
                     {"pairs_accuracy_hand_written", optional_json(info.pairs_accuracy_hand_written)}};
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
    if (j.value("version", nlohmann::json()) == 1)
        return bad(source, "version", "1",
                   "2 (version 1 rated hosts, not placements: train a new model with "
                   "ai-sim train-risk)");
    if (j.value("version", nlohmann::json()) != kVersion)
        return bad(source, "version", field("version"), std::to_string(kVersion));
    if (j.value("hidden", nlohmann::json()) != kRiskHidden)
        return bad(source, "hidden", field("hidden"), std::to_string(kRiskHidden));
    LearnedRisk m;
    // Bounds that keep every sum in the network finite (no training comes near them).
    auto numbers = [&](const char *key, auto &out, double low, double high,
                       const char *expected) -> std::optional<InputError> {
        auto it = j.find(key);
        if (it == j.end() || !it->is_array() || it->size() != out.size())
            return bad(source, key, it == j.end() ? "" : it->dump().substr(0, 80),
                       "an array of " + std::to_string(out.size()) + " numbers");
        for (std::size_t i = 0; i < out.size(); ++i) {
            const auto &v = (*it)[i];
            if (!v.is_number() || !(v.get<double>() >= low && v.get<double>() <= high))
                return bad(source, std::string(key) + "[" + std::to_string(i) + "]", v.dump(),
                           expected);
            out[i] = v.get<double>();
        }
        return std::nullopt;
    };
    if (auto e = numbers("mean", m.mean, -1e6, 1e6, "a number from -1e6 to 1e6"))
        return *e;
    if (auto e = numbers("scale", m.scale, 1e-6, 1e6, "a number from 1e-6 to 1e6"))
        return *e;
    if (auto e = numbers("parameters", m.w, -1e6, 1e6, "a number from -1e6 to 1e6"))
        return *e;
    try {
        const auto &t = j.at("trained");
        m.info.trace = t.value("trace", std::string());
        m.info.jobs = t.value("jobs", std::string());
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
        for (auto [key, out] : {std::pair{"pairs_accuracy", &m.info.pairs_accuracy},
                                {"pairs_accuracy_hand_written", &m.info.pairs_accuracy_hand_written}})
            if (const auto &v = h.at(key); !v.is_null())
                *out = v.get<double>();
        m.info.beats_hand_written = j.at("beats_hand_written").get<bool>();
    } catch (const nlohmann::json::exception &e) {
        return bad(source, "trained/held_out/beats_hand_written", e.what(),
                   "the training record ai-sim train-risk writes");
    }
    return m;
}

Parsed<LearnedRisk> LearnedRisk::load(const std::string &path) {
    auto text = read_text_file(path, 1u << 20, "RiskModel");  // the key that names the file
    if (!text)
        return text.error();
    return parse(text.value(), path);
}

}  // namespace slurm_ai
