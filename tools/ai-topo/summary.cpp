#include "summary.hpp"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "slurm_ai/common/hostlist.hpp"

namespace slurm_ai::cli {

namespace {
std::string base(const std::string &path) {
    return path == "live" ? path : std::filesystem::path(path).filename().string();
}
}  // namespace

std::string summarize(const NodeTopology &t) {
    std::string out = fmt::format("{}: {}{}\n", base(t.source), t.format,
                                  t.hostname.empty() ? "" : ", host " + t.hostname);
    out += fmt::format("  {} packages, {} cores, {} PUs, {} NUMA nodes\n", t.packages, t.cores,
                       t.pus, t.numa_nodes.size());
    out += fmt::format("  {} GPUs, {} NVSwitches, {} NICs\n", t.gpus.size(), t.nvswitches,
                       t.nics.size());
    auto pairing = t.gpu_nic_pairing();
    if (!t.gpus.empty()) {
        out += fmt::format("  {:<4} {:<13} {:<24} {:>4}  {:<12} {}\n", "GPU", "bus id", "model",
                           "NUMA", "cpus", "NIC");
        for (std::size_t i = 0; i < t.gpus.size(); ++i) {
            const auto &g = t.gpus[i];
            std::string nic =
                pairing[i] < 0
                    ? "-"
                    : fmt::format("{} ({})", t.nics[pairing[i]].name,
                                  to_string(t.nic_path(static_cast<int>(i), pairing[i])));
            out +=
                fmt::format("  {:<4} {:<13} {:<24} {:>4}  {:<12} {}\n", i, g.pci_busid,
                            g.model.empty() ? "-" : g.model, g.numa_node, to_cpu_list(g.cpus), nic);
        }
    }
    if (!t.nics.empty()) {
        out += fmt::format("  {:<10} {:<13} {:<9} {:>4}  {}\n", "NIC", "bus id", "kind", "NUMA",
                           "PCIe GB/s");
        for (const auto &n : t.nics)
            out += fmt::format("  {:<10} {:<13} {:<9} {:>4}  {:g}\n", n.name, n.pci_busid, n.kind,
                               n.numa_node, n.pcie_gbs);
    }
    if (t.gpus.size() > 1) {
        out += "  GPU to GPU: path type and GB/s\n      ";
        for (std::size_t j = 0; j < t.gpus.size(); ++j)
            out += fmt::format("{:>9}", j);
        out += '\n';
        for (std::size_t i = 0; i < t.gpus.size(); ++i) {
            out += fmt::format("  {:>3} ", i);
            for (std::size_t j = 0; j < t.gpus.size(); ++j) {
                int a = static_cast<int>(i), b = static_cast<int>(j);
                out += i == j ? fmt::format("{:>9}", "-")
                              : fmt::format("{:>9}", fmt::format("{} {:g}", to_string(t.path(a, b)),
                                                                 t.bandwidth(a, b)));
            }
            out += '\n';
        }
    }
    for (const auto &n : t.numa_nodes)
        out += fmt::format("  NUMA {}: cpus {}, {:.1f} GiB\n", n.os_index, to_cpu_list(n.cpus),
                           static_cast<double>(n.memory_bytes) / (1ull << 30));
    return out;
}

std::string summarize(const Fabric &f) {
    auto sw = f.switches();
    auto hosts = f.hosts();
    std::string out = fmt::format("{}: {}, {} switches, {} hosts, {} links, {} levels\n",
                                  base(f.source), f.format, sw.size(), hosts.size(), f.links.size(),
                                  sw.empty() ? 0 : f.max_level() + 1);
    out += fmt::format("  {:<24} {:>5} {:>6} {:>9} {:>9} {:>9} {:>8}\n", "switch", "level", "hosts",
                       "switches", "down Gb/s", "up Gb/s", "oversub");
    for (int s : sw) {
        int h = 0, nsw = 0;
        for (int l : f.links_of[s]) {
            int other = f.links[l].a == s ? f.links[l].b : f.links[l].a;
            (f.nodes[other].is_switch ? nsw : h)++;
        }
        auto st = f.switch_stats(s);
        out += fmt::format("  {:<24} {:>5} {:>6} {:>9} {:>9g} {:>9g} {:>8}\n", f.nodes[s].name,
                           f.nodes[s].level, h, nsw, st.down_gbps, st.up_gbps,
                           st.up_gbps > 0 ? fmt::format("{:.2f}:1", st.oversubscription) : "-");
    }
    auto hostlist = [&](const std::vector<int> &members) {
        std::vector<std::string> names;
        for (int h : members)
            names.push_back(f.nodes[static_cast<std::size_t>(h)].name);
        return compress_hostlist(std::move(names));
    };
    if (!f.rails.empty()) {
        out += fmt::format("  {} rails (hosts' NICs on separate leaves)\n", f.rails.size());
        for (std::size_t r = 0; r < f.rails.size(); ++r) {
            std::vector<std::string> leaves;
            for (int leaf : f.rails[r])
                leaves.push_back(f.nodes[static_cast<std::size_t>(leaf)].name);
            out += fmt::format("    rail {:<17} {:>4} leaves {}\n", r, leaves.size(),
                               fmt::join(leaves, ","));
        }
    }
    if (!f.nvlink_domains.empty()) {
        out += fmt::format("  {} NVLink domains\n", f.nvlink_domains.size());
        for (const auto &d : f.nvlink_domains)
            out += fmt::format("    {:<22} {:>4} hosts  {}{}{}\n", d.name, d.hosts.size(),
                               hostlist(d.hosts), d.parent.empty() ? "" : "  in " + d.parent,
                               d.degraded ? "  degraded" : "");
    }
    if (!f.blocks.empty()) {
        out += fmt::format("  {} blocks{}\n", f.blocks.size(),
                           f.block_sizes.empty()
                               ? std::string()
                               : fmt::format(", BlockSizes={}", fmt::join(f.block_sizes, ",")));
        for (const auto &b : f.blocks)
            out += fmt::format("    {:<22} {:>4} hosts  {}\n", b.name, b.hosts.size(),
                               hostlist(b.hosts));
    }
    return out;
}

std::string summarize(const NodeGpuFabric &n) {
    std::string out = fmt::format("{}: {}{}, {} GPUs\n", base(n.source), n.format,
                                  n.driver.empty() ? "" : ", driver " + n.driver, n.gpus.size());
    if (n.domain)
        out += fmt::format("  NVLink domain: cluster UUID {}, clique {} (every GPU agrees)\n",
                           n.domain->cluster_uuid, n.domain->clique_id);
    else if (!n.problem.empty())
        out += fmt::format("  NVLink domain: none: {}\n", n.problem);
    else
        out += "  NVLink domain: none (no GPU reports a multi-node NVLink domain)\n";
    if (n.gpus.empty())
        return out;
    out += fmt::format("  {:<4} {:<17} {:<12} {:<8} {:<38} {:<7} {}\n", "GPU", "bus id", "state",
                       "status", "cluster UUID", "clique", "health");
    auto or_dash = [](const std::string &s) { return s.empty() ? std::string("-") : s; };
    for (std::size_t i = 0; i < n.gpus.size(); ++i) {
        const auto &g = n.gpus[i];
        std::string health = g.health;
        if (!g.bandwidth.empty())
            health += (health.empty() ? "" : ", ") + std::string("bandwidth ") + g.bandwidth;
        out += fmt::format("  {:<4} {:<17} {:<12} {:<8} {:<38} {:<7} {}\n", i, or_dash(g.bus_id),
                           or_dash(g.state), or_dash(g.status), or_dash(g.cluster_uuid),
                           g.clique_id ? std::to_string(*g.clique_id) : "-", or_dash(health));
    }
    return out;
}

}  // namespace slurm_ai::cli
