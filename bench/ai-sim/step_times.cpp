#include "step_times.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include <fmt/format.h>

#include "slurm_ai/common/enum_names.hpp"

namespace slurm_ai::sim {

const char *to_string(StepSource s) {
    static constexpr std::string_view kNames[] = {"measured", "measured, nearest shape",
                                                  "cost model"};
    return enum_name(s, kNames).data();
}

double StepEstimate::efficiency() const {
    if (comm_s <= 0)
        return 1.0;
    return std::clamp(ideal_comm_s / comm_s, 0.0, 1.0);
}

std::string placement_key(const std::vector<int> &gpus_per_node) {
    std::string digits;
    for (int g : gpus_per_node)
        if (g > 0)
            digits += g > 9 ? '?' : static_cast<char>('0' + g);
    std::string best = digits;
    for (std::size_t r = 1; r < digits.size(); ++r) {
        std::string rotated = digits.substr(r) + digits.substr(0, r);
        best = std::min(best, rotated);
    }
    return best;
}

StepTimes::StepTimes(double comm_share) : comm_share_(comm_share) {}

StepTimes::StepTimes(const testbed::Measurements &m, int max_gpus_per_node, int max_nodes,
                     double comm_share)
    : comm_share_(comm_share > 0 ? comm_share : median_sync_share(m)),
      max_gpus_per_node_(max_gpus_per_node),
      max_nodes_(max_nodes) {
    for (const auto &row : m.rows) {
        Model &model = models_[row.model];
        std::string key = placement_key(row.gpus_per_node);
        auto &points = model.by_key[key];
        if (points.empty()) {
            Shape s{static_cast<int>(key.size()),
                    std::accumulate(row.gpus_per_node.begin(), row.gpus_per_node.end(), 0)};
            model.keys_of_shape[s].push_back(key);
        }
        points.push_back({row.local_bsz, row.step_s, row.sync_s});
    }
    for (auto &[name, model] : models_)
        for (auto &[key, points] : model.by_key) {
            std::stable_sort(points.begin(), points.end(),
                             [](const Point &a, const Point &b) { return a.bsz < b.bsz; });
            // A placement measured twice at one batch size (placements.csv and
            // scalability.csv) counts as the mean of both.
            std::vector<Point> merged;
            std::vector<int> n;
            for (const auto &p : points) {
                if (!merged.empty() && merged.back().bsz == p.bsz) {
                    auto &q = merged.back();
                    int k = ++n.back();
                    q.step += (p.step - q.step) / k;
                    q.sync += (p.sync - q.sync) / k;
                } else {
                    merged.push_back(p);
                    n.push_back(1);
                }
            }
            points = std::move(merged);
        }
    source_ = m.models.empty() ? std::string() : fmt::format("{} models", m.models.size());
}

double StepTimes::median_sync_share(const testbed::Measurements &m) {
    // Per configuration (model and placement), the share at its median batch size.
    std::map<std::pair<std::string, std::string>, std::vector<std::pair<double, double>>> by;
    for (const auto &row : m.rows) {
        int gpus = std::accumulate(row.gpus_per_node.begin(), row.gpus_per_node.end(), 0);
        if (gpus > 1 && row.step_s > 0)
            by[{row.model, placement_key(row.gpus_per_node)}].push_back(
                {row.local_bsz, row.sync_s / row.step_s});
    }
    std::vector<double> shares;
    for (auto &[key, v] : by) {
        std::sort(v.begin(), v.end());
        shares.push_back(v[v.size() / 2].second);
    }
    if (shares.empty())
        return 0.3;
    std::sort(shares.begin(), shares.end());
    return shares[shares.size() / 2];
}

std::string StepTimes::rule() const {
    std::string out;
    if (!models_.empty()) {
        std::string names;
        for (const auto &[name, model] : models_)
            names += (names.empty() ? "" : ", ") + name;
        out += fmt::format(
            "jobs of a measured model ({}) take step and sync time from the measurements of their "
            "placement (GPUs per node, rotated as Pollux does), interpolated in the per-GPU batch "
            "size; a placement never measured takes the mean of the nearest measured node and GPU "
            "counts. ",
            names);
    }
    out += fmt::format(
        "{} jobs take communication per step from the placement engine's cost model, with "
        "computation set so that communication is {:.0f}% of a step on the ideal placement{}. A "
        "recorded duration is the run time on the ideal placement (the best the job's request "
        "allows); on another one a job runs step / ideal step times as long.",
        models_.empty() ? "All" : "Other", comm_share_ * 100,
        models_.empty() ? "" : " (the median sync share of the measured multi-GPU configurations)");
    return out;
}

StepTimes::Point StepTimes::at(const std::vector<Point> &pts, double bsz) {
    if (bsz <= pts.front().bsz)
        return pts.front();
    if (bsz >= pts.back().bsz)
        return pts.back();
    auto hi = std::lower_bound(pts.begin(), pts.end(), bsz,
                               [](const Point &p, double b) { return p.bsz < b; });
    auto lo = std::prev(hi);
    double w = (bsz - lo->bsz) / (hi->bsz - lo->bsz);
    return {bsz, lo->step + w * (hi->step - lo->step), lo->sync + w * (hi->sync - lo->sync)};
}

StepTimes::Point StepTimes::shape_mean(const Model &m, const Shape &want, double bsz) const {
    // The nearest measured shape, by log distance in nodes and GPUs.
    const Shape *best = nullptr;
    double best_d = std::numeric_limits<double>::infinity();
    for (const auto &[s, keys] : m.keys_of_shape) {
        double d = std::abs(std::log(static_cast<double>(s.nodes) / want.nodes)) +
                   std::abs(std::log(static_cast<double>(s.gpus) / want.gpus));
        if (d < best_d - 1e-12) {
            best_d = d;
            best = &s;
        }
    }
    Point sum{bsz, 0, 0};
    const auto &keys = m.keys_of_shape.at(*best);
    for (const auto &k : keys) {
        Point p = at(m.by_key.at(k), bsz);
        sum.step += p.step / static_cast<double>(keys.size());
        sum.sync += p.sync / static_cast<double>(keys.size());
    }
    return sum;
}

StepTimes::Point StepTimes::best_for_gpus(const Model &m, int gpus, double bsz,
                                          const AskedShape &asked) const {
    bool found = false;
    Point best{bsz, 0, 0};
    const int most_nodes = asked.max_nodes > 0 ? std::min(asked.max_nodes, max_nodes_) : max_nodes_;
    auto refused = [&](char c) {
        return c == '?' || c - '0' > max_gpus_per_node_ ||
               (asked.per_node > 0 && c - '0' != asked.per_node);
    };
    for (const auto &[s, keys] : m.keys_of_shape) {
        if (s.gpus != gpus || s.nodes > most_nodes || s.nodes < asked.min_nodes)
            continue;
        for (const auto &k : keys) {
            if (std::any_of(k.begin(), k.end(), refused))
                continue;
            Point p = at(m.by_key.at(k), bsz);
            if (!found || p.step < best.step) {
                best = p;
                found = true;
            }
        }
    }
    if (found)
        return best;
    const int per_node = std::max(max_gpus_per_node_, 1);
    int nodes = asked.per_node > 0 ? gpus / asked.per_node : (gpus + per_node - 1) / per_node;
    nodes = std::max({std::min(nodes, most_nodes), asked.min_nodes, 1});
    return shape_mean(m, {nodes, gpus}, bsz);
}

StepEstimate StepTimes::from_measurements(const std::string &model, double local_bsz,
                                          const std::vector<int> &gpus_per_node,
                                          const AskedShape &asked) const {
    const Model &m = models_.at(model);
    StepEstimate e;
    std::string key = placement_key(gpus_per_node);
    int gpus = std::accumulate(gpus_per_node.begin(), gpus_per_node.end(), 0);
    Point here;
    if (auto it = m.by_key.find(key); it != m.by_key.end()) {
        here = at(it->second, local_bsz);
        e.source = StepSource::kMeasured;
    } else {
        here = shape_mean(m, {static_cast<int>(key.size()), gpus}, local_bsz);
        e.source = StepSource::kNearestShape;
    }
    Point ideal = best_for_gpus(m, gpus, local_bsz, asked);
    e.step_s = here.step;
    e.comm_s = here.sync;
    e.ideal_step_s = std::min(ideal.step, here.step);
    e.ideal_comm_s = ideal.step <= here.step ? ideal.sync : here.sync;
    return e;
}

StepEstimate StepTimes::from_cost_model(const Placement &p) const {
    // The job at the size it asks: its computation from its own ideal communication (an
    // ideal of 0 with communication here leaves the rule nothing to scale: the placement's
    // own time sets the scale then).
    const double ideal = std::min(p.lower_bound_s, p.comm_s);
    return from_cost_model(p, ideal > 0 ? ideal : p.comm_s, 1.0);
}

double StepTimes::compute_s(double ideal_comm_s) const {
    return ideal_comm_s * (1 - comm_share_) / comm_share_;
}

StepEstimate StepTimes::from_cost_model(const Placement &p, double asked_ideal_comm_s,
                                        double asked_over_here) const {
    StepEstimate e;
    e.source = StepSource::kCostModel;
    const double compute = compute_s(asked_ideal_comm_s > 0 ? asked_ideal_comm_s : p.comm_s) *
                           asked_over_here;
    const double ideal = std::min(p.lower_bound_s, p.comm_s);
    if (compute <= 0 && p.comm_s <= 0)
        return e;
    e.comm_s = p.comm_s;
    e.step_s = compute + p.comm_s;
    e.ideal_comm_s = ideal;
    e.ideal_step_s = compute + ideal;
    return e;
}

double StepTimes::asked_step_s(double asked_ideal_comm_s) const {
    return asked_ideal_comm_s > 0 ? compute_s(asked_ideal_comm_s) + asked_ideal_comm_s : 1.0;
}

}  // namespace slurm_ai::sim
