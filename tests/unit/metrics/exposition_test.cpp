// The metrics text in both formats a scraper asks for, the rules a family is made by, and
// the format chosen from an HTTP Accept header.
#include <stdexcept>
#include <string>

#include <catch2/catch.hpp>

#include "slurm_ai/metrics/exposition.hpp"

using namespace slurm_ai::metrics;

namespace {

Registry example() {
    Registry r;
    auto &placed =
        r.add("slurm_ai_jobs_placed", Type::kCounter, "", "Jobs started, by who placed them");
    r.set(placed, {{"by", "engine"}}, 3);
    r.set(placed, {{"by", "cons_tres"}}, 1);
    auto &free = r.add("slurm_ai_free_gpus", Type::kGauge, "", "Free GPUs \"now\"\nper leaf");
    r.set(free, {{"leaf", "le\\af\"1"}}, 4);
    auto &t = r.add("slurm_ai_decision_seconds", Type::kHistogram, "seconds", "Decision time");
    auto &h = r.histogram(t, {}, {0.25, 1});
    for (double v : {0.125, 0.25, 0.5, 4.0})
        h.observe(v);
    return r;
}

}  // namespace

TEST_CASE("metrics: OpenMetrics text: counters as _total, units, cumulative buckets, EOF",
          "[metrics]") {
    const std::string text = write_exposition(example().families(), Format::kOpenMetrics);
    CHECK(text ==
          "# TYPE slurm_ai_jobs_placed counter\n"
          "# HELP slurm_ai_jobs_placed Jobs started, by who placed them\n"
          "slurm_ai_jobs_placed_total{by=\"engine\"} 3\n"
          "slurm_ai_jobs_placed_total{by=\"cons_tres\"} 1\n"
          "# TYPE slurm_ai_free_gpus gauge\n"
          "# HELP slurm_ai_free_gpus Free GPUs \\\"now\\\"\\nper leaf\n"
          "slurm_ai_free_gpus{leaf=\"le\\\\af\\\"1\"} 4\n"
          "# TYPE slurm_ai_decision_seconds histogram\n"
          "# UNIT slurm_ai_decision_seconds seconds\n"
          "# HELP slurm_ai_decision_seconds Decision time\n"
          "slurm_ai_decision_seconds_bucket{le=\"0.25\"} 2\n"
          "slurm_ai_decision_seconds_bucket{le=\"1\"} 3\n"
          "slurm_ai_decision_seconds_bucket{le=\"+Inf\"} 4\n"
          "slurm_ai_decision_seconds_sum 4.875\n"
          "slurm_ai_decision_seconds_count 4\n"
          "# EOF\n");
}

TEST_CASE("metrics: the classic text format names a counter's family with _total",
          "[metrics]") {
    const std::string text = write_exposition(example().families(), Format::kPrometheusText);
    CHECK_THAT(text, Catch::StartsWith("# HELP slurm_ai_jobs_placed_total Jobs started, by who "
                                       "placed them\n# TYPE slurm_ai_jobs_placed_total counter\n"));
    CHECK_THAT(text, Catch::Contains("# HELP slurm_ai_free_gpus Free GPUs \"now\"\\nper leaf\n"));
    CHECK_THAT(text, !Catch::Contains("# UNIT") && !Catch::Contains("# EOF"));
}

TEST_CASE("metrics: a family that breaks the format's rules is a bug, refused at once",
          "[metrics]") {
    Registry r;
    CHECK_THROWS_AS(r.add("9lives", Type::kGauge, "", "h"), std::logic_error);
    CHECK_THROWS_AS(r.add("x_total", Type::kCounter, "", "h"), std::logic_error);
    CHECK_THROWS_AS(r.add("x_time", Type::kGauge, "seconds", "h"), std::logic_error);
    CHECK_THROWS_AS(r.add("x", Type::kGauge, "", ""), std::logic_error);
    auto &g = r.add("x", Type::kGauge, "", "h");
    CHECK_THROWS_AS(r.add("x", Type::kGauge, "", "h"), std::logic_error);
    r.set(g, {{"leaf", "a"}}, 1);
    CHECK_THROWS_AS(r.set(g, {{"rail", "a"}}, 1), std::logic_error);
    CHECK_THROWS_AS(r.set(g, {{"__name", "a"}}, 1), std::logic_error);
    CHECK_THROWS_AS(r.histogram(g, {}, {1}), std::logic_error);
    auto &h = r.add("y_seconds", Type::kHistogram, "seconds", "h");
    CHECK_THROWS_AS(r.histogram(h, {}, {1, 1}), std::logic_error);
    CHECK_THROWS_AS(r.histogram(h, {{"le", "1"}}, {1}), std::logic_error);
}

TEST_CASE("metrics: the format follows the scraper's Accept header", "[metrics]") {
    CHECK(format_for_accept("application/openmetrics-text;version=1.0.0,text/plain;q=0.5") ==
          Format::kOpenMetrics);
    CHECK(format_for_accept("*/*") == Format::kPrometheusText);
    CHECK(format_for_accept("") == Format::kPrometheusText);
    CHECK_THAT(std::string(content_type(Format::kOpenMetrics)),
               Catch::StartsWith("application/openmetrics-text; version=1.0.0"));
}
