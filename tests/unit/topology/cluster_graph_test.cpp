#include "slurm_ai/topology/cluster_graph.hpp"

#include <string>

#include <catch2/catch.hpp>

#include "slurm_ai/topology/fabric.hpp"
#include "slurm_ai/topology/node_topology.hpp"

using namespace slurm_ai;

namespace {

const std::string kData = SLURM_AI_DATA_DIR;

// Two leaves of four hosts under one spine; host links 100 Gb/s, leaf uplinks 100 Gb/s.
ClusterGraph two_leaves(std::optional<NodeTopology> node = {}) {
    auto fabric = parse_topology_conf(
        "SwitchName=leaf1 Nodes=n[1-4] LinkSpeed=100\n"
        "SwitchName=leaf2 Nodes=n[5-8] LinkSpeed=100\n"
        "SwitchName=spine Switches=leaf[1-2] LinkSpeed=100\n",
        "two-leaves");
    REQUIRE(fabric.ok());
    auto g = ClusterGraph::build(std::move(fabric).value(), {}, std::move(node));
    REQUIRE(g.ok());
    return std::move(g).value();
}

std::vector<int> hosts(const ClusterGraph &g, std::initializer_list<const char *> names) {
    std::vector<int> out;
    for (auto *n : names) {
        out.push_back(g.host_index(n));
        REQUIRE(out.back() >= 0);
    }
    return out;
}

std::vector<std::string> names(const ClusterGraph &g, const std::vector<int> &idx) {
    std::vector<std::string> out;
    for (int h : idx)
        out.push_back(g.host_name(h));
    return out;
}

}  // namespace

TEST_CASE("host paths count fabric hops and take the slowest link", "[graph]") {
    auto g = two_leaves();
    REQUIRE(g.host_count() == 8);
    auto same_leaf = g.host_path(g.host_index("n1"), g.host_index("n2"));
    CHECK(same_leaf.fabric_hops == 2);
    CHECK(same_leaf.bandwidth_gbs == Approx(12.5));
    CHECK(same_leaf.latency_us == Approx(2 * 1.0 + 0.13));
    auto across = g.host_path(g.host_index("n1"), g.host_index("n8"));
    CHECK(across.fabric_hops == 4);
    CHECK(across.latency_us == Approx(2 * 1.0 + 3 * 0.13));
}

TEST_CASE("smallest subtree prefers one leaf and the best fit", "[graph]") {
    auto g = two_leaves();
    auto fit = g.smallest_subtree(hosts(g, {"n1", "n2", "n3", "n5", "n6", "n7", "n8"}), 3);
    REQUIRE(fit);
    CHECK(g.fabric().nodes[fit->switch_node].name == "leaf1");  // 3 free: a tighter fit than 4
    CHECK(fit->level == 0);
    CHECK(names(g, fit->hosts) == std::vector<std::string>{"n1", "n2", "n3"});

    auto spill = g.smallest_subtree(hosts(g, {"n1", "n2", "n5", "n6", "n7"}), 4);
    REQUIRE(spill);
    CHECK(g.fabric().nodes[spill->switch_node].name == "spine");
    CHECK(spill->level == 1);
    // As few leaves as possible: all of leaf2's three, then one of leaf1's.
    CHECK(names(g, spill->hosts) == std::vector<std::string>{"n5", "n6", "n7", "n1"});

    CHECK_FALSE(g.smallest_subtree(hosts(g, {"n1", "n2"}), 3));
    CHECK_FALSE(g.smallest_subtree({}, 1));
}

TEST_CASE("bottleneck is the most shared cut", "[graph]") {
    auto g = two_leaves();
    auto inside = g.bottleneck(hosts(g, {"n1", "n2", "n3"}));
    REQUIRE(inside);
    CHECK(inside->switch_node == -1);  // only host links inside one leaf
    CHECK(inside->per_host_gbs == Approx(12.5));

    auto split = g.bottleneck(hosts(g, {"n1", "n2", "n5", "n6"}));
    REQUIRE(split);
    CHECK(split->where == "uplinks of leaf1");
    CHECK(split->bandwidth_gbs == Approx(12.5));
    CHECK(split->hosts_below == 2);
    CHECK(split->per_host_gbs == Approx(6.25));
    CHECK_FALSE(g.bottleneck(hosts(g, {"n1"})));
}

TEST_CASE("GPU paths combine the node topology with the fabric", "[graph]") {
    auto node = load_nccl_topo(kData + "/nccl-topo/ndv4-topo.xml");
    REQUIRE(node.ok());
    auto g = two_leaves(node.value());
    CHECK(g.gpu_count() == 8 * 8);
    int n1 = g.host_index("n1"), n5 = g.host_index("n5");
    auto local = g.gpu_path({n1, 0}, {n1, 1});
    CHECK(local.fabric_hops == 0);
    CHECK(local.intra == node->path(0, 1));
    CHECK(local.bandwidth_gbs == Approx(node->bandwidth(0, 1)));

    auto remote = g.gpu_path({n1, 0}, {n5, 3});
    CHECK(remote.fabric_hops == 4);
    CHECK(remote.bandwidth_gbs <= 12.5);
    CHECK(remote.bandwidth_gbs > 0);
    CHECK(remote.latency_us > g.host_path(n1, n5).latency_us);

    auto ok = g.parse_endpoint("n5:gpu7");
    REQUIRE(ok.ok());
    CHECK(ok->host == n5);
    CHECK(ok->gpu == 7);
    CHECK(g.parse_endpoint("n5")->gpu == -1);
    CHECK_FALSE(g.parse_endpoint("n9").ok());
    auto bad = g.parse_endpoint("n1:gpu8");
    REQUIRE_FALSE(bad.ok());
    CHECK_THAT(bad.error().message(), Catch::Contains("it has 8 GPUs"));
    CHECK_FALSE(g.parse_endpoint("n1:x").ok());
    // The Boost graph holds switches, hosts and GPUs, with edges among all of them.
    CHECK(g.vertex_count() == 3 + 8 + 64);
    CHECK(g.edge_count() >= 2 + 8 + 64);
}

TEST_CASE("node topologies must name hosts of the fabric", "[graph]") {
    auto fabric = parse_topology_conf("SwitchName=s Nodes=a,b\n", "tiny");
    REQUIRE(fabric.ok());
    std::map<std::string, NodeTopology> nodes{{"c", NodeTopology{}}};
    auto g = ClusterGraph::build(std::move(fabric).value(), nodes);
    REQUIRE_FALSE(g.ok());
    CHECK(g.error().value == "c");
}

TEST_CASE("the X5 fabric as a cluster graph", "[graph]") {
    auto map = load_guid_map(kData + "/fabric/X5.map");
    REQUIRE(map.ok());
    auto fabric = load_ibnetdiscover(kData + "/fabric/X5.topofile", &map.value());
    REQUIRE(fabric.ok());
    auto built = ClusterGraph::build(std::move(fabric).value());
    REQUIRE(built.ok());
    const ClusterGraph &g = built.value();
    CHECK(g.host_count() == 89);
    int a = g.host_index("sl390lin1"), b = g.host_index("sl390lin2"),
        c = g.host_index("sl390lin101");
    REQUIRE(a >= 0);
    REQUIRE(b >= 0);
    REQUIRE(c >= 0);
    CHECK(g.host_path(a, b).fabric_hops == 2);              // same leaf
    CHECK(g.host_path(a, c).fabric_hops == 4);              // leaf, spine, leaf
    CHECK(g.host_path(a, c).bandwidth_gbs == Approx(4.0));  // 4xQDR = 32 Gb/s
    for (int i = 0; i < g.host_count(); ++i)
        for (int j = i + 1; j < g.host_count(); ++j) {
            auto m = g.host_path(i, j);
            CHECK(m.fabric_hops >= 2);
            CHECK(m.bandwidth_gbs > 0);
        }
}
