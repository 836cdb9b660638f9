#include "sim_cluster.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "slurm_ai/common/hostlist.hpp"
#include "slurm_ai/topology/cluster_files.hpp"
#include "slurm_ai/topology/fabric.hpp"
#include "slurm_ai/topology/node_topology.hpp"
#include "slurm_ai/topology/topology_file.hpp"
#include "testbed/synthetic_fabric.hpp"

namespace slurm_ai::sim {
namespace {

std::string base_name(const std::string &path) {
    return std::filesystem::path(path).filename().string();
}

std::string summary(const ClusterGraph &g, const std::vector<std::string> &nodes) {
    std::map<int, int> levels;
    for (int sw : g.switch_nodes())
        ++levels[g.switch_level(sw)];
    std::string switches;
    const char *names[][2] = {{"leaf", "leaves"}, {"spine", "spines"}, {"core", "cores"}};
    for (const auto &[level, n] : levels)
        switches += fmt::format(
            "{}{} {}", switches.empty() ? "" : ", ", n,
            level < 3 ? names[level][n == 1 ? 0 : 1] : fmt::format("level-{} switches", level));
    std::string files;
    for (const auto &n : nodes)
        files += (files.empty() ? "" : ", ") + base_name(n.substr(n.find('=') + 1));
    return fmt::format("{} hosts, {} GPUs ({}); {}", g.host_count(), g.gpu_count(),
                       files.empty() ? "no node file" : files, switches);
}

}  // namespace

Parsed<SimCluster> build_cluster(const ClusterSpec &spec) {
    std::optional<Parsed<ClusterGraph>> graph;
    std::string how;
    if (!spec.fabric.empty()) {
        graph.emplace(load_cluster({spec.fabric, spec.guid_map, spec.nodes}));
        how = "fabric " + base_name(spec.fabric);
    } else {
        if (spec.hosts < 1 || spec.hosts > 100000)
            return InputError{"--hosts", std::to_string(spec.hosts), "1 to 100000 hosts", "", 0};
        if (!(spec.host_gbps > 0))
            return InputError{"--host-gbps", fmt::format("{:g}", spec.host_gbps),
                              "a positive link speed in Gb/s", "", 0};
        std::string conf;
        if (!spec.shape_of.empty()) {
            auto fabric = load_fabric(spec.shape_of, spec.shape_map, "--shape-of");
            if (!fabric)
                return fabric.error();
            // A topology.conf's blocks are its NVLink domains, as in the fabrics made here.
            if (fabric.value().nvlink_domains.empty())
                if (auto err = add_nvlink_domains(fabric.value(), {"blocks"}, 0))
                    return *err;
            auto shape = testbed::measure_shape(fabric.value());
            if (!shape)
                return shape.error();
            conf = testbed::shaped_topology_conf(shape.value(), spec.hosts, spec.host_gbps);
            how = fmt::format("fabric in the shape of {} ({}), host links {:g} Gb/s",
                              base_name(spec.shape_of), testbed::describe(shape.value()),
                              spec.host_gbps);
        } else {
            conf = fmt::format("SwitchName=switch1 Nodes=n[1-{}] LinkSpeed={:g}\n", spec.hosts,
                               spec.host_gbps);
            how = fmt::format("one switch, host links {:g} Gb/s", spec.host_gbps);
        }
        auto fabric = parse_topology_conf(conf, "ai-sim fabric");
        if (!fabric)
            return fabric.error();
        if (auto err = add_nvlink_domains(fabric.value(), {"blocks"}, 0))
            return *err;
        graph.emplace(attach_nodes(std::move(fabric).value(), spec.nodes));
    }
    if (!*graph)
        return graph->error();
    SimCluster c{std::move(*graph).value(), "", 0, 0, nullptr};
    for (int h = 0; h < c.graph.host_count(); ++h)
        c.max_gpus_per_host =
            std::max(c.max_gpus_per_host, static_cast<int>(c.graph.node(h).gpus.size()));
    c.gpus = c.graph.gpu_count();
    if (c.gpus == 0)
        return InputError{"--node", spec.nodes.empty() ? std::string() : spec.nodes.front(),
                          "node topologies with GPUs (the simulator places GPU jobs)", "", 0};
    if (c.max_gpus_per_host > 64)
        return InputError{"--node", spec.nodes.front(), "at most 64 GPUs per host", "", 0};
    c.description = summary(c.graph, spec.nodes) + "; " + how;
    return c;
}

}  // namespace slurm_ai::sim
