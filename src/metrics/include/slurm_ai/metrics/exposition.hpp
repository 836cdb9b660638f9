// The text a metrics scraper reads: metric families with their help, type and unit, each
// sample with its labels, histograms with cumulative buckets. One writer, in the two
// formats Prometheus asks for: OpenMetrics 1.0 (application/openmetrics-text, which
// Prometheus prefers) and the classic text format 0.0.4 (text/plain, what `promtool check
// metrics` and curl read). A family is built through Registry, which checks what the
// formats require where the family is made: names of [a-zA-Z_:][a-zA-Z0-9_:]*, a name
// that ends in its unit, a counter's name without _total (the writer adds it), no family
// twice, label names without the reserved __ prefix, the same label names on every sample
// of a family. A broken rule is a bug of the suite's, not input: it throws
// std::logic_error.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace slurm_ai::metrics {

enum class Type { kGauge, kCounter, kHistogram };
enum class Format { kOpenMetrics, kPrometheusText };

// Label name -> value, in the order written.
using Labels = std::vector<std::pair<std::string, std::string>>;

// Observations counted into buckets by upper bound (inclusive, as `le` says).
class Histogram {
  public:
    explicit Histogram(std::vector<double> upper_bounds);  // increasing, finite
    void observe(double value);
    const std::vector<double> &bounds() const { return bounds_; }
    // Observations at or below bounds()[i]; the last entry is all of them (+Inf).
    std::vector<std::uint64_t> cumulative() const;
    double sum() const { return sum_; }
    std::uint64_t count() const { return count_; }

  private:
    std::vector<double> bounds_;
    std::vector<std::uint64_t> counts_;  // per bucket, and one past the last bound
    double sum_ = 0;
    std::uint64_t count_ = 0;
};

struct Family {
    std::string name;  // counters without _total
    Type type = Type::kGauge;
    std::string unit;  // "" or the name's last word: seconds, bytes, ratio, ...
    std::string help;
    std::vector<std::pair<Labels, double>> samples;        // gauges and counters
    std::deque<std::pair<Labels, Histogram>> histograms;  // histograms (stay where made)
};

class Registry {
  public:
    // A new family; the reference stays valid as long as the registry.
    Family &add(std::string name, Type type, std::string unit, std::string help);
    void set(Family &f, Labels labels, double value);      // a gauge's or counter's sample
    // A histogram's series; the reference stays valid as long as the registry.
    Histogram &histogram(Family &f, Labels labels, std::vector<double> upper_bounds);
    const std::deque<Family> &families() const { return families_; }

  private:
    void check_labels(const Family &f, const Labels &labels) const;
    std::deque<Family> families_;  // a deque: add() moves no family
};

std::string write_exposition(const std::deque<Family> &families, Format format);
// The Content-Type header of each format.
std::string_view content_type(Format format);
// The format an HTTP Accept header asks for: OpenMetrics when it names
// application/openmetrics-text, else the classic text.
Format format_for_accept(std::string_view accept);

}  // namespace slurm_ai::metrics
