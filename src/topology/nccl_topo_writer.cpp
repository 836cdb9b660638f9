// NodeTopology -> NCCL topology XML, for NCCL_TOPO_FILE on nodes described by hwloc.
//
// NodeTopology keeps how devices are connected, not the PCIe tree itself, so the file is
// rebuilt from the connections: one <cpu> per NUMA node, and under it one synthetic PCIe
// switch (busid ffff:NN:SS.0, as cloud vendors' files use) for every group of devices
// that reach each other without crossing a host bridge. Both PIX and PXB pairs therefore
// come back as PIX when NCCL (or parse_nccl_topo) reads the file; NVLink and NVSwitch
// links, NUMA placement and GPU-NIC closeness survive the round trip.
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include "slurm_ai/common/text_scan.hpp"
#include "slurm_ai/topology/node_topology.hpp"

namespace slurm_ai {
namespace {

using text::xml_escape;

// Devices: GPUs 0..G-1, then NICs G..G+N-1.
struct Groups {
    std::vector<int> parent;
    int find(int x) { return parent[x] == x ? x : parent[x] = find(parent[x]); }
    void join(int a, int b) { parent[find(a)] = find(b); }
};

bool behind_switch(PathType p) {
    return p == PathType::kPCIeSwitch || p == PathType::kPCIeBridges;
}

// The Linux cpumap form: 32-bit hex words, most significant first.
std::string affinity_mask(const std::vector<int> &cpus) {
    int top = 0;
    for (int c : cpus)
        top = std::max(top, c);
    std::vector<unsigned> words(static_cast<std::size_t>(top / 32 + 1), 0);
    for (int c : cpus)
        if (c >= 0)
            words[static_cast<std::size_t>(c / 32)] |= 1u << (c % 32);
    std::string out;
    for (std::size_t w = words.size(); w-- > 0;) {
        char buf[16];
        std::snprintf(buf, sizeof buf, "%08x", words[w]);
        if (!out.empty())
            out += ',';
        out += buf;
    }
    return out;
}

// NCCL counts NVLinks and takes their speed from the GPU generation ("sm"): per link
// 20 GB/s for Pascal (sm 60), 25 for Volta to Hopper, 50 for Blackwell (sm 100). The
// generation whose link speed divides all of a GPU's NVLink bandwidths is written out;
// 25 GB/s needs no sm (the default when NCCL or parse_nccl_topo reads none).
double link_rate(const NodeTopology &t, int gpu) {
    auto divides = [&](double rate) {
        for (int b = 0; b < static_cast<int>(t.gpus.size()); ++b)
            if (b != gpu && t.path(gpu, b) == PathType::kNVLink) {
                double n = t.bandwidth(gpu, b) / rate;
                if (std::fabs(n - std::round(n)) > 1e-6)
                    return false;
            }
        return true;
    };
    for (double rate : {kDefaultNvlinkLinkGBs, 20.0, 50.0})
        if (divides(rate))
            return rate;
    return kDefaultNvlinkLinkGBs;
}

const char *sm_for(double rate) {
    return rate == 20.0 ? " sm=\"60\"" : rate == 50.0 ? " sm=\"100\"" : "";
}

int links_for(double gbs, double rate) {
    return std::max(1, static_cast<int>(std::lround(gbs / rate)));
}

}  // namespace

std::string write_nccl_topo(const NodeTopology &t) {
    const int G = static_cast<int>(t.gpus.size()), N = static_cast<int>(t.nics.size());
    Groups groups{std::vector<int>(static_cast<std::size_t>(G + N))};
    std::iota(groups.parent.begin(), groups.parent.end(), 0);
    for (int a = 0; a < G; ++a) {
        for (int b = a + 1; b < G; ++b)
            if (behind_switch(t.path(a, b)))
                groups.join(a, b);
        for (int n = 0; n < N; ++n)
            if (t.gpu_nic_path.size() == t.gpus.size() * t.nics.size() &&
                behind_switch(t.nic_path(a, n)))
                groups.join(a, G + n);
    }
    auto numa_of = [&](int dev) {
        int numa = dev < G ? t.gpus[static_cast<std::size_t>(dev)].numa_node
                           : t.nics[static_cast<std::size_t>(dev - G)].numa_node;
        return numa >= 0 ? numa : (t.numa_nodes.empty() ? 0 : t.numa_nodes.front().os_index);
    };
    // NUMA node -> switch group -> devices, in device order.
    std::map<int, std::map<int, std::vector<int>>> layout;
    for (auto &n : t.numa_nodes)
        layout[n.os_index];
    for (int d = 0; d < G + N; ++d)
        layout[numa_of(d)][groups.find(d)].push_back(d);

    std::string x = "<system version=\"1\">\n";
    int switch_no = 0;
    for (const auto &[numa, by_group] : layout) {
        std::vector<int> cpus;
        for (const auto &n : t.numa_nodes)
            if (n.os_index == numa)
                cpus = n.cpus;
        x += "  <cpu numaid=\"" + std::to_string(numa) + "\" affinity=\"" + affinity_mask(cpus) +
             "\">\n";
        for (const auto &[group, devices] : by_group) {
            std::string indent = "    ";
            const bool sw = devices.size() > 1;
            if (sw) {
                char busid[32];
                std::snprintf(busid, sizeof busid, "ffff:%02x:%02x.0", numa & 0xff,
                              switch_no++ & 0xff);
                x += indent + "<pci busid=\"" + busid +
                     "\" class=\"0x060400\" link_speed=\"16 GT/s\" link_width=\"16\">\n";
                indent += "  ";
            }
            for (int d : devices) {
                if (d < G) {
                    const Gpu &gpu = t.gpus[static_cast<std::size_t>(d)];
                    x += indent + "<pci busid=\"" + xml_escape(gpu.pci_busid) +
                         "\" class=\"0x030200\" link_speed=\"16 GT/s\" link_width=\"16\">\n";
                    const double rate = link_rate(t, d);
                    x += indent + "  <gpu dev=\"" + std::to_string(d) + "\"" + sm_for(rate) + ">\n";
                    double to_switch = gpu.nvlink_gbs;
                    for (int b = 0; b < G; ++b) {
                        if (b == d || t.path(d, b) != PathType::kNVLink)
                            continue;
                        x += indent + "    <nvlink target=\"" +
                             xml_escape(t.gpus[static_cast<std::size_t>(b)].pci_busid) +
                             "\" count=\"" + std::to_string(links_for(t.bandwidth(d, b), rate)) +
                             "\" tclass=\"0x030200\"/>\n";
                        to_switch -= t.bandwidth(d, b);
                    }
                    if (t.nvswitches > 0 && to_switch > rate / 2)
                        x += indent + "    <nvlink target=\"fffffff:ffff:ff\" count=\"" +
                             std::to_string(links_for(to_switch, rate)) +
                             "\" tclass=\"0x068000\"/>\n";
                    x += indent + "  </gpu>\n" + indent + "</pci>\n";
                } else {
                    const Nic &nic = t.nics[static_cast<std::size_t>(d - G)];
                    const char *cls = nic.kind == "ib" ? "0x020700" : "0x020000";
                    x += indent + "<pci busid=\"" + xml_escape(nic.pci_busid) + "\" class=\"" +
                         cls + "\" link_speed=\"16 GT/s\" link_width=\"16\">\n";
                    x += indent + "  <nic><net name=\"" + xml_escape(nic.name) + "\" dev=\"" +
                         std::to_string(d - G) + "\"/></nic>\n";
                    x += indent + "</pci>\n";
                }
            }
            if (sw)
                x += "    </pci>\n";
        }
        x += "  </cpu>\n";
    }
    x += "</system>\n";
    return x;
}

}  // namespace slurm_ai
