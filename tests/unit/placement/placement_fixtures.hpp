// Small clusters for the placement tests, built from topology.conf text and the real
// node files of ../shared/data.
#pragma once

#include <set>
#include <string>

#include <catch2/catch.hpp>

#include "slurm_ai/placement/cluster_state.hpp"
#include "slurm_ai/placement/job_demand.hpp"
#include "slurm_ai/placement/placement.hpp"
#include "slurm_ai/topology/cluster_graph.hpp"
#include "slurm_ai/topology/fabric.hpp"
#include "slurm_ai/topology/node_topology.hpp"

namespace slurm_ai::test {

inline const std::string kData = SLURM_AI_DATA_DIR;

inline NodeTopology node_at(const std::string &path) {
    auto t = load_node_topology(path);
    INFO((t.ok() ? std::string() : t.error().message()));
    REQUIRE(t.ok());
    return std::move(t).value();
}
// A node file of ../shared/data, and one of tests/inputs (emulated and hand-written nodes).
inline NodeTopology node_file(const std::string &relative) {
    return node_at(kData + "/" + relative);
}
inline NodeTopology input_node(const std::string &name) {
    return node_at(std::string(SLURM_AI_TEST_INPUTS) + "/" + name);
}

// `leaves` leaf switches of `per_leaf` hosts (h1, h2, ...) under one spine. Host links
// run at host_gbit, the spine links at uplink_gbit (Gb/s).
inline ClusterGraph fat_tree(int leaves, int per_leaf, int host_gbit, int uplink_gbit,
                             std::optional<NodeTopology> node = {}) {
    std::string conf;
    for (int l = 1; l <= leaves; ++l)
        conf += "SwitchName=leaf" + std::to_string(l) + " Nodes=h[" +
                std::to_string((l - 1) * per_leaf + 1) + "-" + std::to_string(l * per_leaf) +
                "] LinkSpeed=" + std::to_string(host_gbit) + "\n";
    conf += "SwitchName=spine Switches=leaf[1-" + std::to_string(leaves) +
            "] LinkSpeed=" + std::to_string(uplink_gbit) + "\n";
    auto fabric = parse_topology_conf(conf, "fat-tree");
    INFO((fabric.ok() ? std::string() : fabric.error().message()));
    REQUIRE(fabric.ok());
    auto g = ClusterGraph::build(std::move(fabric).value(), {}, std::move(node));
    REQUIRE(g.ok());
    return std::move(g).value();
}

inline int host(const ClusterGraph &g, const std::string &name) {
    int h = g.host_index(name);
    REQUIRE(h >= 0);
    return h;
}

// Marks hosts busy (no free GPU, not usable).
inline void occupy(ClusterState &s, const ClusterGraph &g,
                   std::initializer_list<const char *> names) {
    for (auto *n : names) {
        int h = host(g, n);
        s.free_gpus[h] = 0;
        s.usable[h] = 0;
    }
}

// A placement of whole hosts (one rank each), in the given order.
inline Placement hosts_only(const ClusterGraph &g, std::initializer_list<const char *> names) {
    Placement p;
    for (auto *n : names) {
        p.hosts.push_back(host(g, n));
        p.gpus.emplace_back();
    }
    return p;
}

// A job of `nodes` nodes and `gpus` GPUs that communicates as `pattern`; the fields of
// `comm` other than the pattern stay as given (0: the default).
inline JobDemand pattern_demand(CommPattern pattern, std::uint32_t nodes, std::uint32_t gpus = 0,
                                CommSpec comm = {}) {
    JobHints hints;
    comm.pattern = pattern;
    hints.comm = comm;
    return make_demand(JobRequest{nodes, nodes, gpus / nodes, gpus, 1}, hints);
}

// The GB200 NVL72 racks of topograph's nvl72.yaml (4 racks of 18 trays, each a leaf and
// an NVLink domain) with the hand-written GB200 tray (4 GPUs, 4 NICs).
inline ClusterGraph nvl72_racks() {
    auto fabric = load_topograph_model(kData + "/fabric/topograph/nvl72.yaml");
    REQUIRE(fabric.ok());
    REQUIRE(fabric->nvlink_domains.size() == 4);
    auto g = ClusterGraph::build(std::move(fabric).value(), {}, input_node("gb200-tray-topo.xml"));
    REQUIRE(g.ok());
    return std::move(g).value();
}

// The leaf switches a placement's hosts hang from.
inline std::set<int> leaves_of(const ClusterGraph &g, const Placement &p) {
    std::set<int> out;
    for (int h : p.hosts)
        out.insert(g.host_leaf(h));
    return out;
}

}  // namespace slurm_ai::test
