#include "slurm_ai/placement/learned_placement.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include <nlohmann/json.hpp>

#include "slurm_ai/common/file_io.hpp"

namespace slurm_ai {
namespace {

constexpr std::string_view kPlaceFormat = "slurm-ai learned placement scorer";
constexpr int kPlaceVersion = 1;
constexpr const char *kJobNames[kPlaceJobInputs] = {
    "ln(1 + gpus)", "ln(1 + fewest hosts)", "log1p(ideal comm ms)", "log1p(time limit h)",
    "log1p(waited h)", "log1p(waiting gpus / job gpus)"};
constexpr const char *kCandidateNames[kPlaceCandidateInputs] = {
    "ln objective",        "1 - efficiency", "log1p(destroyed / job gpus)",
    "log1p(risk / host rate)", "ln(hosts / fewest)", "ln leaves",
    "ln regions",          "share outside the largest region"};
constexpr const char *kRegionNames[kPlaceRegionInputs] = {
    "ln(1 + region gpus)", "free share before", "free share after", "share of the job",
    "leaf uplink load"};

InputError malformed(std::string_view source, std::string field, std::string value,
                     std::string expected) {
    return InputError{std::move(field), std::move(value), std::move(expected),
                      std::string(source), 0};
}

// Where each weight block starts in LearnedPlacement::w for width d.
struct Layout {
    explicit Layout(int d)
        : wq(0),
          bq(wq + d * kPlaceJobInputs),
          wh(bq + d),
          bh(wh + d * kPlaceCandidateInputs),
          wk(bh + d),
          wv(wk + d * kPlaceRegionInputs),
          bv(wv + d * kPlaceRegionInputs),
          beta(bv + d),
          end(beta + kPlaceCandidateInputs) {}
    std::size_t wq, bq, wh, bh, wk, wv, bv, beta, end;
};

template <std::size_t N>
std::vector<double> standardized(const std::array<double, N> &x, const std::array<double, N> &mean,
                                 const std::array<double, N> &scale) {
    std::vector<double> z(N);
    for (std::size_t i = 0; i < N; ++i)
        z[i] = (x[i] - mean[i]) / scale[i];
    return z;
}

// y = W z (+ b), W row-major [rows][z.size()] at w[at].
std::vector<double> affine(const std::vector<double> &w, std::size_t at, int rows,
                           const std::vector<double> &z, const double *bias) {
    std::vector<double> y(static_cast<std::size_t>(rows));
    for (std::size_t r = 0; r < y.size(); ++r) {
        double s = bias ? bias[r] : 0.0;
        for (std::size_t i = 0; i < z.size(); ++i)
            s += w[at + r * z.size() + i] * z[i];
        y[r] = s;
    }
    return y;
}

void tanh_all(std::vector<double> &v) {
    for (double &x : v)
        x = std::tanh(x);
}

double dot(const std::vector<double> &a, const std::vector<double> &b) {
    double s = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
        s += a[i] * b[i];
    return s;
}

// The gradient of W in y = W z (+ b), row-major at grad[at], given y's: grad[at + r*z + i]
// += g[r] * z[i]. (The inputs z are data: no gradient flows further back.)
void affine_back(std::size_t at, const std::vector<double> &g, const std::vector<double> &z,
                 std::vector<double> &grad) {
    for (std::size_t r = 0; r < g.size(); ++r)
        for (std::size_t i = 0; i < z.size(); ++i)
            grad[at + r * z.size() + i] += g[r] * z[i];
}

// A region of the fabric as the scorer sees it: an NVLink domain, else a leaf switch,
// else a host; and its hosts.
std::pair<int, int> region_of(const ClusterGraph &g, int host) {
    if (int d = g.nvlink_domain(host); d >= 0)
        return {0, d};
    if (int l = g.host_leaf(host); l >= 0)
        return {1, l};
    return {2, host};
}

std::vector<int> region_hosts(const ClusterGraph &g, std::pair<int, int> r) {
    if (r.first == 0)
        return g.domain_hosts(r.second);
    if (r.first == 1)
        return g.hosts_at_leaf(r.second);
    return {r.second};
}

}  // namespace

bool LearnedPlacementInfo::beats_engine() const {
    return !judged.empty() &&
           std::all_of(judged.begin(), judged.end(), [](const PlaceJudgement &j) {
               return j.windows > 0 && j.mean_jct_h < j.engine_mean_jct_h * (1 - kJctTie);
           });
}

std::string LearnedPlacementInfo::judged_text() const {
    if (judged.empty())
        return "never judged";
    std::string out;
    for (const auto &j : judged) {
        char line[160];
        std::snprintf(line, sizeof line,
                      "%smean JCT %.3f h against the engine's %.3f h at %d hosts (%d windows)",
                      out.empty() ? "" : ", ", j.mean_jct_h, j.engine_mean_jct_h, j.hosts,
                      j.windows);
        out += line;
    }
    return out;
}

PlaceDecision placement_inputs(const ClusterGraph &g, const ClusterState &state,
                               const JobDemand &demand, double ideal_comm_s,
                               double host_rate_per_day,
                               const std::vector<PlaceCandidateFacts> &candidates) {
    const bool by_gpu = demand.total_gpus > 0;
    auto units_of = [&](const Placement &p, std::size_t i) {
        return by_gpu ? static_cast<double>(p.gpus[i].size()) : 1.0;
    };
    double fewest = 1e300;
    for (const auto &c : candidates)
        fewest = std::min(fewest, static_cast<double>(c.placement->hosts.size()));
    fewest = std::max(1.0, candidates.empty() ? 1.0 : fewest);
    const double job_units = by_gpu ? demand.total_gpus : std::max<double>(1, demand.min_nodes);
    double waiting = 0;
    for (const auto &s : state.wanted)
        waiting += s.gpus * s.weight;

    PlaceDecision d;
    d.job = {std::log1p(demand.total_gpus), std::log1p(fewest), std::log1p(ideal_comm_s * 1e3),
             std::log1p(demand.time_limit_s / 3600.0), std::log1p(demand.pending_s / 3600.0),
             std::log1p(waiting / job_units)};
    for (const auto &c : candidates) {
        const Placement &p = *c.placement;
        std::map<std::pair<int, int>, double> taken;
        std::set<int> leaves;
        double units = 0;
        for (std::size_t i = 0; i < p.hosts.size(); ++i) {
            taken[region_of(g, p.hosts[i])] += units_of(p, i);
            leaves.insert(g.host_leaf(p.hosts[i]));
            units += units_of(p, i);
        }
        PlaceCandidate out;
        double largest = 0;
        for (const auto &[region, here] : taken) {
            const std::vector<int> hosts = region_hosts(g, region);
            double total = 0, free = 0;
            for (int h : hosts) {
                const int n = static_cast<int>(g.node(h).gpus.size());
                total += by_gpu ? n : 1;
                if (state.usable[h] && !state.down[h])
                    free += by_gpu ? state.free_gpu_count(h) : state.host_free(h);
            }
            total = std::max(total, 1.0);
            const int leaf = g.host_leaf(hosts.front());
            const double load =
                leaf >= 0 && static_cast<std::size_t>(leaf) < state.uplink_load.size()
                    ? state.uplink_load[static_cast<std::size_t>(leaf)]
                    : 0.0;
            out.regions.push_back({std::log1p(total), free / total,
                                   std::max(0.0, free - here) / total,
                                   here / std::max(units, 1.0), load});
            largest = std::max(largest, here);
        }
        const double risk = host_rate_per_day > 0 ? p.risk / host_rate_per_day : 0.0;
        out.x = {std::log(std::max(c.objective, 1e-9)),
                 1 - p.efficiency,
                 std::log1p(std::max(0.0, c.destroyed) / job_units),
                 std::log1p(std::max(0.0, risk)),
                 std::log(std::max(1.0, static_cast<double>(p.hosts.size())) / fewest),
                 std::log(std::max<double>(1, static_cast<double>(leaves.size()))),
                 std::log(std::max<double>(1, static_cast<double>(taken.size()))),
                 units > 0 ? 1 - largest / units : 0.0};
        d.candidates.push_back(std::move(out));
    }
    return d;
}

LearnedPlacement::LearnedPlacement(int width)
    : w(parameter_count(width), 0.0), width_(width) {
    scale_job.fill(1);
    scale_candidate.fill(1);
    scale_region.fill(1);
}

std::size_t LearnedPlacement::parameter_count(int width) {
    return Layout(width).end;
}

LearnedPlacement::Pass LearnedPlacement::forward(const PlaceDecision &d) const {
    const Layout at(width_);
    const double root = std::sqrt(static_cast<double>(width_));
    Pass p;
    p.zj = standardized(d.job, mean_job, scale_job);
    p.q = affine(w, at.wq, width_, p.zj, &w[at.bq]);
    tanh_all(p.q);
    for (const auto &c : d.candidates) {
        Pass::Candidate pc;
        pc.zc = standardized(c.x, mean_candidate, scale_candidate);
        pc.h = affine(w, at.wh, width_, pc.zc, &w[at.bh]);
        tanh_all(pc.h);
        std::vector<double> logits;
        for (const auto &r : c.regions) {
            pc.zr.push_back(standardized(r, mean_region, scale_region));
            pc.k.push_back(affine(w, at.wk, width_, pc.zr.back(), nullptr));
            pc.v.push_back(affine(w, at.wv, width_, pc.zr.back(), &w[at.bv]));
            tanh_all(pc.v.back());
            logits.push_back(dot(pc.h, pc.k.back()) / root);
        }
        const double top = logits.empty() ? 0 : *std::max_element(logits.begin(), logits.end());
        double sum = 0;
        for (double l : logits)
            sum += std::exp(l - top);
        pc.u = pc.h;
        for (std::size_t r = 0; r < logits.size(); ++r) {
            pc.a.push_back(std::exp(logits[r] - top) / sum);
            for (int i = 0; i < width_; ++i)
                pc.u[static_cast<std::size_t>(i)] += pc.a[r] * pc.v[r][static_cast<std::size_t>(i)];
        }
        double s = dot(p.q, pc.u) / root;
        for (int i = 0; i < kPlaceCandidateInputs; ++i)
            s += w[at.beta + static_cast<std::size_t>(i)] * pc.zc[static_cast<std::size_t>(i)];
        p.scores.push_back(s);
        p.candidates.push_back(std::move(pc));
    }
    return p;
}

std::size_t LearnedPlacement::choose(const PlaceDecision &d) const {
    const auto s = scores(d);
    std::size_t best = 0;
    for (std::size_t i = 1; i < s.size(); ++i)
        if (s[i] > s[best])
            best = i;
    return best;
}

void LearnedPlacement::backward(const Pass &p, const std::vector<double> &ds,
                                const std::vector<std::vector<double>> &du,
                                std::vector<double> &grad) const {
    const Layout at(width_);
    const auto d = static_cast<std::size_t>(width_);
    const double root = std::sqrt(static_cast<double>(width_));
    std::vector<double> dq(d, 0.0);
    for (std::size_t c = 0; c < p.candidates.size(); ++c) {
        const auto &pc = p.candidates[c];
        const double g = ds[c];
        for (std::size_t i = 0; i < pc.zc.size(); ++i)
            grad[at.beta + i] += g * pc.zc[i];
        std::vector<double> gu(d), gh(d);
        for (std::size_t i = 0; i < d; ++i) {
            dq[i] += g * pc.u[i] / root;
            gu[i] = g * p.q[i] / root + (du.empty() ? 0.0 : du[c][i]);
            gh[i] = gu[i];  // u = h + sum a v
        }
        // Through the attention: da_r = gu . v_r; dlogit_r = a_r (da_r - sum a da).
        std::vector<double> da(pc.a.size());
        double mean_da = 0;
        for (std::size_t r = 0; r < pc.a.size(); ++r) {
            da[r] = dot(gu, pc.v[r]);
            mean_da += pc.a[r] * da[r];
        }
        for (std::size_t r = 0; r < pc.a.size(); ++r) {
            const double dl = pc.a[r] * (da[r] - mean_da) / root;
            std::vector<double> gk(d), gv(d);
            for (std::size_t i = 0; i < d; ++i) {
                gh[i] += dl * pc.k[r][i];
                gk[i] = dl * pc.h[i];
                gv[i] = pc.a[r] * gu[i] * (1 - pc.v[r][i] * pc.v[r][i]);
                grad[at.bv + i] += gv[i];
            }
            affine_back(at.wk, gk, pc.zr[r], grad);
            affine_back(at.wv, gv, pc.zr[r], grad);
        }
        for (std::size_t i = 0; i < d; ++i) {
            gh[i] *= 1 - pc.h[i] * pc.h[i];
            grad[at.bh + i] += gh[i];
        }
        affine_back(at.wh, gh, pc.zc, grad);
    }
    for (std::size_t i = 0; i < d; ++i) {
        dq[i] *= 1 - p.q[i] * p.q[i];
        grad[at.bq + i] += dq[i];
    }
    affine_back(at.wq, dq, p.zj, grad);
}

std::string LearnedPlacement::to_json() const {
    nlohmann::json j;
    j["format"] = kPlaceFormat;
    j["version"] = kPlaceVersion;
    j["width"] = width_;
    j["inputs"] = {{"job", std::vector<std::string>(std::begin(kJobNames), std::end(kJobNames))},
                   {"candidate", std::vector<std::string>(std::begin(kCandidateNames),
                                                          std::end(kCandidateNames))},
                   {"region", std::vector<std::string>(std::begin(kRegionNames),
                                                       std::end(kRegionNames))}};
    j["mean"] = {{"job", mean_job}, {"candidate", mean_candidate}, {"region", mean_region}};
    j["scale"] = {{"job", scale_job}, {"candidate", scale_candidate}, {"region", scale_region}};
    j["parameters"] = w;
    j["trained"] = {{"scenario", info.scenario}, {"method", info.method},
                    {"hosts", info.hosts},       {"windows", info.windows},
                    {"decisions", info.decisions}, {"epochs", info.epochs},
                    {"regularizer", info.regularizer}};
    nlohmann::json judged = nlohmann::json::array();
    for (const auto &v : info.judged)
        judged.push_back({{"hosts", v.hosts},
                          {"windows", v.windows},
                          {"mean_jct_h", v.mean_jct_h},
                          {"engine_mean_jct_h", v.engine_mean_jct_h}});
    j["judged"] = judged;
    j["beats_engine"] = info.beats_engine();
    return j.dump(2) + "\n";
}

namespace {

// Fills `out` (its size is the length wanted) from the numbers at `at`, each in
// [low, high]; `name` names the field in errors ("mean/job").
std::optional<InputError> read_numbers(const nlohmann::json *at, const std::string &name,
                                       double *out, std::size_t n, double low, double high,
                                       std::string_view source) {
    if (!at || !at->is_array() || at->size() != n)
        return malformed(source, name, at ? at->dump().substr(0, 80) : "",
                         "an array of " + std::to_string(n) + " numbers");
    for (std::size_t i = 0; i < n; ++i) {
        const auto &v = (*at)[i];
        if (!v.is_number() || !(v.get<double>() >= low && v.get<double>() <= high))
            return malformed(source, name + "[" + std::to_string(i) + "]", v.dump(),
                             "a number from " + nlohmann::json(low).dump() + " to " +
                                 nlohmann::json(high).dump());
        out[i] = v.get<double>();
    }
    return std::nullopt;
}

const nlohmann::json *member(const nlohmann::json &j, std::string_view a,
                             std::string_view b = {}) {
    if (!j.is_object())
        return nullptr;
    auto it = j.find(a);
    if (it == j.end())
        return nullptr;
    if (b.empty())
        return &*it;
    return member(*it, b);
}

// The training record and the verdict; the verdict must be the one its figures give.
std::optional<InputError> read_record(const nlohmann::json &j, LearnedPlacementInfo &info,
                                      std::string_view source) {
    try {
        const auto &t = j.at("trained");
        info.scenario = t.at("scenario").get<std::string>();
        info.method = t.at("method").get<std::string>();
        info.hosts = t.at("hosts").get<int>();
        info.windows = t.at("windows").get<int>();
        info.decisions = t.at("decisions").get<long>();
        info.epochs = t.at("epochs").get<int>();
        info.regularizer = t.at("regularizer").get<double>();
        for (const auto &v : j.at("judged"))
            info.judged.push_back({v.at("hosts").get<int>(), v.at("windows").get<int>(),
                                   v.at("mean_jct_h").get<double>(),
                                   v.at("engine_mean_jct_h").get<double>()});
    } catch (const nlohmann::json::exception &e) {
        return malformed(source, "trained/judged", e.what(),
                         "the training record: trained {scenario, method, hosts, windows, "
                         "decisions, epochs, regularizer} and judged [{hosts, windows, "
                         "mean_jct_h, engine_mean_jct_h}]");
    }
    const auto *verdict = member(j, "beats_engine");
    if (!verdict || !verdict->is_boolean())
        return malformed(source, "beats_engine", verdict ? verdict->dump() : "",
                         "true or false");
    if (verdict->get<bool>() != info.beats_engine())
        return malformed(source, "beats_engine", verdict->dump(),
                         std::string(info.beats_engine() ? "true" : "false") +
                             ", as the judged figures say (below the engine's mean JCT by more "
                             "than " + nlohmann::json(100 * kJctTie).dump() +
                             "% at every judged size)");
    return std::nullopt;
}

}  // namespace

Parsed<LearnedPlacement> LearnedPlacement::parse(std::string_view text, std::string_view source) {
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception &e) {
        return malformed(source, "JSON", e.what(), "a learned placement scorer's JSON file");
    }
    auto field = [&](const char *key) {
        const auto *v = member(j, key);
        return !v ? std::string() : v->is_string() ? v->get<std::string>() : v->dump();
    };
    if (field("format") != kPlaceFormat)
        return malformed(source, "format", field("format"), std::string(kPlaceFormat));
    if (field("version") != std::to_string(kPlaceVersion))
        return malformed(source, "version", field("version"), std::to_string(kPlaceVersion));
    const auto *width = member(j, "width");
    if (!width || !width->is_number_integer() || width->get<long>() < 1 ||
        width->get<long>() > kPlaceMaxWidth)
        return malformed(source, "width", field("width"),
                         "a whole number from 1 to " + std::to_string(kPlaceMaxWidth));
    LearnedPlacement m(width->get<int>());
    // Bounds that keep every sum of the network finite (training stays far inside them).
    const std::tuple<const char *, const char *, double *, std::size_t, double> groups[] = {
        {"mean", "job", m.mean_job.data(), m.mean_job.size(), -1e6},
        {"mean", "candidate", m.mean_candidate.data(), m.mean_candidate.size(), -1e6},
        {"mean", "region", m.mean_region.data(), m.mean_region.size(), -1e6},
        {"scale", "job", m.scale_job.data(), m.scale_job.size(), 1e-6},
        {"scale", "candidate", m.scale_candidate.data(), m.scale_candidate.size(), 1e-6},
        {"scale", "region", m.scale_region.data(), m.scale_region.size(), 1e-6}};
    for (const auto &[a, b, out, n, low] : groups)
        if (auto e = read_numbers(member(j, a, b), std::string(a) + "/" + b, out, n, low, 1e6,
                                  source))
            return *e;
    if (auto e = read_numbers(member(j, "parameters"), "parameters", m.w.data(), m.w.size(),
                              -1e6, 1e6, source))
        return *e;
    if (auto e = read_record(j, m.info, source))
        return *e;
    return m;
}

Parsed<LearnedPlacement> LearnedPlacement::load(const std::string &path) {
    auto text = read_text_file(path, 4u << 20, "PlacementModel");  // the key that names the file
    if (!text)
        return text.error();
    return parse(text.value(), path);
}

}  // namespace slurm_ai
