#include "slurm_ai/placement/cost_model.hpp"

#include <catch2/catch.hpp>

#include "placement/placement_fixtures.hpp"

using namespace slurm_ai;
using namespace slurm_ai::test;

namespace {

JobDemand demand(CommPattern p, std::uint64_t bytes, std::uint32_t gpus, std::uint32_t nodes) {
    CommSpec c;
    c.bytes = bytes;
    return pattern_demand(p, nodes, gpus, c);
}

}  // namespace

TEST_CASE("a two-host ring follows the alpha-beta formula", "[cost]") {
    auto g = fat_tree(2, 4, 100, 100);
    CostModel model(g);
    auto d = demand(CommPattern::kAllReduce, 1ull << 30, 0, 2);
    d.comm.algo = "ring";
    auto est = model.estimate(d, hosts_only(g, {"h1", "h2"}));
    const auto &c = model.constants();
    double rate = 100.0 / 8 * c.inter_efficiency * 1e9;                   // bytes/s
    double alpha = c.alpha_inter_s + (2 * 1.0 + 0.13) * 1e-6;             // + path latency
    double expected = 2 * (2 - 1) * (alpha + (1ull << 30) / 2.0 / rate);  // 2(p-1) steps
    CHECK(est.algorithm == "ring");
    CHECK(est.seconds == Approx(expected).epsilon(1e-9));
}

TEST_CASE("all-reduce inside one NVSwitch host beats the same GPUs spread out", "[cost]") {
    auto dgx = node_file("hwloc/nvidiaDGX2.xml");
    auto g = fat_tree(2, 4, 100, 100, dgx);
    CostModel model(g);
    auto d = demand(CommPattern::kAllReduce, 1ull << 30, 8, 1);
    Placement packed;
    packed.hosts = {host(g, "h1")};
    packed.gpus = {{0, 1, 2, 3, 4, 5, 6, 7}};
    Placement spread;
    for (int i = 1; i <= 8; ++i) {
        spread.hosts.push_back(host(g, "h" + std::to_string(i)));
        spread.gpus.push_back({0});
    }
    auto a = model.estimate(d, packed), b = model.estimate(d, spread);
    CHECK(a.seconds > 0);
    CHECK(a.seconds * 5 < b.seconds);
    // Auto picks the fastest algorithm the model knows.
    for (const char *algo : {"ring", "hierarchical", "tree"}) {
        auto named = d;
        named.comm.algo = algo;
        CHECK(model.estimate(named, spread).seconds >= b.seconds - 1e-12);
    }
}

TEST_CASE("slow uplinks make all-to-all across leaves bisection-bound", "[cost]") {
    auto g = fat_tree(2, 4, 100, 25);  // 4:1 oversubscribed
    CostModel model(g);
    auto d = demand(CommPattern::kMoE, 256ull << 20, 0, 4);
    auto one_leaf = model.estimate(d, hosts_only(g, {"h1", "h2", "h3", "h4"}));
    auto two_leaves = model.estimate(d, hosts_only(g, {"h1", "h2", "h5", "h6"}));
    CHECK(two_leaves.seconds > 2 * one_leaf.seconds);
    auto bisection = std::find_if(two_leaves.terms.begin(), two_leaves.terms.end(),
                                  [](auto &t) { return t.first.find("bisection") == 0; });
    REQUIRE(bisection != two_leaves.terms.end());
    CHECK(bisection->second == Approx(two_leaves.seconds - two_leaves.terms.back().second));
}

TEST_CASE("uplink load of other jobs slows flows that cross it", "[cost]") {
    auto g = fat_tree(2, 4, 100, 100);
    CostModel model(g);
    auto d = demand(CommPattern::kAllReduce, 1ull << 30, 0, 2);
    auto p = hosts_only(g, {"h1", "h5"});
    ClusterState busy(g);
    busy.uplink_load[g.host_leaf(host(g, "h1"))] = 0.75;
    CHECK(model.estimate(d, p, &busy).seconds > 3 * model.estimate(d, p).seconds);
    // Within a leaf nothing crosses the uplinks.
    auto local = hosts_only(g, {"h1", "h2"});
    CHECK(model.estimate(d, local, &busy).seconds == Approx(model.estimate(d, local).seconds));
}

TEST_CASE("uplink use: the bytes a ring sends across leaves, over the uplinks' capacity",
          "[cost]") {
    // Two leaves of 4 hosts, 100 Gb/s to hosts and 100 Gb/s up (one spine link each).
    auto g = fat_tree(2, 4, 100, 100);
    CostModel model(g);
    const double bytes = 1ull << 30;
    auto d = demand(CommPattern::kAllReduce, 1ull << 30, 0, 4);
    d.comm.algo = "ring";
    const double up = g.uplink_gbs(g.host_leaf(host(g, "h1"))) *
                      model.constants().inter_efficiency * 1e9;  // bytes/s
    REQUIRE(up == Approx(100.0 / 8 * 0.8 * 1e9));
    // Ring h1 h2 h5 h6: of its 4 edges, h2->h5 goes up out of leaf 1 and h6->h1 comes
    // down into it. Each of the 2(p-1) = 6 steps sends bytes/4 per edge, so each leaf's
    // uplinks carry 6/4 of the bytes each way.
    auto use = model.uplink_use(d, hosts_only(g, {"h1", "h2", "h5", "h6"}));
    REQUIRE(use.size() == 2);
    CHECK(use[0].switch_node == g.host_leaf(host(g, "h1")));
    CHECK(use[1].switch_node == g.host_leaf(host(g, "h5")));
    for (const auto &u : use)
        CHECK(u.busy_s == Approx(6 * bytes / 4 / up).epsilon(1e-9));
    // Alternating leaves: all 4 edges cross, twice each way per leaf.
    auto zigzag = model.uplink_use(d, hosts_only(g, {"h1", "h5", "h2", "h6"}));
    REQUIRE(zigzag.size() == 2);
    CHECK(zigzag[0].busy_s == Approx(2 * 6 * bytes / 4 / up).epsilon(1e-9));
    // The estimate they come from is the one estimate() gives, handed back with them.
    double comm = -1;
    model.uplink_use(d, hosts_only(g, {"h1", "h5", "h2", "h6"}), &comm);
    CHECK(comm == model.estimate(d, hosts_only(g, {"h1", "h5", "h2", "h6"})).seconds);
    CHECK(comm > 0);
    // Inside one leaf, and on one host, nothing crosses.
    CHECK(model.uplink_use(d, hosts_only(g, {"h1", "h2", "h3", "h4"}), &comm).empty());
    CHECK(comm == model.estimate(d, hosts_only(g, {"h1", "h2", "h3", "h4"})).seconds);
    // Auto counts the algorithm it picks: the same bytes here as the ring it chooses
    // (one rank per host makes hierarchical and ring alike), never the sum of all it tried.
    auto any = demand(CommPattern::kAllReduce, 1ull << 30, 0, 4);
    auto picked = model.uplink_use(any, hosts_only(g, {"h1", "h2", "h5", "h6"}));
    REQUIRE(picked.size() == 2);
    CHECK(picked[0].busy_s <= 6 * bytes / 4 / up * (1 + 1e-9));
}

TEST_CASE("uplink use of a pipeline: every micro-batch crosses forward and back", "[cost]") {
    auto g = fat_tree(2, 4, 100, 100);
    CostModel model(g);
    auto d = demand(CommPattern::kPipeline, 64ull << 20, 0, 2);
    d.comm.stages = 2;
    d.comm.microbatches = 8;
    const double up = 100.0 / 8 * model.constants().inter_efficiency * 1e9;
    auto use = model.uplink_use(d, hosts_only(g, {"h1", "h5"}));
    REQUIRE(use.size() == 2);
    for (const auto &u : use)  // 8 micro-batches of 64 MiB, each direction once per leaf
        CHECK(u.busy_s == Approx(8.0 * (64 << 20) / up).epsilon(1e-9));
}

TEST_CASE("pipeline stages on one leaf beat stages alternating across leaves", "[cost]") {
    auto g = fat_tree(2, 4, 100, 25);
    CostModel model(g);
    auto d = demand(CommPattern::kPipeline, 64ull << 20, 0, 4);
    d.comm.stages = 4;
    auto near = model.estimate(d, hosts_only(g, {"h1", "h2", "h3", "h4"}));
    auto alternating = model.estimate(d, hosts_only(g, {"h1", "h5", "h2", "h6"}));
    CHECK(near.algorithm == "pipeline");
    CHECK(near.seconds < alternating.seconds);
}

TEST_CASE("parameter server: the aggregation tree beats one fixed server across leaves", "[cost]") {
    auto g = fat_tree(2, 4, 100, 100);
    CostModel model(g);
    auto d = demand(CommPattern::kParameterServer, 512ull << 20, 0, 8);
    auto est = model.estimate(d, hosts_only(g, {"h1", "h2", "h3", "h4", "h5", "h6", "h7", "h8"}));
    double mst = -1, fixed = -1;
    for (auto &[name, s] : est.terms) {
        if (name.starts_with("aggregation tree"))
            mst = s;
        if (name.starts_with("fixed server"))
            fixed = s;
    }
    REQUIRE(mst > 0);
    REQUIRE(fixed > 0);
    CHECK(mst < fixed);
    CHECK(est.algorithm == "ps:mst");
    CHECK(est.seconds == Approx(mst));
}

TEST_CASE("a DAG's communication time is what transfers add to its critical path", "[cost]") {
    auto g = fat_tree(2, 4, 100, 100);
    CostModel model(g);
    auto dag =
        parse_task_dag(R"({"tasks": [{"name": "a", "compute_s": 1}, {"name": "b", "compute_s": 1},
        {"name": "c", "compute_s": 5}], "edges": [{"from": "a", "to": "b", "bytes": "1G"}]})",
                       "dag");
    REQUIRE(dag.ok());
    JobDemand d = make_demand(JobRequest{3, 3, 0, 0, 1}, JobHints{}, dag.value());
    auto est = model.estimate(d, hosts_only(g, {"h1", "h2", "h3"}));
    // a -> b crosses hosts (about 0.107 s for 1 GiB at 10 GB/s) but c alone takes 5 s:
    // the critical path is c's, so the transfer adds nothing.
    CHECK(est.seconds == Approx(0.0));
    dag.value().tasks[2].compute_s = 0;
    d.dag = dag.value();
    auto est2 = model.estimate(d, hosts_only(g, {"h1", "h2", "h3"}));
    CHECK(est2.seconds == Approx((1ull << 30) / (100.0 / 8 * 0.8 * 1e9)).epsilon(0.01));
}
