#include "slurm_ai/topology/cluster_files.hpp"

#include <map>
#include <optional>

#include "slurm_ai/common/hostlist.hpp"
#include "slurm_ai/topology/topology_file.hpp"

namespace slurm_ai {

Parsed<Fabric> load_fabric(const std::string &path, const std::string &guid_map,
                           std::string_view field) {
    std::optional<GuidMap> map;
    if (!guid_map.empty()) {
        auto m = load_guid_map(guid_map);
        if (!m)
            return m.error();
        map = std::move(m).value();
    }
    auto file = load_topology_file(path, map ? &*map : nullptr);
    if (!file)
        return file.error();
    if (!std::holds_alternative<Fabric>(file.value()))
        return InputError{std::string(field), path,
                          "a fabric (topology.conf, topology.yaml, ibnetdiscover output, a "
                          "topograph model or a host-by-host CSV), not a node topology",
                          path, 0};
    return std::get<Fabric>(std::move(file).value());
}

Parsed<ClusterGraph> attach_nodes(Fabric fabric, const std::vector<std::string> &node_specs,
                                  LatencyModel latency) {
    std::map<std::string, NodeTopology> per_host;
    std::optional<NodeTopology> every;
    // Each distinct file is parsed once, however many hostlists name it.
    std::map<std::string, NodeTopology> loaded;
    for (const auto &spec : node_specs) {
        auto eq = spec.find('=');
        std::string path = eq == std::string::npos ? spec : spec.substr(eq + 1);
        auto it = loaded.find(path);
        if (it == loaded.end()) {
            auto topo = load_node_topology(path);
            if (!topo)
                return topo.error();
            it = loaded.emplace(path, std::move(topo).value()).first;
        }
        if (eq == std::string::npos) {
            every = it->second;
            per_host.clear();  // a later catch-all replaces earlier per-host files
            continue;
        }
        auto hosts = expand_hostlist(spec.substr(0, eq), "node topology HOSTLIST");
        if (!hosts)
            return hosts.error();
        for (const auto &h : hosts.value())
            per_host[h] = it->second;
    }
    return ClusterGraph::build(std::move(fabric), std::move(per_host), std::move(every), latency);
}

std::optional<InputError> add_nvlink_domains(Fabric &fabric, const std::vector<std::string> &specs,
                                             double gpu_gbps) {
    std::vector<std::string> owner(fabric.nodes.size());
    for (const auto &d : fabric.nvlink_domains)
        for (int h : d.hosts)
            owner[h] = d.name;
    auto add = [&](const std::string &name, std::vector<int> hosts,
                   const std::string &spec) -> std::optional<InputError> {
        for (int h : hosts)
            if (!owner[h].empty())
                return InputError{"NvlinkDomain",
                                  spec,
                                  "hosts in no other NVLink domain (" + fabric.nodes[h].name +
                                      " is in " + owner[h] + ")",
                                  {},
                                  0};
        for (int h : hosts)
            owner[h] = name;
        fabric.nvlink_domains.push_back(NvlinkDomain{name, std::move(hosts), "", gpu_gbps, false});
        return std::nullopt;
    };
    for (const auto &spec : specs) {
        if (spec == "blocks") {
            for (const auto &b : fabric.blocks)
                if (b.domain.empty())
                    if (auto err = add(b.name, b.hosts, spec))
                        return err;
            continue;
        }
        auto names = expand_hostlist(spec, "NvlinkDomain");
        if (!names)
            return names.error();
        std::vector<int> hosts;
        for (const auto &n : names.value()) {
            int h = fabric.find(n);
            if (h < 0 || fabric.nodes[h].is_switch)
                return InputError{
                    "NvlinkDomain",
                    spec,
                    "hosts of the fabric (" + n + " is not one of " + fabric.source + ")",
                    {},
                    0};
            hosts.push_back(h);
        }
        if (auto err = add("nvlink-" + std::to_string(fabric.nvlink_domains.size() + 1),
                           std::move(hosts), spec))
            return err;
    }
    if (gpu_gbps > 0)
        for (auto &d : fabric.nvlink_domains)
            if (d.gpu_gbps <= 0)
                d.gpu_gbps = gpu_gbps;
    return std::nullopt;
}

Parsed<ClusterGraph> load_cluster(const ClusterFiles &files, LatencyModel latency) {
    auto fabric = load_fabric(files.fabric, files.guid_map);
    if (!fabric)
        return fabric.error();
    if (auto err = add_nvlink_domains(fabric.value(), files.nvlink_domains, files.nvlink_gpu_gbps))
        return *err;
    return attach_nodes(std::move(fabric).value(), files.nodes, latency);
}

}  // namespace slurm_ai
