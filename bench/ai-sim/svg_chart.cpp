#include "svg_chart.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "slurm_ai/common/text_scan.hpp"

namespace slurm_ai::sim {
namespace {

constexpr double kWidth = 720, kHeight = 400;
constexpr double kLeft = 70, kRight = 170, kTop = 40, kBottom = 50;
constexpr const char *kColors[] = {"#d62728", "#ff7f0e", "#1f77b4", "#2ca02c",
                                   "#9467bd", "#8c564b", "#7f7f7f", "#17becf"};

using slurm_ai::text::xml_escape;

std::string number(double v) {
    if (v == 0)
        return "0";
    double a = std::abs(v);
    if (a >= 1000 || a < 0.01)
        return fmt::format("{:.3g}", v);
    return fmt::format("{:.4g}", v);
}

// About five round tick values covering [lo, hi].
std::vector<double> ticks(double lo, double hi) {
    double span = hi - lo;
    if (span <= 0)
        return {lo};
    double step = std::pow(10.0, std::floor(std::log10(span / 5)));
    for (double m : {1.0, 2.0, 5.0, 10.0})
        if (span / (step * m) <= 6) {
            step *= m;
            break;
        }
    std::vector<double> out;
    for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step)
        out.push_back(std::abs(v) < step * 1e-9 ? 0 : v);
    return out;
}

std::string header(const std::string &title) {
    return fmt::format(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 "
        "{0} {1}\" font-family=\"sans-serif\" font-size=\"12\">\n"
        "<rect width=\"{0}\" height=\"{1}\" fill=\"white\"/>\n"
        "<text x=\"{2}\" y=\"22\" font-size=\"14\" font-weight=\"bold\">{3}</text>\n",
        kWidth, kHeight, kLeft, xml_escape(title));
}

std::string legend(const std::vector<std::string> &names) {
    std::string out;
    for (std::size_t i = 0; i < names.size(); ++i) {
        double y = kTop + 10 + 20 * static_cast<double>(i);
        out += fmt::format(
            "<rect x=\"{}\" y=\"{}\" width=\"14\" height=\"10\" fill=\"{}\"/>"
            "<text x=\"{}\" y=\"{}\">{}</text>\n",
            kWidth - kRight + 15, y - 9, kColors[i % 8], kWidth - kRight + 34, y,
            xml_escape(names[i]));
    }
    return out;
}

std::string y_axis(double lo, double hi, const std::string &label) {
    std::string out;
    const double h = kHeight - kTop - kBottom;
    for (double v : ticks(lo, hi)) {
        double y = kTop + h - (v - lo) / (hi - lo) * h;
        out += fmt::format(
            "<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#ddd\"/>"
            "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>\n",
            kLeft, y, kWidth - kRight, kLeft - 6, y + 4, number(v));
    }
    out += fmt::format(
        "<text transform=\"translate(16 {}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n",
        kTop + h / 2, xml_escape(label));
    out += fmt::format(
        "<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"black\"/>"
        "<line x1=\"{0}\" y1=\"{2}\" x2=\"{3}\" y2=\"{2}\" stroke=\"black\"/>\n",
        kLeft, kTop, kHeight - kBottom, kWidth - kRight);
    return out;
}

}  // namespace

std::string render(const LineChart &c) {
    double x0 = 0, x1 = 0, y0 = 0, y1 = 0;
    bool first = true;
    auto fx = [&](double x) { return c.log_x ? std::log10(std::max(x, 1e-12)) : x; };
    for (const auto &s : c.series)
        for (auto [x, y] : s.points) {
            if (c.log_x && x <= 0)
                continue;
            double u = fx(x);
            if (first) {
                x0 = x1 = u;
                y1 = y;
                first = false;
            }
            x0 = std::min(x0, u);
            x1 = std::max(x1, u);
            y0 = std::min(y0, y);
            y1 = std::max(y1, y);
        }
    if (x1 <= x0)
        x1 = x0 + 1;
    if (y1 <= y0)
        y1 = y0 + 1;
    y1 *= 1.05;
    const double w = kWidth - kLeft - kRight, h = kHeight - kTop - kBottom;
    auto px = [&](double x) { return kLeft + (fx(x) - x0) / (x1 - x0) * w; };
    auto py = [&](double y) { return kTop + h - (y - y0) / (y1 - y0) * h; };

    std::string out = header(c.title) + y_axis(y0, y1, c.y_label);
    std::vector<double> xt;
    if (c.log_x)
        for (double e = std::ceil(x0); e <= std::floor(x1); e += 1)
            xt.push_back(std::pow(10.0, e));
    else
        xt = ticks(x0, x1);
    for (double v : xt)
        out += fmt::format(
            "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"black\"/>"
            "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>\n",
            px(v), kHeight - kBottom, kHeight - kBottom + 5, kHeight - kBottom + 18, number(v));
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", kLeft + w / 2,
                       kHeight - 10, xml_escape(c.x_label));
    std::vector<std::string> names;
    for (std::size_t i = 0; i < c.series.size(); ++i) {
        const auto &s = c.series[i];
        names.push_back(s.name);
        std::string path;
        double last_y = 0;
        bool started = false;
        for (auto [x, y] : s.points) {
            if (c.log_x && x <= 0)
                continue;
            if (started && c.step)
                path += fmt::format(" L{:.1f},{:.1f}", px(x), py(last_y));
            path += fmt::format("{}{:.1f},{:.1f}", started ? " L" : "M", px(x), py(y));
            last_y = y;
            started = true;
        }
        out += fmt::format(
            "<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\" "
            "stroke-dasharray=\"{}\"/>\n",
            path, kColors[i % 8], i % 2 ? "6 3" : "none");
    }
    return out + legend(names) + "</svg>\n";
}

std::string render(const BarChart &c) {
    double y1 = 0;
    for (const auto &g : c.groups)
        for (double v : g.values)
            y1 = std::max(y1, v);
    y1 = y1 > 0 ? y1 * 1.08 : 1;
    const double w = kWidth - kLeft - kRight, h = kHeight - kTop - kBottom;
    std::string out = header(c.title) + y_axis(0, y1, c.y_label);
    const double group_w = w / static_cast<double>(std::max<std::size_t>(c.groups.size(), 1));
    const double bar_w =
        group_w * 0.8 / static_cast<double>(std::max<std::size_t>(c.series.size(), 1));
    for (std::size_t g = 0; g < c.groups.size(); ++g) {
        const double gx = kLeft + group_w * static_cast<double>(g) + group_w * 0.1;
        for (std::size_t i = 0; i < c.groups[g].values.size(); ++i) {
            double v = c.groups[g].values[i];
            double bh = v / y1 * h;
            out += fmt::format(
                "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
                "fill=\"{}\"><title>{}: {}</title></rect>\n",
                gx + bar_w * static_cast<double>(i), kTop + h - bh, bar_w * 0.95, bh,
                kColors[i % 8], xml_escape(i < c.series.size() ? c.series[i] : ""), number(v));
        }
        out +=
            fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                        gx + group_w * 0.4, kHeight - kBottom + 18, xml_escape(c.groups[g].label));
    }
    return out + legend(c.series) + "</svg>\n";
}

}  // namespace slurm_ai::sim
