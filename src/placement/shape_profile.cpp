#include "slurm_ai/placement/shape_profile.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <numeric>

#include "slurm_ai/common/csv_table.hpp"
#include "slurm_ai/common/file_io.hpp"
#include "slurm_ai/common/text_scan.hpp"

namespace slurm_ai {
namespace {

constexpr int kMaxGpusPerHost = 1024;
constexpr int kMaxHosts = 4096;

int sum(const ShapeProfile::Shape &s) { return std::accumulate(s.begin(), s.end(), 0); }

}  // namespace

std::optional<ShapeProfile::Shape> parse_shape(std::string_view text) {
    ShapeProfile::Shape out;
    const bool joined = text.find('+') != std::string_view::npos;
    if (!joined) {
        for (char ch : text) {
            if (ch < '1' || ch > '9')
                return std::nullopt;
            out.push_back(ch - '0');
        }
    } else {
        for (auto part : text::split(text, '+')) {
            part = text::trim(part);
            int v = 0;
            auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
            if (part.empty() || ec != std::errc() || end != part.data() + part.size() || v < 1 ||
                v > kMaxGpusPerHost)
                return std::nullopt;
            out.push_back(v);
        }
    }
    if (out.empty() || std::ssize(out) > kMaxHosts)
        return std::nullopt;
    std::sort(out.begin(), out.end(), std::greater<>());
    return out;
}

ShapeProfile::ShapeProfile(const std::vector<Row> &rows) {
    std::map<Key, std::map<Shape, std::pair<double, int>>> sums;  // step sum, rows
    for (const auto &row : rows) {
        Shape shape = row.shape;
        std::sort(shape.begin(), shape.end(), std::greater<>());
        auto &cell = sums[Key{row.gpus_per_host, sum(shape)}][shape];
        cell.first += row.step;
        ++cell.second;
    }
    for (const auto &[key, shapes] : sums) {
        double fastest = 0;
        for (const auto &[shape, cell] : shapes) {
            const double mean = cell.first / cell.second;
            fastest = fastest == 0 ? mean : std::min(fastest, mean);
        }
        for (const auto &[shape, cell] : shapes)
            ratios_[key][shape] = cell.first / cell.second / fastest;
    }
}

std::optional<double> ShapeProfile::ratio(int gpus_per_host, Shape counts) const {
    std::sort(counts.begin(), counts.end(), std::greater<>());
    auto group = ratios_.find(Key{gpus_per_host, sum(counts)});
    if (group == ratios_.end())
        return std::nullopt;
    if (auto it = group->second.find(counts); it != group->second.end())
        return it->second;
    // Not profiled: the shapes of the nearest host count, on average.
    const auto hosts = std::ssize(counts);
    long nearest = -1;
    for (const auto &[shape, r] : group->second)
        if (nearest < 0 || std::abs(std::ssize(shape) - hosts) < std::abs(nearest - hosts))
            nearest = std::ssize(shape);
    double total = 0;
    int n = 0;
    for (const auto &[shape, r] : group->second)
        if (std::abs(std::ssize(shape) - hosts) == std::abs(nearest - hosts)) {
            total += r;
            ++n;
        }
    return total / n;
}

std::vector<std::pair<ShapeProfile::Shape, double>> ShapeProfile::fastest(int gpus_per_host,
                                                                           int gpus) const {
    std::vector<std::pair<Shape, double>> out;
    if (auto group = ratios_.find(Key{gpus_per_host, gpus}); group != ratios_.end())
        out.assign(group->second.begin(), group->second.end());
    // Fastest first; among equals the fewer hosts.
    std::stable_sort(out.begin(), out.end(), [](const auto &a, const auto &b) {
        return a.second != b.second ? a.second < b.second : a.first.size() < b.first.size();
    });
    return out;
}

std::vector<int> ShapeProfile::host_sizes() const {
    std::vector<int> out;
    for (const auto &[key, shapes] : ratios_)
        if (out.empty() || out.back() != key.gpus_per_host)
            out.push_back(key.gpus_per_host);
    return out;
}

std::vector<std::pair<ShapeProfile::Shape, double>> ShapeProfile::shapes(int gpus_per_host) const {
    std::vector<std::pair<Shape, double>> out;
    for (const auto &[key, group] : ratios_)
        if (key.gpus_per_host == gpus_per_host)
            out.insert(out.end(), group.begin(), group.end());
    return out;
}

std::size_t ShapeProfile::size() const {
    std::size_t n = 0;
    for (const auto &[key, shapes] : ratios_)
        n += shapes.size();
    return n;
}

std::string ShapeProfile::csv() const {
    std::string out = "gpus_per_host,shape,step\n";
    for (const auto &[key, shapes] : ratios_)
        for (const auto &[shape, r] : shapes) {
            std::string s;
            for (int v : shape)
                s += (s.empty() ? "" : "+") + std::to_string(v);
            char buf[32];
            auto [end, ec] = std::to_chars(buf, buf + sizeof buf, r, std::chars_format::general, 6);
            out += std::to_string(key.gpus_per_host) + "," + s + "," + std::string(buf, end) + "\n";
        }
    return out;
}

Parsed<ShapeProfile> parse_shape_profile(std::string text, const std::string &source) {
    CsvTable csv(source, std::move(text));
    if (auto e = csv.header({"gpus_per_host", "shape", "step"}))
        return *e;
    std::vector<ShapeProfile::Row> rows;
    std::vector<std::string_view> cells;
    while (csv.row(cells)) {
        if (auto e = csv.check_width(cells[0]))
            return *e;
        auto per_host = csv.count("gpus_per_host", cells[0], 1, kMaxGpusPerHost);
        if (!per_host)
            return per_host.error();
        auto shape = parse_shape(cells[1]);
        if (!shape)
            return csv.error("shape", cells[1],
                             "GPUs per host as digits 1-9 (\"3221\") or numbers joined by '+' "
                             "(\"8+8\"), at most " + std::to_string(kMaxHosts) + " hosts");
        if (shape->front() > *per_host)
            return csv.error("shape", cells[1],
                             "no host with more GPUs than gpus_per_host (" +
                                 std::to_string(*per_host) + ")");
        auto step = csv.number("step", cells[2], true);
        if (!step)
            return step.error();
        if (!std::isfinite(*step))
            return csv.error("step", cells[2], "a finite positive number");
        rows.push_back({static_cast<int>(*per_host), std::move(*shape), *step});
    }
    ShapeProfile profile(rows);
    if (profile.empty())
        return InputError{"shape", "", "at least one row under the header", source, csv.line()};
    return profile;
}

Parsed<ShapeProfile> load_shape_profile(const std::string &path) {
    auto text = read_text_file(path, 16u << 20, "ShapeProfile");  // the key that names it
    if (!text)
        return text.error();
    return parse_shape_profile(std::move(text).value(), path);
}

}  // namespace slurm_ai
