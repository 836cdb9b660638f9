#include "measurements.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <numeric>
#include <optional>
#include <string_view>
#include <system_error>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "slurm_ai/common/csv_table.hpp"
#include "slurm_ai/common/file_io.hpp"
#include "slurm_ai/common/text_scan.hpp"

namespace slurm_ai::testbed {
namespace {

namespace fs = std::filesystem;

// A node of the testbed holds at most 9 GPUs for a placement to be written as digits.
constexpr int kMaxDigit = 9;

struct Sum {
    Configuration config;
    double sync = 0, step = 0;
};

// Rows of one file, summed per placement in order of first appearance.
class Accumulator {
  public:
    explicit Accumulator(std::vector<Measurement> &rows) : rows_(&rows) {}

    void add(const std::string &model, const std::string &source, std::vector<int> gpus, double bsz,
             double step, double sync) {
        rows_->push_back({model, source, gpus, bsz, step, sync});
        std::string key;
        for (int g : gpus)
            key += static_cast<char>('0' + g);
        auto [it, fresh] = index_.try_emplace(key, sums_.size());
        if (fresh) {
            Sum s;
            s.config.model = model;
            s.config.placement = key;
            s.config.gpus_per_node = std::move(gpus);
            s.config.source = source;
            sums_.push_back(std::move(s));
        }
        Sum &s = sums_[it->second];
        if (s.config.rows == 0 || bsz < s.config.smallest_bsz) {
            s.config.smallest_bsz = bsz;
            s.config.smallest_bsz_sync_s = sync;
        }
        ++s.config.rows;
        s.sync += sync;
        s.step += step;
    }

    void flush(std::vector<Configuration> &out) {
        for (auto &s : sums_) {
            s.config.sync_s = s.sync / s.config.rows;
            s.config.step_s = s.step / s.config.rows;
            out.push_back(std::move(s.config));
        }
        sums_.clear();
        index_.clear();
    }

  private:
    std::vector<Measurement> *rows_;
    std::vector<Sum> sums_;
    std::map<std::string, std::size_t> index_;
};

std::optional<InputError> read_placements(const std::string &model, const fs::path &path,
                                          Measurements &out) {
    auto text = read_text_file(path.string());
    if (!text)
        return text.error();
    CsvTable csv(path.string(), std::move(text).value());
    if (auto err = csv.header({"placement", "local_bsz", "step_time", "sync_time"}))
        return err;
    Accumulator acc(out.rows);
    std::vector<std::string_view> cells;
    while (csv.row(cells)) {
        if (auto err = csv.check_width(cells[0]))
            return err;
        // Zeros stand for nodes without replicas; the Pollux simulator drops them too.
        std::vector<int> gpus;
        for (char c : cells[0]) {
            if (c < '0' || c > '9')
                return csv.error("placement", cells[0],
                                 "digits, one per node, each the GPUs the job uses there");
            if (c != '0')
                gpus.push_back(c - '0');
        }
        if (gpus.empty())
            return csv.error("placement", cells[0], "at least one non-zero digit");
        auto bsz = csv.number("local_bsz", cells[1], true);
        auto step = csv.number("step_time", cells[2], true);
        auto sync = csv.number("sync_time", cells[3], false);
        for (const auto *p : {&bsz, &step, &sync})
            if (!*p)
                return p->error();
        acc.add(model, "placements.csv", std::move(gpus), bsz.value(), step.value(), sync.value());
    }
    acc.flush(out.configs);
    return std::nullopt;
}

std::optional<InputError> read_scalability(const std::string &model, const fs::path &path,
                                           Measurements &out) {
    auto text = read_text_file(path.string());
    if (!text)
        return text.error();
    CsvTable csv(path.string(), std::move(text).value());
    if (auto err = csv.header({"num_nodes", "num_replicas", "local_bsz", "step_time", "sync_time"}))
        return err;
    Accumulator acc(out.rows);
    std::vector<std::string_view> cells;
    while (csv.row(cells)) {
        if (auto err = csv.check_width(cells[0]))
            return err;
        auto nodes = csv.count("num_nodes", cells[0], 1, 4096);
        if (!nodes)
            return nodes.error();
        auto replicas =
            csv.count("num_replicas", cells[1], nodes.value(), nodes.value() * kMaxDigit);
        if (!replicas)
            return replicas.error();
        auto bsz = csv.number("local_bsz", cells[2], true);
        auto step = csv.number("step_time", cells[3], true);
        auto sync = csv.number("sync_time", cells[4], false);
        for (const auto *p : {&bsz, &step, &sync})
            if (!*p)
                return p->error();
        acc.add(model, "scalability.csv", spread_evenly(nodes.value(), replicas.value()),
                bsz.value(), step.value(), sync.value());
    }
    acc.flush(out.configs);
    return std::nullopt;
}

}  // namespace

int Configuration::gpus() const {
    return std::accumulate(gpus_per_node.begin(), gpus_per_node.end(), 0);
}

bool Configuration::even() const {
    return std::adjacent_find(gpus_per_node.begin(), gpus_per_node.end(), std::not_equal_to<>()) ==
           gpus_per_node.end();
}

Parsed<std::vector<std::string>> model_list(const Measurements &m, std::string_view text,
                                            std::string_view field) {
    std::vector<std::string> out;
    for (auto name : text::split(text, ',')) {
        name = text::trim(name);
        if (!std::binary_search(m.models.begin(), m.models.end(), name))
            return InputError{std::string(field), std::string(name),
                              fmt::format("models of the measurements, separated by commas ({})",
                                          fmt::join(m.models, ", ")),
                              "", 0};
        out.emplace_back(name);
    }
    return out;
}

ShapeProfile measured_shapes(const Measurements &m, int gpus_per_host,
                             const std::vector<std::string> &without) {
    // Per model, its own profile: a shape's mean step over its configurations (orders,
    // files) over its fastest of as many GPUs.
    std::map<std::string, std::vector<ShapeProfile::Row>> rows;
    for (const auto &c : m.configs)
        if (std::find(without.begin(), without.end(), c.model) == without.end() &&
            !c.gpus_per_node.empty() &&
            *std::max_element(c.gpus_per_node.begin(), c.gpus_per_node.end()) <= gpus_per_host)
            rows[c.model].push_back({gpus_per_host, c.gpus_per_node, c.step_s});
    std::map<ShapeProfile::Shape, std::vector<double>> ratios;
    for (const auto &[model, own] : rows)
        for (auto &[shape, ratio] : ShapeProfile(own).shapes(gpus_per_host))
            ratios[shape].push_back(ratio);
    // Per shape: the largest over the models. A job's model is not known when it is
    // placed, so a shape is rated by the model it suits least (a median ranked 16 GPUs on
    // 12 hosts first, 5-16% slower than 4444 for the models that ran there most).
    std::vector<ShapeProfile::Row> worst;
    for (const auto &[shape, r] : ratios)
        worst.push_back({gpus_per_host, shape, *std::max_element(r.begin(), r.end())});
    return ShapeProfile(worst);
}

std::vector<int> spread_evenly(int nodes, int replicas) {
    std::vector<int> gpus(static_cast<std::size_t>(std::max(nodes, 0)), 0);
    for (int i = 0; i < nodes; ++i)
        gpus[static_cast<std::size_t>(i)] = replicas / nodes + (i < replicas % nodes ? 1 : 0);
    return gpus;
}

Parsed<Measurements> load_measurements(const std::string &dir) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec))
        return InputError{"--data", dir, "a directory with one subdirectory per model", "", 0};
    Measurements m;
    for (const auto &entry : fs::directory_iterator(dir, ec))
        if (entry.is_directory() && fs::is_regular_file(entry.path() / "placements.csv"))
            m.models.push_back(entry.path().filename().string());
    if (ec)
        return InputError{"--data", dir, "a readable directory (" + ec.message() + ")", "", 0};
    std::sort(m.models.begin(), m.models.end());
    if (m.models.empty())
        return InputError{"--data", dir, "a directory whose subdirectories hold placements.csv", "",
                          0};
    for (const auto &model : m.models) {
        fs::path base = fs::path(dir) / model;
        if (auto err = read_placements(model, base / "placements.csv", m))
            return *err;
        if (fs::is_regular_file(base / "scalability.csv"))
            if (auto err = read_scalability(model, base / "scalability.csv", m))
                return *err;
    }
    return m;
}

}  // namespace slurm_ai::testbed
