#include "graphviz.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "slurm_ai/common/command.hpp"
#include "slurm_ai/common/file_io.hpp"
#include "slurm_ai/common/hostlist.hpp"
#include "slurm_ai/common/text_scan.hpp"
#include "summary.hpp"

namespace slurm_ai::cli {

std::string node_to_dot(const NodeTopology &t) {
    std::string out =
        "graph host {\n  graph [fontname=Helvetica, rankdir=TB, label=" +
        text::quoted((t.hostname.empty() ? std::filesystem::path(t.source).filename().string()
                                         : t.hostname) +
                     fmt::format(": {} GPUs, {} NICs, {} NUMA nodes", t.gpus.size(), t.nics.size(),
                                 t.numa_nodes.size())) +
        ", labelloc=t];\n  node [fontname=Helvetica, shape=box, style=filled];\n"
        "  edge [fontname=Helvetica, fontsize=10];\n";
    // Devices grouped by NUMA node; devices of unknown NUMA go outside any cluster.
    std::map<int, std::string> numa_body;
    for (const auto &n : t.numa_nodes)
        numa_body[n.os_index];
    for (std::size_t i = 0; i < t.gpus.size(); ++i) {
        const auto &g = t.gpus[i];
        numa_body[g.numa_node] +=
            fmt::format("    gpu{} [label={}, fillcolor=\"#b7e1a1\"];\n", i,
                        text::quoted(fmt::format("GPU {}\n{}\n{}", i,
                                                 g.model.empty() ? "GPU" : g.model, g.pci_busid)));
    }
    for (std::size_t i = 0; i < t.nics.size(); ++i) {
        const auto &n = t.nics[i];
        numa_body[n.numa_node] +=
            fmt::format("    nic{} [label={}, fillcolor=\"#f9c98b\"];\n", i,
                        text::quoted(fmt::format("{} ({})\n{}", n.name, n.kind, n.pci_busid)));
    }
    for (auto &[numa, body] : numa_body) {
        if (numa < 0) {
            out += body;
            continue;
        }
        std::string cpus = "-";
        for (const auto &n : t.numa_nodes)
            if (n.os_index == numa)
                cpus = to_cpu_list(n.cpus);
        out += fmt::format(
            "  subgraph cluster_numa{} {{\n    label={}; style=rounded; "
            "color=\"#4a6fa5\";\n    numa{} [label={}, shape=ellipse, "
            "fillcolor=\"#dbe6f4\"];\n{}  }}\n",
            numa, text::quoted(fmt::format("NUMA {}", numa)), numa, text::quoted("cpus " + cpus),
            body);
    }
    if (t.nvswitches > 0 && !t.gpus.empty()) {
        out += fmt::format("  nvswitch [label={}, fillcolor=\"#9fc5e8\", shape=box3d];\n",
                           text::quoted(fmt::format("{} NVSwitches", t.nvswitches)));
        for (std::size_t i = 0; i < t.gpus.size(); ++i)
            if (t.gpus[i].nvlink_gbs > 0)
                out += fmt::format(
                    "  gpu{} -- nvswitch [label=\"{:g} GB/s\", color=\"#2e7d32\", "
                    "penwidth=2];\n",
                    i, t.gpus[i].nvlink_gbs);
    }
    for (std::size_t i = 0; i < t.gpus.size(); ++i)
        for (std::size_t j = i + 1; j < t.gpus.size(); ++j) {
            int a = static_cast<int>(i), b = static_cast<int>(j);
            if (t.path(a, b) == PathType::kNVLink)
                out += fmt::format(
                    "  gpu{} -- gpu{} [label=\"NVL {:g}\", color=\"#2e7d32\", "
                    "penwidth=2];\n",
                    i, j, t.bandwidth(a, b));
        }
    auto pairing = t.gpu_nic_pairing();
    for (std::size_t i = 0; i < t.gpus.size(); ++i)
        if (pairing[i] >= 0)
            out += fmt::format(
                "  gpu{} -- nic{} [label={}, style=dashed];\n", i, pairing[i],
                text::quoted(std::string(to_string(t.nic_path(static_cast<int>(i), pairing[i])))));
    for (std::size_t i = 0; i < t.gpus.size(); ++i)
        if (t.gpus[i].numa_node >= 0)
            out += fmt::format("  numa{} -- gpu{} [color=gray];\n", t.gpus[i].numa_node, i);
    for (std::size_t i = 0; i < t.nics.size(); ++i)
        if (t.nics[i].numa_node >= 0)
            out += fmt::format("  numa{} -- nic{} [color=gray];\n", t.nics[i].numa_node, i);
    return out + "}\n";
}

std::string fabric_to_dot(const Fabric &f) {
    std::string out = "graph fabric {\n  graph [fontname=Helvetica, rankdir=BT, label=" +
                      text::quoted(fmt::format("{}: {} switches, {} hosts",
                                               std::filesystem::path(f.source).filename().string(),
                                               f.switches().size(), f.hosts().size())) +
                      ", labelloc=t, nodesep=0.3];\n  node [fontname=Helvetica, style=filled];\n"
                      "  edge [fontname=Helvetica, fontsize=9];\n";
    // A leaf of a rail-optimized fabric takes its rail's colour.
    static constexpr const char *kRailColours[] = {"#f4cccc", "#fce5cd", "#fff2cc", "#d9ead3",
                                                   "#d0e0e3", "#cfe2f3", "#d9d2e9", "#ead1dc"};
    std::map<int, std::vector<int>> by_level;
    for (int s : f.switches()) {
        by_level[f.nodes[s].level].push_back(s);
        auto st = f.switch_stats(s);
        std::string over = st.up_gbps > 0 ? fmt::format("\n{:.2f}:1", st.oversubscription) : "";
        const int rail = f.rail_of_leaf(s);
        std::string rail_note = rail >= 0 ? fmt::format("\nrail {}", rail) : "";
        out += fmt::format("  n{} [label={}, shape=box, fillcolor=\"{}\"];\n", s,
                           text::quoted(fmt::format("{}\nlevel {}{}{}", f.nodes[s].name,
                                                    f.nodes[s].level, over, rail_note)),
                           rail >= 0 ? kRailColours[rail % 8] : "#9fc5e8");
    }
    // The innermost NVLink domains each host is in (a domain with sub-domains is drawn
    // through them).
    std::set<std::string> outer;
    for (const auto &d : f.nvlink_domains)
        if (!d.parent.empty())
            outer.insert(d.parent);
    std::map<int, const NvlinkDomain *> domain_of;
    for (const auto &d : f.nvlink_domains)
        if (!outer.count(d.name))
            for (int h : d.hosts)
                domain_of[h] = &d;
    for (auto &[level, sws] : by_level) {
        out += "  { rank=same;";
        for (int s : sws)
            out += fmt::format(" n{};", s);
        out += " }\n";
    }
    // Links between switches, one edge per switch pair with the cable count.
    std::map<std::pair<int, int>, std::pair<int, std::string>> trunks;
    std::map<int, std::vector<std::string>> hosts_at;
    std::map<int, std::set<const NvlinkDomain *>> domains_at;
    std::map<int, std::string> host_rate;
    for (const auto &l : f.links) {
        bool sa = f.nodes[l.a].is_switch, sb = f.nodes[l.b].is_switch;
        // "4xNDR", else the Gb/s a file gave, else nothing (the reader assumed a rate).
        std::string rate = !l.rate.speed.empty() ? fmt::format("{}x{}", l.rate.width, l.rate.speed)
                           : l.rate.gbps > 0 && !l.rate.assumed
                               ? fmt::format("{:g} Gb/s", l.rate.gbps)
                               : "";
        if (sa && sb) {
            auto &t = trunks[std::minmax(l.a, l.b)];
            ++t.first;
            t.second = rate;
        } else if (sa != sb) {
            int sw = sa ? l.a : l.b, host = sa ? l.b : l.a;
            hosts_at[sw].push_back(f.nodes[host].name);
            if (auto d = domain_of.find(host); d != domain_of.end())
                domains_at[sw].insert(d->second);
            host_rate[sw] = rate;
        }
    }
    for (auto &[key, t] : trunks)
        out += fmt::format("  n{} -- n{} [label={}];\n", key.first, key.second,
                           text::quoted(t.first > 1 && !t.second.empty()
                                            ? fmt::format("{} x {}", t.first, t.second)
                                        : t.first > 1 ? fmt::format("{} links", t.first)
                                                      : t.second));
    for (auto &[sw, names] : hosts_at) {
        std::size_t count = names.size();
        // Hosts in NVLink domains: the domains, their sizes, and a red border if degraded.
        std::string nvlink;
        bool degraded = false;
        for (const NvlinkDomain *d : domains_at[sw]) {
            nvlink += fmt::format("\nNVLink {} ({} hosts{})", d->name, d->hosts.size(),
                                  d->degraded ? ", degraded" : "");
            degraded = degraded || d->degraded;
        }
        out += fmt::format(
            "  h{} [label={}, shape=folder, fillcolor=\"{}\"{}];\n", sw,
            text::quoted(fmt::format("{}\n({} hosts){}", compress_hostlist(names), count, nvlink)),
            nvlink.empty() ? "#b7e1a1" : "#76b900", degraded ? ", color=red, penwidth=2" : "");
        out += fmt::format(
            "  h{} -- n{} [label={}];\n", sw, sw,
            text::quoted(host_rate[sw].empty() ? fmt::format("{} links", count)
                                               : fmt::format("{} x {}", count, host_rate[sw])));
    }
    return out + "}\n";
}

namespace {

// dot's input, in a file of its own under the temporary directory, removed with this.
class DotSource {
  public:
    explicit DotSource(const std::string &dot) {
        std::string name = (std::filesystem::temp_directory_path() / "ai-topo-XXXXXX.dot").string();
        const int fd = mkstemps(name.data(), 4);
        if (fd < 0)
            return;
        path_ = name;
        const bool whole = write(fd, dot.data(), dot.size()) == static_cast<ssize_t>(dot.size());
        if (close(fd) != 0 || !whole) {
            std::filesystem::remove(path_);
            path_.clear();
        }
    }
    ~DotSource() {
        if (!path_.empty()) {
            std::error_code ec;
            std::filesystem::remove(path_, ec);
        }
    }
    DotSource(const DotSource &) = delete;
    DotSource &operator=(const DotSource &) = delete;
    const std::string &path() const { return path_; }  // empty: it could not be written

  private:
    std::string path_;
};

// Graphviz may take minutes on a large fabric; past this it is given up.
constexpr double kDotTimeoutS = 600;

}  // namespace

Parsed<std::string> render_dot(const std::string &dot, const std::string &output) {
    std::string ext = std::filesystem::path(output).extension().string();
    std::string format = ext.empty() ? "" : ext.substr(1);
    if (format != "svg" && format != "png" && format != "pdf" && format != "dot")
        return InputError{
            "--output", output, "a file name ending in .svg, .png, .pdf or .dot", {}, 0};
    std::string picture = dot;
    if (format != "dot") {
        // dot writes to its standard output, and the picture then goes where every output
        // file goes: replaced whole (file_io.hpp), so a reader never sees half of one.
        DotSource source(dot);
        if (source.path().empty())
            return InputError{"dot",
                              "its input",
                              "a writable temporary directory (TMPDIR) for dot's input",
                              {},
                              0};
        auto r = run_command({"dot", "-T" + format, source.path()}, kDotTimeoutS);
        if (r.spawn_error)
            return InputError{"dot",
                              std::strerror(r.spawn_error),
                              "Graphviz's dot program on PATH (apt-get install "
                              "graphviz), or an output ending in .dot",
                              {},
                              0};
        if (r.status != 0)
            return InputError{"dot",
                              r.status == -1 ? r.err : "exit status " + std::to_string(r.status),
                              "dot to render the picture",
                              {},
                              0};
        picture = std::move(r.out);
    }
    try {
        write_output_file(output, picture);
    } catch (const std::runtime_error &) {
        return InputError{"--output", output, "a writable file", {}, 0};
    }
    return format;
}

}  // namespace slurm_ai::cli
