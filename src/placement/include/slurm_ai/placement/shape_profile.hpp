// Measured step times by placement shape: what a site's own training runs show about how
// a job's GPUs are best spread over its hosts, where the cost model's bandwidth arithmetic
// can be wrong (docs/cost-model.md measures a testbed whose two-host runs are far slower
// than any bandwidth model predicts). The engine reads it when ai_select.conf names one
// (ShapeProfile=); docs/placement.md, "Measured shapes", says how it is used.
//
// The file is CSV with the header gpus_per_host,shape,step:
//   gpus_per_host  the GPUs of each host the row was measured on; hosts with another
//                  number of GPUs do not use the row
//   shape          the GPUs the job had on each host, in any order: digits ("3221") or
//                  numbers joined by '+' ("8+8"); at least one host
//   step           its step time in any unit (seconds, or a ratio): only shapes of one
//                  GPU count on one kind of host are compared, so each group is divided
//                  by its fastest shape when the file is read
// A shape given twice (in two orders, or twice as measured) takes the mean of its rows.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "slurm_ai/common/input_error.hpp"

namespace slurm_ai {

class ShapeProfile {
  public:
    // GPUs per host, largest first: the key of a shape.
    using Shape = std::vector<int>;

    // One measurement: a step time of `shape` on hosts of gpus_per_host GPUs.
    struct Row {
        int gpus_per_host = 0;
        Shape shape;
        double step = 0;
    };

    ShapeProfile() = default;
    // Each shape's mean step over its rows, over the fastest mean of as many GPUs on as
    // large hosts.
    explicit ShapeProfile(const std::vector<Row> &rows);

    // The step of `counts` (GPUs per host, any order) on hosts of gpus_per_host GPUs over
    // the fastest profiled shape of as many GPUs, >= 1. A shape not profiled while others
    // of its GPU count are takes the mean ratio of those with the nearest host count.
    // nullopt where nothing of that GPU count on such hosts was profiled.
    std::optional<double> ratio(int gpus_per_host, Shape counts) const;
    // The profiled shapes of `gpus` GPUs on hosts of gpus_per_host GPUs, fastest first.
    std::vector<std::pair<Shape, double>> fastest(int gpus_per_host, int gpus) const;
    // The host sizes (GPUs per host) the profile has rows for.
    std::vector<int> host_sizes() const;
    // Every profiled shape on hosts of gpus_per_host GPUs, with its ratio.
    std::vector<std::pair<Shape, double>> shapes(int gpus_per_host) const;

    bool empty() const { return ratios_.empty(); }
    std::size_t size() const;  // shapes profiled
    // The file's text for these ratios (ratios as the step column).
    std::string csv() const;

  private:
    struct Key {
        int gpus_per_host = 0;
        int gpus = 0;
        bool operator<(const Key &o) const {
            return std::pair(gpus_per_host, gpus) < std::pair(o.gpus_per_host, o.gpus);
        }
    };
    std::map<Key, std::map<Shape, double>> ratios_;
};

// Reads a profile file as described above. Errors name the file, line, field and value.
Parsed<ShapeProfile> parse_shape_profile(std::string text, const std::string &source);
Parsed<ShapeProfile> load_shape_profile(const std::string &path);

// "3221" or "8+8" as GPUs per host, largest first; nullopt if it is neither.
std::optional<ShapeProfile::Shape> parse_shape(std::string_view text);

}  // namespace slurm_ai
