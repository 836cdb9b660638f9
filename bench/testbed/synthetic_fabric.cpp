#include "synthetic_fabric.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

namespace slurm_ai::testbed {

std::string clos_topology_conf(int hosts, int spines) {
    const int per_leaf = 32;
    int leaves = (hosts + per_leaf - 1) / per_leaf;
    std::string conf;
    for (int l = 0; l < leaves; ++l) {
        int first = l * per_leaf + 1, last = std::min(hosts, (l + 1) * per_leaf);
        conf += fmt::format("SwitchName=leaf{} Nodes=n[{}-{}] LinkSpeed=200\n", l + 1, first, last);
    }
    if (leaves > 1)
        for (int s = 0; s < spines; ++s)
            conf += fmt::format("SwitchName=spine{} Switches=leaf[1-{}] LinkSpeed=200\n", s + 1,
                                leaves);
    return conf;
}

Parsed<FabricShape> measure_shape(const Fabric &input) {
    Fabric f = input;
    f.index_links();
    f.infer_levels();
    f.infer_rails();
    FabricShape s;
    s.source = f.source;
    s.rails = f.rails.size() > 1 ? static_cast<int>(f.rails.size()) : 0;
    for (const auto &d : f.nvlink_domains)
        if (d.parent.empty())
            s.domain_hosts = std::max(s.domain_hosts, static_cast<int>(d.hosts.size()));
    auto neighbours = [&](int node, auto &&keep) {
        std::set<int> out;
        for (int li : f.links_of[node]) {
            const auto &l = f.links[li];
            int other = l.a == node ? l.b : l.a;
            if (keep(f.nodes[other]))
                out.insert(other);
        }
        return out;
    };
    auto is_host = [](const FabricNode &n) { return !n.is_switch; };
    auto at_level = [](int level) {
        return [level](const FabricNode &n) { return n.is_switch && n.level == level; };
    };
    int fullest = -1;
    for (int sw : f.switches()) {
        if (f.nodes[sw].level != 0)
            continue;
        int hosts = static_cast<int>(neighbours(sw, is_host).size());
        if (hosts > s.hosts_per_leaf) {
            s.hosts_per_leaf = hosts;
            fullest = sw;
        }
    }
    if (fullest < 0)
        return InputError{"fabric", f.source, "a fabric with leaf switches (cabled to hosts)",
                          f.source, 0};
    s.leaf_oversubscription = f.switch_stats(fullest).oversubscription;
    s.spines_per_leaf = static_cast<int>(neighbours(fullest, at_level(1)).size());
    if (s.spines_per_leaf == 0 || s.leaf_oversubscription <= 0)
        return InputError{"fabric", f.source,
                          "a fabric whose fullest leaf is cabled to switches above it", f.source,
                          0};
    for (int sw : f.switches()) {
        if (f.nodes[sw].level == 1) {
            s.leaves_per_spine =
                std::max(s.leaves_per_spine, static_cast<int>(neighbours(sw, at_level(0)).size()));
            auto stats = f.switch_stats(sw);
            if (stats.up_gbps > 0)
                s.spine_oversubscription =
                    std::max(s.spine_oversubscription, stats.oversubscription);
        } else if (f.nodes[sw].level >= 2) {
            ++s.cores;
        }
    }
    return s;
}

std::string describe(const FabricShape &s) {
    std::string out = fmt::format(
        "leaves of {} hosts, {:.2f}:1 up to {} spines; {} leaves per "
        "spine group",
        s.hosts_per_leaf, s.leaf_oversubscription, s.spines_per_leaf, s.leaves_per_spine);
    if (s.spine_oversubscription > 0)
        out += fmt::format("; spines {:.2f}:1 up to {} core{}", s.spine_oversubscription,
                           std::max(s.cores, 1), s.cores > 1 ? "s" : "");
    if (s.rails > 1)
        out += fmt::format("; {} rails", s.rails);
    if (s.domain_hosts > 1)
        out += fmt::format("; NVLink domains of {} hosts", s.domain_hosts);
    return out;
}

std::string shaped_topology_conf(const FabricShape &s, int hosts, double host_gbps) {
    const int per_leaf = std::max(s.hosts_per_leaf, 1);
    const int spl = std::max(s.spines_per_leaf, 1);
    const int lps = std::max(s.leaves_per_spine, 1);
    const int rails = std::max(s.rails, 1);
    const int units = std::max((hosts + per_leaf - 1) / per_leaf, 1);
    const int leaves = units * rails;
    const int groups = (leaves + lps - 1) / lps;
    // One link per (leaf, spine) pair carries the leaf's share of its uplink bandwidth.
    const double leaf_up = per_leaf * host_gbps / std::max(s.leaf_oversubscription, 1e-9);
    const long spine_link = std::max(1L, std::lround(leaf_up / spl));
    std::string conf;
    for (int l = 0; l < leaves; ++l) {
        int u = l / rails;  // leaf l is rail l % rails of unit u
        int first = u * per_leaf + 1, last = std::min(hosts, (u + 1) * per_leaf);
        conf += fmt::format("SwitchName=leaf{} Nodes=n[{}-{}] LinkSpeed={}\n", l + 1, first, last,
                            std::lround(host_gbps));
    }
    for (int g = 0; g < groups; ++g) {
        int first = g * lps + 1, last = std::min(leaves, (g + 1) * lps);
        for (int k = 0; k < spl; ++k)
            conf += fmt::format("SwitchName=spine{} Switches=leaf[{}-{}] LinkSpeed={}\n",
                                g * spl + k + 1, first, last, spine_link);
    }
    if (s.domain_hosts > 1)
        for (int first = 1, b = 1; first <= hosts; first += s.domain_hosts, ++b)
            conf += fmt::format("BlockName=nvl{} Nodes=n[{}-{}]\n", b, first,
                                std::min(hosts, first + s.domain_hosts - 1));
    if (groups > 1) {
        const int cores = std::max(s.cores, 1);
        const double spine_down = static_cast<double>(lps) * static_cast<double>(spine_link);
        const double over = s.spine_oversubscription > 0 ? s.spine_oversubscription : 1.0;
        const long core_link = std::max(1L, std::lround(spine_down / over / cores));
        for (int c = 0; c < cores; ++c)
            conf += fmt::format("SwitchName=core{} Switches=spine[1-{}] LinkSpeed={}\n", c + 1,
                                groups * spl, core_link);
    }
    return conf;
}

}  // namespace slurm_ai::testbed
