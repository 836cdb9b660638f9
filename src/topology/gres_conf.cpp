#include "slurm_ai/topology/gres_conf.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "slurm_ai/common/hostlist.hpp"

namespace slurm_ai {
namespace {

bool is_type_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

// A File= pattern: an absolute path of characters a config value may hold, with exactly
// one %d.
bool valid_file_pattern(std::string_view p) {
    auto at = p.find("%d");
    if (!p.starts_with('/') || at == std::string_view::npos ||
        p.find('%', at + 2) != std::string_view::npos || p.find('%') != at)
        return false;
    for (char c : p)
        if (static_cast<unsigned char>(c) <= 0x20 || static_cast<unsigned char>(c) >= 0x7f ||
            c == '#' || c == '=' || c == '"' || c == '\'' || c == ',')
            return false;
    return true;
}

// What the node is called in slurm.conf: the hostlist given, else the short form of the
// topology's hostname ("drac-12.grenoble.grid5000.fr" -> "drac-12"), else nothing.
Parsed<std::string> node_name(const NodeTopology &t, const GresConfOptions &opt) {
    if (opt.nodes.empty()) {
        std::string host = t.hostname.substr(0, t.hostname.find('.'));
        return is_host_name(host) ? host : std::string();
    }
    auto names = expand_hostlist(opt.nodes, "--nodes");
    if (!names)
        return names.error();
    if (opt.nodes.find_first_of(" \t\r\n") != std::string::npos)
        return InputError{"--nodes", opt.nodes, "a hostlist without blanks, e.g. dgx[01-04]", "",
                          0};
    return compress_hostlist(std::move(names).value());
}

std::string file_of(const std::string &pattern, std::size_t gpu) {
    auto at = pattern.find("%d");
    return pattern.substr(0, at) + std::to_string(gpu) + pattern.substr(at + 2);
}

int links_between(const NodeTopology &t, int a, int b, double link_gbs) {
    if (a == b)
        return -1;
    auto p = t.path(a, b);
    if (p != PathType::kNVLink && p != PathType::kNVSwitch)
        return 0;
    return std::max(1, static_cast<int>(std::lround(t.bandwidth(a, b) / link_gbs)));
}

bool valid_type(const std::string &type) {
    return type.size() <= 64 && std::all_of(type.begin(), type.end(), [](char c) {
               return is_type_char(c) || (c >= 'A' && c <= 'Z');
           });
}

std::optional<InputError> check_options(const GresConfOptions &opt) {
    if (!valid_type(opt.type))
        return InputError{"--type", opt.type, "1 to 64 letters, digits, '.', '_' or '-'", "", 0};
    if (!valid_file_pattern(opt.file_pattern))
        return InputError{"--file", opt.file_pattern,
                          "an absolute device path with one %d for the GPU index, e.g. "
                          "/dev/nvidia%d",
                          "", 0};
    if (!(opt.nvlink_gbs > 0) || !std::isfinite(opt.nvlink_gbs))
        return InputError{"--nvlink-gbs", fmt::format("{}", opt.nvlink_gbs),
                          "a positive bandwidth of one NVLink in GB/s (25 for NVLink 2-4)", "", 0};
    return std::nullopt;
}

// The Gres= of the node's slurm.conf line: "gpu:a100:8", or one entry per type.
std::string gres_of(const std::vector<std::string> &types) {
    std::map<std::string, int> per_type;  // ordered, so that the text is stable
    for (const auto &t : types)
        ++per_type[t];
    std::string gres;
    for (const auto &[type, n] : per_type)
        gres +=
            fmt::format("{}gpu{}{}:{}", gres.empty() ? "" : ",", type.empty() ? "" : ":", type, n);
    return gres;
}

std::string gpu_line(const NodeTopology &t, std::size_t g, const std::string &nodes,
                     const std::string &type, const GresConfOptions &opt) {
    std::string line = nodes.empty() ? "" : "NodeName=" + nodes + " ";
    line += "Name=gpu";
    if (!type.empty())
        line += " Type=" + type;
    line += " File=" + file_of(opt.file_pattern, g);
    if (!t.gpus[g].cores.empty())
        line += " Cores=" + to_cpu_list(t.gpus[g].cores);
    line += " Links=";
    for (std::size_t o = 0; o < t.gpus.size(); ++o)
        line +=
            fmt::format("{}{}", o ? "," : "",
                        links_between(t, static_cast<int>(g), static_cast<int>(o), opt.nvlink_gbs));
    return line + '\n';
}

}  // namespace

std::string gres_type_name(std::string_view model) {
    std::string out;
    out.reserve(model.size());
    for (char c : model) {
        char l = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
        out += is_type_char(l) ? l : '_';
    }
    return out;
}

Parsed<std::string> write_gres_conf(const NodeTopology &t, const GresConfOptions &opt) {
    if (t.gpus.empty())
        return InputError{"GPUs", "0", "a node with at least one GPU", t.source, 0};
    if (auto bad = check_options(opt))
        return *bad;
    auto nodes = node_name(t, opt);
    if (!nodes)
        return nodes.error();

    std::vector<std::string> types;
    for (const auto &gpu : t.gpus)
        types.push_back(!opt.type.empty() ? opt.type : gres_type_name(gpu.model));
    std::string out = fmt::format(
        "# gres.conf for the {} GPUs of {} ({}).\n"
        "# Links: NVLinks to each GPU of the node (NVLink GB/s / {:g}), -1 itself, 0 PCIe only.\n"
        "# Cores: the cores near each GPU, as Slurm numbers them{}.\n"
        "# slurm.conf: NodeName={} ... Gres={}\n",
        t.gpus.size(), t.source.empty() ? "this node" : t.source, t.format, opt.nvlink_gbs,
        t.cores > 0 ? "" : " (not in this input: left out)", nodes->empty() ? "<nodes>" : *nodes,
        gres_of(types));
    for (std::size_t g = 0; g < t.gpus.size(); ++g)
        out += gpu_line(t, g, *nodes, types[g], opt);
    return out;
}

}  // namespace slurm_ai
