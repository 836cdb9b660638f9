#include "slurm_ai/metrics/cluster_map.hpp"

#include <algorithm>
#include <map>
#include <sstream>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include "slurm_ai/common/text_scan.hpp"
#include "slurm_ai/placement/placement.hpp"

namespace slurm_ai::metrics {
namespace {

using text::xml_escape;

// Geometry of the picture, in pixels.
constexpr int kGpu = 12, kGpuStep = 14, kGpusPerRow = 8;
constexpr int kColumn = 140, kHostWidth = 128, kMargin = 20;
constexpr int kSwitchHeight = 24, kLevelGap = 50;
constexpr const char *kNoLeaf = "(no leaf switch)";

std::string colour_of_job(std::uint32_t job) {
    return fmt::format("hsl({},70%,{}%)", (job * 137) % 360, 42 + (job % 3) * 8);
}
std::string colour_of_domain(const std::string &domain) {
    return fmt::format("hsl({},45%,55%)", std::hash<std::string>{}(domain) % 360);
}

int host_height(const MapHost &h) {
    const int rows = std::max<int>(1, (static_cast<int>(h.gpu_jobs.size()) + kGpusPerRow - 1) /
                                          kGpusPerRow);
    return 18 + rows * kGpuStep + 4;
}

struct Layout {
    std::vector<std::string> leaves;                  // columns, in switch order
    std::map<std::string, std::vector<int>> columns;  // leaf -> host indexes
    std::map<std::string, std::pair<int, int>> switch_at;  // name -> centre x, top y
    int leaf_y = 0, width = 0, height = 0;
};

Layout lay_out(const ClusterMap &m) {
    Layout l;
    std::map<int, std::vector<const MapSwitch *>, std::greater<>> levels;
    for (const auto &s : m.switches)
        levels[s.level].push_back(&s);
    for (const auto *s : levels[0])
        l.leaves.push_back(s->name);
    for (std::size_t i = 0; i < m.hosts.size(); ++i) {
        const std::string leaf = m.hosts[i].leaf.empty() ? kNoLeaf : m.hosts[i].leaf;
        if (!l.columns.count(leaf) && std::find(l.leaves.begin(), l.leaves.end(), leaf) ==
                                          l.leaves.end())
            l.leaves.push_back(leaf);
        l.columns[leaf].push_back(static_cast<int>(i));
    }
    l.width = 2 * kMargin + std::max<int>(1, static_cast<int>(l.leaves.size())) * kColumn;
    int y = kMargin + 30;
    for (const auto &[level, row] : levels) {
        if (level == 0)
            break;
        const double step = static_cast<double>(l.width - 2 * kMargin) /
                            static_cast<double>(row.size());
        for (std::size_t i = 0; i < row.size(); ++i)
            l.switch_at[row[i]->name] = {
                kMargin + static_cast<int>(step * (static_cast<double>(i) + 0.5)), y};
        y += kSwitchHeight + kLevelGap;
    }
    l.leaf_y = y;
    for (std::size_t c = 0; c < l.leaves.size(); ++c)
        l.switch_at[l.leaves[c]] = {kMargin + static_cast<int>(c) * kColumn + kHostWidth / 2, y};
    int tallest = 0;
    for (const auto &[leaf, hosts] : l.columns) {
        int h = 0;
        for (int i : hosts)
            h += host_height(m.hosts[static_cast<std::size_t>(i)]) + 6;
        tallest = std::max(tallest, h);
    }
    l.height = y + kSwitchHeight + 16 + tallest + kMargin;
    return l;
}

void draw_switches(std::ostringstream &svg, const ClusterMap &m, const Layout &l) {
    for (const auto &s : m.switches)
        for (const auto &up : s.up) {
            auto a = l.switch_at.find(s.name), b = l.switch_at.find(up);
            if (a != l.switch_at.end() && b != l.switch_at.end())
                svg << fmt::format(
                    "<line class=\"link\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>\n",
                    a->second.first, a->second.second, b->second.first,
                    b->second.second + kSwitchHeight);
        }
    for (const auto &[name, at] : l.switch_at) {
        const bool leaf = at.second == l.leaf_y;
        svg << fmt::format(
            "<g class=\"switch{}\" data-switch=\"{}\"><title>{}</title>"
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"4\"/>"
            "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text></g>\n",
            leaf ? " leaf" : "", xml_escape(name), xml_escape(name), at.first - kHostWidth / 2,
            at.second, kHostWidth, kSwitchHeight, at.first, at.second + 16,
            xml_escape(name.size() > 18 ? name.substr(0, 17) + "…" : name));
    }
}

// Each job's tooltip, escaped once for all its GPUs.
using Titles = std::map<std::uint32_t, std::string>;
Titles job_titles(const ClusterMap &m) {
    Titles out;
    for (const auto &j : m.jobs) {
        std::string t = fmt::format("job {}", j.job_id);
        if (!j.name.empty())
            t += " (" + j.name + (j.user.empty() ? "" : ", " + j.user) + ")";
        if (j.efficiency)
            t += fmt::format("\nplacement efficiency {:.2f}", *j.efficiency);
        if (!j.reason.empty())
            t += "\n" + j.reason;
        out[j.job_id] = xml_escape(t);
    }
    return out;
}

void draw_host(std::ostringstream &svg, const Titles &titles, const MapHost &h, int x, int y) {
    const std::string state = h.state.empty() ? "unknown" : h.state;
    svg << fmt::format("<g class=\"host state-{}\" data-host=\"{}\" data-domain=\"{}\">",
                       xml_escape(state), xml_escape(h.name), xml_escape(h.domain));
    svg << fmt::format("<title>{} ({}{})</title>", xml_escape(h.name), xml_escape(state),
                       h.domain.empty() ? "" : ", NVLink domain " + xml_escape(h.domain));
    svg << fmt::format("<rect class=\"box\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>", x,
                       y, kHostWidth, host_height(h));
    if (!h.domain.empty())
        svg << fmt::format(
            "<rect class=\"domain\" x=\"{}\" y=\"{}\" width=\"5\" height=\"{}\" fill=\"{}\"/>", x,
            y, host_height(h), colour_of_domain(h.domain));
    svg << fmt::format("<text x=\"{}\" y=\"{}\">{}</text>", x + 8, y + 13, xml_escape(h.name));
    for (std::size_t g = 0; g < h.gpu_jobs.size(); ++g) {
        const int gx = x + 8 + static_cast<int>(g % kGpusPerRow) * kGpuStep;
        const int gy = y + 18 + static_cast<int>(g / kGpusPerRow) * kGpuStep;
        const std::uint32_t job = h.gpu_jobs[g];
        if (job == 0) {
            svg << fmt::format("<rect class=\"gpu free\" data-host=\"{}\" data-gpu=\"{}\" "
                               "x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"><title>{} GPU {}: "
                               "free</title></rect>",
                               xml_escape(h.name), g, gx, gy, kGpu, kGpu, xml_escape(h.name), g);
            continue;
        }
        svg << fmt::format("<rect class=\"gpu held\" data-host=\"{}\" data-gpu=\"{}\" "
                           "data-job=\"{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" "
                           "fill=\"{}\"><title>{} GPU {}: {}</title></rect>",
                           xml_escape(h.name), g, job, gx, gy, kGpu, kGpu, colour_of_job(job),
                           xml_escape(h.name), g,
                           titles.count(job) ? titles.at(job) : fmt::format("job {}", job));
    }
    svg << "</g>\n";
}

std::string picture(const ClusterMap &m) {
    const Layout l = lay_out(m);
    std::ostringstream svg;
    svg << fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"fabric\" width=\"{}\" "
                       "height=\"{}\">\n",
                       l.width, l.height);
    draw_switches(svg, m, l);
    const Titles titles = job_titles(m);
    for (std::size_t c = 0; c < l.leaves.size(); ++c) {
        auto it = l.columns.find(l.leaves[c]);
        if (it == l.columns.end())
            continue;
        const int x = kMargin + static_cast<int>(c) * kColumn;
        const int top = l.leaf_y + kSwitchHeight + 16;
        int last = top;  // the top of the column's last host: the cable runs behind the boxes
        for (std::size_t k = 0; k + 1 < it->second.size(); ++k)
            last += host_height(m.hosts[static_cast<std::size_t>(it->second[k])]) + 6;
        svg << fmt::format("<line class=\"link\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>",
                           x + kHostWidth / 2, l.leaf_y + kSwitchHeight, x + kHostWidth / 2, last);
        int y = top;
        for (int i : it->second) {
            const auto &h = m.hosts[static_cast<std::size_t>(i)];
            draw_host(svg, titles, h, x, y);
            y += host_height(h) + 6;
        }
    }
    svg << "</svg>\n";
    return svg.str();
}

std::string job_lists(const ClusterMap &m) {
    std::ostringstream out;
    std::map<std::string, std::size_t> domains;  // name -> hosts
    for (const auto &h : m.hosts)
        if (!h.domain.empty())
            ++domains[h.domain];
    if (!domains.empty()) {
        out << fmt::format("<h2>NVLink domains ({})</h2>\n<ul id=\"domains\">\n",
                           domains.size());
        for (const auto &[name, hosts] : domains)
            out << fmt::format("<li class=\"domain\" data-domain=\"{}\"><span class=\"swatch\" "
                               "style=\"background:{}\"></span>{} ({} hosts)</li>\n",
                               xml_escape(name), colour_of_domain(name), xml_escape(name),
                               hosts);
        out << "</ul>\n";
    }
    std::size_t pending = 0, running = 0;
    for (const auto &j : m.jobs)
        (j.running ? running : pending) += 1;
    out << fmt::format("<h2>Pending ({})</h2>\n<ul id=\"pending\">\n", pending);
    for (const auto &j : m.jobs)
        if (!j.running)
            out << fmt::format("<li class=\"pending\" data-job=\"{}\"><b>job {}</b> {} {} "
                               "GPUs<br><span class=\"reason\">{}</span></li>\n",
                               j.job_id, j.job_id, xml_escape(j.name), j.gpus,
                               xml_escape(j.reason.empty() ? "no reason given" : j.reason));
    out << fmt::format("</ul>\n<h2>Running ({})</h2>\n<ul id=\"running\">\n", running);
    for (const auto &j : m.jobs)
        if (j.running)
            out << fmt::format(
                "<li class=\"running\" data-job=\"{}\"><span class=\"swatch\" "
                "style=\"background:{}\"></span><b>job {}</b> {} on {}{}</li>\n",
                j.job_id, colour_of_job(j.job_id), j.job_id, xml_escape(j.name),
                xml_escape(j.nodes),
                j.efficiency ? fmt::format(", efficiency {:.2f}", *j.efficiency) : "");
    out << "</ul>\n";
    return out.str();
}

constexpr const char *kStyle = R"(body{font:13px sans-serif;margin:0;display:flex}
#map{flex:1;overflow:auto;padding:8px}#side{width:320px;padding:8px;border-left:1px solid #ccc}
.link{stroke:#999;stroke-width:1}.switch rect{fill:#dde;stroke:#557}.switch.leaf rect{fill:#cdd}
.box{fill:#fafafa;stroke:#888}.state-down .box,.state-drained .box{fill:#f3d0d0}
.gpu.free{fill:#fff;stroke:#aaa}.gpu.held{stroke:#333}text{font-size:11px}
li{margin:4px 0}.reason{color:#555}.swatch{display:inline-block;width:10px;height:10px;
margin-right:4px})";

}  // namespace

ClusterMap fabric_map(const ClusterGraph &g, std::string title) {
    ClusterMap m;
    m.title = std::move(title);
    const Fabric &f = g.fabric();
    std::vector<int> sw = g.switch_nodes();
    std::stable_sort(sw.begin(), sw.end(), [&](int a, int b) {
        return f.nodes[static_cast<std::size_t>(a)].level >
               f.nodes[static_cast<std::size_t>(b)].level;
    });
    for (int s : sw) {
        MapSwitch ms{f.nodes[static_cast<std::size_t>(s)].name,
                     f.nodes[static_cast<std::size_t>(s)].level,
                     {}};
        for (int li : f.links_of[static_cast<std::size_t>(s)]) {
            const auto &link = f.links[static_cast<std::size_t>(li)];
            const auto &other = f.nodes[static_cast<std::size_t>(link.a == s ? link.b : link.a)];
            if (other.is_switch && other.level == ms.level + 1)
                ms.up.push_back(other.name);
        }
        m.switches.push_back(std::move(ms));
    }
    for (int h = 0; h < g.host_count(); ++h) {
        MapHost mh;
        mh.name = g.host_name(h);
        if (const int leaf = g.host_leaf(h); leaf >= 0)
            mh.leaf = f.nodes[static_cast<std::size_t>(leaf)].name;
        if (const int d = g.nvlink_domain(h); d >= 0)
            mh.domain = f.nvlink_domains[static_cast<std::size_t>(d)].name;
        mh.gpu_jobs.assign(g.node(h).gpus.size(), 0);
        m.hosts.push_back(std::move(mh));
    }
    return m;
}

void place_job(ClusterMap &m, MapJob job, const std::string &gpus,
               const std::vector<std::string> &hosts, std::uint32_t gpus_per_node) {
    std::map<std::string, MapHost *> by_name;
    for (auto &h : m.hosts)
        by_name[h.name] = &h;
    auto mark = [&](const std::string &host, std::size_t gpu) {
        auto it = by_name.find(host);
        if (it != by_name.end() && gpu < it->second->gpu_jobs.size())
            it->second->gpu_jobs[gpu] = job.job_id;
    };
    // The record's GPUs where it has them, else the first free ones on each host.
    const auto listed = gpus.empty() ? std::nullopt : parse_gpu_list(gpus);
    if (listed) {
        for (const auto &[host, indexes] : *listed)
            for (int g : indexes)
                mark(host, static_cast<std::size_t>(g));
    } else {
        for (const auto &host : hosts) {
            auto it = by_name.find(host);
            if (it == by_name.end())
                continue;
            auto &slots = it->second->gpu_jobs;
            std::uint32_t left = gpus_per_node;
            for (auto &slot : slots)
                if (left > 0 && slot == 0) {
                    slot = job.job_id;
                    --left;
                }
        }
    }
    m.jobs.push_back(std::move(job));
}

std::string map_html(const ClusterMap &m, int refresh_s) {
    std::ostringstream out;
    out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
    if (refresh_s > 0)
        out << fmt::format("<meta http-equiv=\"refresh\" content=\"{}\">\n", refresh_s);
    out << "<title>" << xml_escape(m.title) << "</title>\n<style>" << kStyle
        << "</style></head>\n<body>\n<div id=\"map\">\n";
    std::size_t gpus = 0, held = 0;
    for (const auto &h : m.hosts)
        for (auto j : h.gpu_jobs) {
            ++gpus;
            held += j != 0;
        }
    out << fmt::format("<h1>{}</h1>\n<p id=\"summary\">{} hosts, {} GPUs, {} held",
                       xml_escape(m.title), m.hosts.size(), gpus, held);
    if (m.at > 0)
        out << fmt::format(", at {:%Y-%m-%d %H:%M:%S} UTC",
                           fmt::gmtime(static_cast<std::time_t>(m.at)));
    out << "</p>\n" << picture(m) << "</div>\n<div id=\"side\">\n" << job_lists(m)
        << "</div>\n</body></html>\n";
    return out.str();
}

}  // namespace slurm_ai::metrics
