// The cost model and the placement on the fabrics of issue 17: rail-optimized fabrics
// (hosts with a NIC on each rail's leaf) and multi-node NVLink domains (GB200 NVL72),
// with expectations computed by hand from the model's published rules (cost_model.hpp,
// flow_model.hpp) and the default constants.
#include <catch2/catch.hpp>

#include "placement/placement_fixtures.hpp"
#include "search_budget.hpp"
#include "slurm_ai/placement/cost_model.hpp"
#include "slurm_ai/placement/failure_risk.hpp"
#include "slurm_ai/placement/placement_engine.hpp"
#include "slurm_ai/topology/cluster_files.hpp"

using namespace slurm_ai;
using namespace slurm_ai::test;

namespace {

ClusterGraph graph_of(const std::string &conf, const NodeTopology &node) {
    auto fabric = parse_topology_conf(conf, "rails.conf");
    INFO((fabric.ok() ? std::string() : fabric.error().message()));
    REQUIRE(fabric.ok());
    auto g = ClusterGraph::build(std::move(fabric).value(), {}, node);
    REQUIRE(g.ok());
    return std::move(g).value();
}

// Two hosts, each with one NIC on each of two rails (leaves rail0 and rail1) under one
// spine; every cable 100 Gb/s (12.5 GB/s).
const char *kTwoRails =
    "SwitchName=rail0 Nodes=h[1-2] LinkSpeed=100\n"
    "SwitchName=rail1 Nodes=h[1-2] LinkSpeed=100\n"
    "SwitchName=spine Switches=rail[0-1] LinkSpeed=100\n";

// A data-parallel job whose all-reduce is hierarchical, of 1 GiB.
JobDemand hierarchical_allreduce(std::uint32_t nodes, std::uint32_t gpus) {
    auto d = pattern_demand(CommPattern::kAllReduce, nodes, gpus);
    d.comm.bytes = 1u << 30;
    d.comm.algo = "hierarchical";
    return d;
}

// topograph's four NVL72 racks, every host a GB200 tray.
ClusterGraph nvl72() {
    return nvl72_racks();
}

Placement gpus_on(const ClusterGraph &g,
                  std::vector<std::pair<const char *, std::vector<int>>> at) {
    Placement p;
    for (auto &[name, gpus] : at) {
        p.hosts.push_back(host(g, name));
        p.gpus.push_back(gpus);
    }
    return p;
}

double term(const CommEstimate &e, const std::string &name) {
    for (const auto &[n, s] : e.terms)
        if (n == name)
            return s;
    FAIL("no term " << name);
    return 0;
}

}  // namespace

TEST_CASE("two hosts on two rails: ports, rails and paths follow the NIC of each GPU",
          "[cost][rails]") {
    // minicluster-node-2nic: GPUs 0,1 beside mlx5_0, GPUs 2,3 beside mlx5_1; NVLink only
    // within the pairs (0,1) and (2,3).
    auto g = graph_of(kTwoRails, input_node("minicluster-node-2nic.xml"));
    const int h1 = host(g, "h1"), h2 = host(g, "h2");
    REQUIRE(g.fabric().rails.size() == 2);
    REQUIRE(g.ports(h1).size() == 2);
    CHECK(g.fabric().nodes[g.ports(h1)[0].leaf].name == "rail0");
    CHECK(g.gpu_rail({h1, 0}) == 0);
    CHECK(g.gpu_rail({h1, 1}) == 0);
    CHECK(g.gpu_rail({h1, 2}) == 1);
    CHECK(g.gpu_rail({h2, 3}) == 1);

    // Same rail: host, leaf, host.
    auto same = g.gpu_path({h1, 0}, {h2, 0});
    CHECK(same.fabric_hops == 2);
    CHECK(same.bandwidth_gbs == Approx(12.5));
    // Across rails without an NVLink path to a GPU of the other rail: over the spine.
    auto r = g.route({h1, 0}, {h2, 2});
    CHECK(r.proxy_gpu == -1);
    CHECK_FALSE(r.nvlink);
    CHECK(g.gpu_path({h1, 0}, {h2, 2}).fabric_hops == 4);
}

TEST_CASE("two hosts on two rails: rings on their own rail beat rings across rails",
          "[cost][rails]") {
    auto g = graph_of(kTwoRails, input_node("minicluster-node-2nic.xml"));
    CostModel model(g);
    const auto &c = model.constants();
    const double bytes = 1 << 30;
    auto d = hierarchical_allreduce(2, 4);

    // GPUs 0 (rail 0) and 2 (rail 1) on each host. Aligned: inter-host ring k links the
    // k-th GPU of each host, so ring 0 stays on rail 0 and ring 1 on rail 1.
    auto aligned = model.estimate(d, gpus_on(g, {{"h1", {0, 2}}, {"h2", {0, 2}}}));
    auto crossed = model.estimate(d, gpus_on(g, {{"h1", {0, 2}}, {"h2", {2, 0}}}));
    REQUIRE(aligned.algorithm == "hierarchical");

    // Each ring: 2 ranks, 2(p-1) = 2 steps of bytes/2 (the host's share) / 2 per flow.
    const double per_flow = bytes / 2 / 2;
    // Aligned: one flow per NIC, 12.5 GB/s x efficiency; latency 2 NIC + 1 switch + the
    // two GPU-NIC PCIe switch paths (2 us each).
    const double rate = 12.5 * c.inter_efficiency * 1e9;
    const double alpha = c.alpha_inter_s + (2 * 1.0 + 0.13 + 2 * 2.0) * 1e-6;
    CHECK(term(aligned, "inter-host rings") == Approx(2 * (alpha + per_flow / rate)).epsilon(1e-9));
    // Crossed: every flow leaves its rail's leaf by its one 100 Gb/s uplink, which two
    // flows share; latency has two more switches.
    const double up = 12.5 * c.inter_efficiency * 1e9 / 2;
    const double alpha_x = c.alpha_inter_s + (2 * 1.0 + 3 * 0.13 + 2 * 2.0) * 1e-6;
    CHECK(term(crossed, "inter-host rings") == Approx(2 * (alpha_x + per_flow / up)).epsilon(1e-9));
    CHECK(crossed.seconds > aligned.seconds);
}

TEST_CASE("the engine gives a job the same rails on every host", "[placement][rails]") {
    auto g = graph_of(kTwoRails, input_node("minicluster-node-2nic.xml"));
    PlacementEngine engine(g, {}, {}, test::unhurried());
    ClusterState s(g);
    // h2 has only GPUs 2 and 3 (rail 1) free; h1 has all four, and its best-linked pair
    // alone would be 0,1 (rail 0).
    s.free_gpus[host(g, "h2")] = 0b1100;
    auto d = pattern_demand(CommPattern::kAllReduce, 2, 4);
    auto decision = engine.place(d, s);
    REQUIRE(decision.placement);
    const auto &p = *decision.placement;
    REQUIRE(p.hosts.size() == 2);
    for (std::size_t i = 0; i < 2; ++i) {
        INFO(gpu_list(g, p));
        CHECK(p.gpus[i] == std::vector<int>{2, 3});
    }
    // Slurm's own choice (lowest GPUs) would cross rails and cost more.
    auto tree = engine.place(d, s, *make_policy("tree-bestfit"));
    REQUIRE(tree.placement);
    CHECK(tree.placement->comm_s > p.comm_s);
}

TEST_CASE("across rails on an NVSwitch host, PXN forwards over NVLink to the right rail",
          "[cost][rails]") {
    // A GB200 tray has a NIC per GPU: mlx5_k beside GPU k, each on rail k here.
    const char *conf =
        "SwitchName=r0 Nodes=h[1-2] LinkSpeed=400\n"
        "SwitchName=r1 Nodes=h[1-2] LinkSpeed=400\n"
        "SwitchName=r2 Nodes=h[1-2] LinkSpeed=400\n"
        "SwitchName=r3 Nodes=h[1-2] LinkSpeed=400\n"
        "SwitchName=spine Switches=r[0-3] LinkSpeed=400\n";
    auto g = graph_of(conf, input_node("gb200-tray-topo.xml"));
    const int h1 = host(g, "h1"), h2 = host(g, "h2");
    REQUIRE(g.fabric().rails.size() == 4);
    auto r = g.route({h1, 0}, {h2, 2});
    CHECK(r.proxy_gpu == 2);  // GPU 2 of h1 sits on rail 2, one NVLink hop from GPU 0
    CHECK(r.src_nic == 2);
    auto path = g.gpu_path({h1, 0}, {h2, 2});
    CHECK(path.fabric_hops == 2);               // no spine
    CHECK(path.bandwidth_gbs == Approx(50.0));  // the 400 Gb/s cable
    // 2 NIC crossings, 1 switch, the two GPU-NIC PCIe switches and the NVLink hop.
    CHECK(path.latency_us == Approx(2 * 1.0 + 0.13 + 2 * 2.0 + 1.0));
}

TEST_CASE("NVL72: hosts of one NVLink domain all-reduce at NVLink speed", "[cost][nvlink]") {
    const ClusterGraph g = nvl72();
    const int a = host(g, "node1101"), b = host(g, "node1102"), far = host(g, "node1201");
    REQUIRE(g.nvlink_domain(a) >= 0);
    CHECK(g.nvlink_domain(a) == g.nvlink_domain(b));
    CHECK(g.nvlink_domain(a) != g.nvlink_domain(far));
    CHECK(g.domain_hosts(g.nvlink_domain(a)).size() == 18);
    auto in = g.gpu_path({a, 1}, {b, 3});
    CHECK(in.fabric_hops == 0);
    CHECK(in.bandwidth_gbs == Approx(900.0));  // 18 NVLink 5 links of the GPU

    CostModel model(g);
    const auto &c = model.constants();
    const double bytes = 1 << 30;
    auto d = hierarchical_allreduce(2, 8);
    auto inside =
        model.estimate(d, gpus_on(g, {{"node1101", {0, 1, 2, 3}}, {"node1102", {0, 1, 2, 3}}}));
    auto across =
        model.estimate(d, gpus_on(g, {{"node1101", {0, 1, 2, 3}}, {"node1201", {0, 1, 2, 3}}}));
    // Inter-host ring k: GPU k of each host, 2 steps of bytes/4/2, one flow per GPU's
    // NVLink at 900 GB/s x intra efficiency; latency one NVLink and one NVSwitch hop.
    const double per_flow = bytes / 4 / 2;
    const double nvl = 900 * c.intra_efficiency * 1e9;
    const double alpha = c.alpha_inter_s + (1.0 + 0.13) * 1e-6;
    CHECK(term(inside, "inter-host rings") == Approx(2 * (alpha + per_flow / nvl)).epsilon(1e-9));
    // Across racks the same rings go through the hosts' one 100 Gb/s fabric cable (the
    // model gives the topograph file's links that rate), each NIC alone on it, and over
    // the spine: leaf uplinks of 100 Gb/s shared by the 4 rings.
    const double up = 12.5 * c.inter_efficiency * 1e9 / 4;
    const double alpha_x = c.alpha_inter_s + (2 * 1.0 + 3 * 0.13 + 2 * 2.0) * 1e-6;
    CHECK(term(across, "inter-host rings") == Approx(2 * (alpha_x + per_flow / up)).epsilon(1e-9));
    CHECK(across.seconds > 20 * inside.seconds);

    // All-to-all inside the domain never touches a NIC.
    auto moe = d;
    moe.comm.pattern = CommPattern::kMoE;
    auto a2a =
        model.estimate(moe, gpus_on(g, {{"node1101", {0, 1, 2, 3}}, {"node1102", {0, 1, 2, 3}}}));
    CHECK(term(a2a, "NIC") == 0);
    CHECK(term(a2a, "inside hosts and NVLink domains") ==
          Approx(7 * (bytes / 8) / nvl).epsilon(1e-9));
}

TEST_CASE("a tensor-parallel group of 4 hosts stays inside one NVLink domain",
          "[placement][nvlink]") {
    // 16 GB200 trays on one switch, in two NVLink domains of 8 (as NvlinkDomain= says).
    auto f = parse_topology_conf("SwitchName=s1 Nodes=n[1-16] LinkSpeed=400\n", "flat.conf");
    REQUIRE(f.ok());
    Fabric fabric = std::move(f).value();
    REQUIRE_FALSE(add_nvlink_domains(fabric, {"n[1-8]", "n[9-16]"}, 0));
    auto gr = ClusterGraph::build(std::move(fabric), {}, input_node("gb200-tray-topo.xml"));
    REQUIRE(gr.ok());
    const ClusterGraph &g = gr.value();
    PlacementEngine engine(g, {}, {}, test::unhurried());
    ClusterState s(g);
    occupy(s, g, {"n1", "n2", "n3", "n4", "n5"});  // n6-n8 free in the first domain
    CommSpec tp;
    tp.tp_size = 16;  // 4 hosts of 4 GPUs
    auto d = pattern_demand(CommPattern::kTensorParallel, 4, 16, tp);
    auto decision = engine.place(d, s);
    REQUIRE(decision.placement);
    const auto &p = *decision.placement;
    INFO(host_list(g, p));
    CHECK(host_list(g, p) == "n[9-12]");
    // Slurm's choice (the lowest free hosts of the switch) splits the group 3 + 1, and
    // its all-reduce then crosses the NICs.
    auto tree = engine.place(d, s, *make_policy("tree-bestfit"));
    REQUIRE(tree.placement);
    CHECK(host_list(g, *tree.placement) == "n[6-9]");
    CHECK(tree.placement->comm_s > 5 * p.comm_s);
    // Slurm's topology/block with the domains as base blocks keeps it whole too.
    auto block = engine.place(d, s, *make_policy("block-bestfit"));
    REQUIRE(block.placement);
    CHECK(host_list(g, *block.placement) == "n[9-12]");
    // A job of 6 hosts in TP groups of 2: block best fit takes the level of both blocks
    // and fills the fuller one first (n9-n14); --segment=2 takes whole segments of each
    // block's free hosts (n6, n7 of the first, as n8 would start a segment alone there).
    CommSpec tp2;
    tp2.tp_size = 8;
    auto d6 = pattern_demand(CommPattern::kTensorParallel, 6, 24, tp2);
    auto b6 = engine.place(d6, s, *make_policy("block-bestfit"));
    REQUIRE(b6.placement);
    CHECK(host_list(g, *b6.placement) == "n[9-14]");
    occupy(s, g, {"n10", "n11", "n12"});  // the second block: n9, n13-n16 free
    auto seg = engine.place(d6, s, *make_policy("block-segment"));
    REQUIRE(seg.placement);
    CHECK(host_list(g, *seg.placement) == "n[6-7,9,13-15]");
}

TEST_CASE("NVL72: a degraded NVLink domain is avoided when a healthy one fits as well",
          "[placement][nvlink]") {
    const ClusterGraph g = nvl72();
    PlacementEngine engine(g, {}, {}, test::unhurried());
    ClusterState s(g);
    // Rack nvl-1-2 (1201-1218, under spine-1) and rack nvl-2-1 (2101-2118, under spine-2) have 6
    // hosts free each, the others none.
    for (int h = 0; h < g.host_count(); ++h) {
        const std::string &n = g.host_name(h);
        bool free = (n >= "node1201" && n <= "node1206") || (n >= "node2101" && n <= "node2106");
        s.usable[h] = free;
        s.free_gpus[h] = free ? 0xf : 0;
    }
    CommSpec tp;
    tp.tp_size = 16;
    auto d = pattern_demand(CommPattern::kTensorParallel, 4, 16, tp);
    auto before = engine.place(d, s);
    REQUIRE(before.placement);
    INFO(host_list(g, *before.placement));
    CHECK(g.host_name(before.placement->hosts[0]).starts_with("node12"));  // first in order

    s.down[host(g, "node1218")] = 1;  // drained in Slurm: rack 2 is degraded
    REQUIRE(s.domain_degraded(g.nvlink_domain(host(g, "node1201"))));
    REQUIRE_FALSE(s.domain_degraded(g.nvlink_domain(host(g, "node2101"))));
    auto after = engine.place(d, s);
    REQUIRE(after.placement);
    INFO(host_list(g, *after.placement));
    for (int h : after.placement->hosts)
        CHECK(g.host_name(h).starts_with("node21"));
    RiskModel risk(g);
    auto in_degraded = gpus_on(g, {{"node1201", {0, 1, 2, 3}}, {"node1202", {0, 1, 2, 3}}});
    auto in_healthy = gpus_on(g, {{"node2101", {0, 1, 2, 3}}, {"node2102", {0, 1, 2, 3}}});
    auto worse = risk.estimate(d, in_degraded, &s);
    CHECK(worse.per_day > 4 * risk.estimate(d, in_healthy, &s).per_day);
    CHECK(worse.worst_domain ==
          g.fabric().nvlink_domains[g.nvlink_domain(host(g, "node1201"))].name);
}

TEST_CASE("NvlinkDomain= adds domains to a fabric that has none", "[topology][nvlink]") {
    auto f = parse_topology_conf("SwitchName=s1 Nodes=n[1-8]\n", "flat.conf");
    REQUIRE(f.ok());
    Fabric fabric = std::move(f).value();
    REQUIRE_FALSE(add_nvlink_domains(fabric, {"n[1-4]", "n[5-8]"}, 7200));
    REQUIRE(fabric.nvlink_domains.size() == 2);
    CHECK(fabric.nvlink_domains[1].hosts.size() == 4);
    CHECK(fabric.nvlink_domains[0].gpu_gbps == 7200);
    auto twice = add_nvlink_domains(fabric, {"n[4-5]"}, 0);
    REQUIRE(twice);
    CHECK(twice->message().find("n4 is in nvlink-1") != std::string::npos);
    auto unknown = add_nvlink_domains(fabric, {"x[1-2]"}, 0);
    REQUIRE(unknown);
    CHECK(unknown->message().find("NvlinkDomain") != std::string::npos);

    auto b =
        parse_topology_conf("BlockName=b1 Nodes=n[1-4]\nBlockName=b2 Nodes=n[5-8]\n", "b.conf");
    REQUIRE(b.ok());
    Fabric blocks = std::move(b).value();
    REQUIRE_FALSE(add_nvlink_domains(blocks, {"blocks"}, 0));
    REQUIRE(blocks.nvlink_domains.size() == 2);
    CHECK(blocks.nvlink_domains[0].name == "b1");
}
