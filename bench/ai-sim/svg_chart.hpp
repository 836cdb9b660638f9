// Small SVG charts for the evaluation report, written without a plotting library: line
// charts (linear or logarithmic x) and grouped bar charts. The output depends only on the
// data, so the figures are reproducible byte for byte.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace slurm_ai::sim {

struct Series {
    std::string name;
    std::vector<std::pair<double, double>> points;  // (x, y), x ascending
};

struct LineChart {
    std::string title, x_label, y_label;
    bool log_x = false;
    bool step = false;  // draw as a step function (for CDFs)
    std::vector<Series> series;
};
std::string render(const LineChart &chart);

struct BarChart {
    std::string title, y_label;
    std::vector<std::string> series;  // one bar per series in every group
    struct Group {
        std::string label;
        std::vector<double> values;  // one per series
    };
    std::vector<Group> groups;
};
std::string render(const BarChart &chart);

}  // namespace slurm_ai::sim
