// NodeTopology itself: names, the GPU-NIC pairing, JSON, the loader that picks the format,
// and the path derivation both format loaders share (node_topology_build.hpp).
#include "slurm_ai/topology/node_topology.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <functional>
#include <string>
#include <string_view>
#include <system_error>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "node_topology_build.hpp"
#include "slurm_ai/common/enum_names.hpp"
#include "slurm_ai/common/file_io.hpp"
#include "xml_document.hpp"

namespace slurm_ai {

std::string_view to_string(PathType p) {
    static constexpr std::string_view kNames[] = {"SELF", "NVL", "NVS", "PIX", "PXB", "PHB", "SYS"};
    return enum_name(p, kNames);
}

std::vector<int> NodeTopology::gpu_nic_pairing() const {
    std::vector<int> pairing(gpus.size(), -1);
    if (nics.empty())
        return pairing;
    // A topology assembled by hand may lack the matrix; every NIC is then equally far.
    const bool have_paths = gpu_nic_path.size() == gpus.size() * nics.size();
    const bool any_fabric =
        std::any_of(nics.begin(), nics.end(), [](const Nic &n) { return n.fabric(); });
    std::vector<int> users(nics.size(), 0);
    for (std::size_t g = 0; g < gpus.size(); ++g) {
        int best = -1;
        for (std::size_t n = 0; n < nics.size(); ++n) {
            if (any_fabric && !nics[n].fabric())
                continue;
            auto key = [&](std::size_t i) {
                PathType p =
                    have_paths ? gpu_nic_path[g * nics.size() + i] : PathType::kInterSocket;
                return std::make_tuple(p, users[i], i);
            };
            if (best < 0 || key(n) < key(static_cast<std::size_t>(best)))
                best = static_cast<int>(n);
        }
        pairing[g] = best;
        ++users[static_cast<std::size_t>(best)];
    }
    return pairing;
}

Parsed<NodeTopology> load_node_topology(const std::string &path) {
    auto text = read_text_file(path);
    if (!text)
        return text.error();
    auto doc = xml::read_document(text.value(), path);
    if (!doc)
        return doc.error();
    const xmlNode *root = xmlDocGetRootElement(doc.value().get());
    if (xml::name(root) == "topology")
        return parse_hwloc_xml(text.value(), path);
    if (xml::name(root) == "system")
        return parse_nccl_topo(text.value(), path);
    return InputError{"root element", std::string(xml::name(root)),
                      "<topology> (hwloc XML) or <system> (NCCL topology)", path, xml::line(root)};
}

Parsed<std::string> parse_pci_busid(std::string_view text, std::string_view field) {
    // Each part: its hex digits (no sign, no 0x), within the width PCI gives it.
    auto hex = [](std::string_view part, std::size_t min, std::size_t max, unsigned long &out) {
        if (part.size() < min || part.size() > max ||
            !std::all_of(part.begin(), part.end(),
                         [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); }))
            return false;
        return std::from_chars(part.data(), part.data() + part.size(), out, 16).ec == std::errc();
    };
    const auto c1 = text.find(':');
    const auto c2 = c1 == text.npos ? text.npos : text.find(':', c1 + 1);
    const auto dot = c2 == text.npos ? text.npos : text.find('.', c2 + 1);
    unsigned long domain = 0, bus = 0, dev = 0, fn = 0;
    if (dot == text.npos || !hex(text.substr(0, c1), 1, 8, domain) ||
        !hex(text.substr(c1 + 1, c2 - c1 - 1), 2, 2, bus) ||
        !hex(text.substr(c2 + 1, dot - c2 - 1), 2, 2, dev) ||
        !hex(text.substr(dot + 1), 1, 1, fn) || dev > 0x1f || fn > 7)
        return InputError{std::string(field), std::string(text),
                          "a PCI bus id domain:bus:device.function in hex, e.g. 0000:34:00.0", "",
                          0};
    char buf[32];
    std::snprintf(buf, sizeof buf, "%04lx:%02lx:%02lx.%lx", domain, bus, dev, fn);
    return std::string(buf);
}

std::string to_cpu_list(std::vector<int> cpus) {
    std::sort(cpus.begin(), cpus.end());
    cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
    std::string out;
    for (std::size_t i = 0; i < cpus.size();) {
        std::size_t j = i;
        while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1)
            ++j;
        if (!out.empty())
            out += ',';
        out += std::to_string(cpus[i]);
        if (j > i)
            out += '-' + std::to_string(cpus[j]);
        i = j + 1;
    }
    return out;
}

namespace {

// Link speeds from hwloc carry six decimals of float noise (15.753846); three keep JSON
// output stable and readable.
double rounded(double gbs) {
    return std::round(gbs * 1000.0) / 1000.0;
}

template <class T, class F>
nlohmann::json matrix(const std::vector<T> &flat, std::size_t rows, std::size_t cols, F cell) {
    auto out = nlohmann::json::array();
    if (flat.size() != rows * cols)
        return out;
    for (std::size_t r = 0; r < rows; ++r) {
        auto row = nlohmann::json::array();
        for (std::size_t c = 0; c < cols; ++c)
            row.push_back(cell(flat[r * cols + c]));
        out.push_back(std::move(row));
    }
    return out;
}

}  // namespace

void to_json(nlohmann::json &j, const NodeTopology &t) {
    j = nlohmann::json::object();
    j["hostname"] = t.hostname;
    j["source"] = t.source;
    j["format"] = t.format;
    j["packages"] = t.packages;
    j["cores"] = t.cores;
    j["pus"] = t.pus;
    j["nvswitches"] = t.nvswitches;

    auto numa = nlohmann::json::array();
    for (const auto &n : t.numa_nodes)
        numa.push_back({{"os_index", n.os_index},
                        {"cpus", to_cpu_list(n.cpus)},
                        {"memory_bytes", n.memory_bytes}});
    j["numa_nodes"] = std::move(numa);

    auto gpus = nlohmann::json::array();
    for (const auto &g : t.gpus)
        gpus.push_back({{"busid", g.pci_busid},
                        {"model", g.model},
                        {"os_devices", g.os_devices},
                        {"numa", g.numa_node},
                        {"cpus", to_cpu_list(g.cpus)},
                        {"nvlink_gbs", rounded(g.nvlink_gbs)}});
    j["gpus"] = std::move(gpus);

    auto nics = nlohmann::json::array();
    for (const auto &n : t.nics)
        nics.push_back({{"name", n.name},
                        {"busid", n.pci_busid},
                        {"kind", n.kind},
                        {"numa", n.numa_node},
                        {"pcie_gbs", rounded(n.pcie_gbs)}});
    j["nics"] = std::move(nics);

    const std::size_t G = t.gpus.size(), N = t.nics.size();
    auto path_name = [](PathType p) { return std::string(to_string(p)); };
    j["gpu_bandwidth"] = matrix(t.gpu_bandwidth, G, G, rounded);
    j["gpu_path"] = matrix(t.gpu_path, G, G, path_name);
    j["gpu_nic_bandwidth"] = matrix(t.gpu_nic_bandwidth, G, N, rounded);
    j["gpu_nic_path"] = matrix(t.gpu_nic_path, G, N, path_name);
    j["gpu_nic_pairing"] = t.gpu_nic_pairing();
}

namespace detail {

PcieRoute pcie_route(const std::vector<IoNode> &tree, int a, int b, int switch_levels) {
    if (a == b)
        return {PathType::kSelf, 0};
    const int n = static_cast<int>(tree.size());
    auto valid = [&](int v) { return v >= 0 && v < n; };
    if (!valid(a) || !valid(b))
        return {PathType::kInterSocket, kInterSocketGBs};

    // Parents precede children, so walking up always ends, and the deeper of the two
    // (higher index) can step first until both meet.
    double slowest = 0;
    auto take_link = [&](int v) {
        double gbs = tree[static_cast<std::size_t>(v)].link_gbs;
        if (gbs > 0 && (slowest == 0 || gbs < slowest))
            slowest = gbs;
    };
    int bridges_a = 0, bridges_b = 0;  // bridges strictly between each device and the meeting point
    int x = a, y = b;
    auto step = [&](int &v, int &bridges) {
        take_link(v);
        int p = tree[static_cast<std::size_t>(v)].parent;
        if (!valid(p) || p >= v)
            return false;
        v = p;
        if (tree[static_cast<std::size_t>(v)].kind == IoNode::Kind::kBridge)
            ++bridges;
        return true;
    };
    while (x != y) {
        bool moved = x > y ? step(x, bridges_a) : step(y, bridges_b);
        if (!moved)  // two separate trees: nothing in common but the machine
            return {PathType::kInterSocket,
                    std::min(slowest > 0 ? slowest : kDefaultPcieGBs, kInterSocketGBs)};
    }
    const IoNode &meet = tree[static_cast<std::size_t>(x)];
    // The meeting point was counted as a bridge on the side that reached it last.
    if (meet.kind == IoNode::Kind::kBridge) {
        if (x != a && x != b) {
            if (bridges_a > 0)
                --bridges_a;
            if (bridges_b > 0)
                --bridges_b;
        }
    }
    PcieRoute r;
    switch (meet.kind) {
        case IoNode::Kind::kBridge:
        case IoNode::Kind::kDevice:
            r.type = std::max(bridges_a, bridges_b) <= switch_levels ? PathType::kPCIeSwitch
                                                                     : PathType::kPCIeBridges;
            break;
        case IoNode::Kind::kHostBridge:
            r.type = PathType::kHostBridge;
            break;
        case IoNode::Kind::kHost:
            r.type = meet.numa_nodes > 1 ? PathType::kInterSocket : PathType::kHostBridge;
            break;
    }
    r.gbs = slowest > 0 ? slowest : kDefaultPcieGBs;
    if (r.type == PathType::kInterSocket)
        r.gbs = std::min(r.gbs, kInterSocketGBs);
    return r;
}

void fill_link_matrices(NodeTopology &t, const NvlinkFigures &nvlink,
                        const std::function<PcieRoute(int, int)> &gpu_gpu,
                        const std::function<PcieRoute(int, int)> &gpu_nic) {
    const std::size_t G = t.gpus.size(), N = t.nics.size();
    const bool have_direct = nvlink.direct.size() == G * G;
    const bool have_fabric = nvlink.fabric.size() == G;
    t.gpu_bandwidth.assign(G * G, 0.0);
    t.gpu_path.assign(G * G, PathType::kSelf);
    for (std::size_t a = 0; a < G; ++a)
        for (std::size_t b = 0; b < G; ++b) {
            if (a == b)
                continue;
            // A link listed from one end only (NCCL files may) still carries both ways.
            double direct =
                have_direct ? std::max(nvlink.direct[a * G + b], nvlink.direct[b * G + a]) : 0.0;
            double fabric = have_fabric && nvlink.fabric[a] > 0 && nvlink.fabric[b] > 0
                                ? std::min(nvlink.fabric[a], nvlink.fabric[b])
                                : 0.0;
            std::size_t k = a * G + b;
            if (direct > 0) {
                t.gpu_path[k] = PathType::kNVLink;
                t.gpu_bandwidth[k] = direct + fabric;
            } else if (fabric > 0) {
                t.gpu_path[k] = PathType::kNVSwitch;
                t.gpu_bandwidth[k] = fabric;
            } else {
                PcieRoute r = gpu_gpu(static_cast<int>(a), static_cast<int>(b));
                t.gpu_path[k] = r.type;
                t.gpu_bandwidth[k] = r.gbs;
            }
        }
    t.gpu_nic_path.assign(G * N, PathType::kInterSocket);
    t.gpu_nic_bandwidth.assign(G * N, 0.0);
    for (std::size_t g = 0; g < G; ++g)
        for (std::size_t n = 0; n < N; ++n) {
            PcieRoute r = gpu_nic(static_cast<int>(g), static_cast<int>(n));
            t.gpu_nic_path[g * N + n] = r.type;
            t.gpu_nic_bandwidth[g * N + n] = r.gbs;
        }
}

bool busid_less(std::string_view a, std::string_view b) {
    if (a.empty() || b.empty())
        return !a.empty() && b.empty();
    // Normalized ids differ in length only by the domain's digits.
    if (a.size() != b.size())
        return a.size() < b.size();
    return a < b;
}

}  // namespace detail

}  // namespace slurm_ai
