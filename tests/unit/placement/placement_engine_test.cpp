#include "slurm_ai/placement/placement_engine.hpp"

#include <set>

#include <catch2/catch.hpp>

#include "placement/placement_fixtures.hpp"
#include "search_budget.hpp"

using namespace slurm_ai;
using namespace slurm_ai::test;

namespace {

JobDemand gpu_job(std::uint32_t nodes, std::uint32_t per_node, std::optional<CommSpec> comm = {}) {
    JobHints hints;
    hints.comm = comm;
    return make_demand(JobRequest{nodes, nodes, per_node, nodes * per_node, 1}, hints);
}

}  // namespace

TEST_CASE("every policy places a job and the engine is never less efficient", "[engine]") {
    auto g = fat_tree(3, 4, 200, 200, node_file("nccl-topo/ndv4-topo.xml"));
    PlacementEngine engine(g, {}, {}, test::unhurried());
    ClusterState s(g);
    occupy(s, g, {"h1", "h2", "h5"});  // leaf1: 2 free, leaf2: 3 free, leaf3: 4 free
    auto d = gpu_job(3, 8);
    std::map<std::string, Placement> got;
    for (const auto &policy : PlacementEngine::policies()) {
        auto dec = engine.place(d, s, *make_policy(policy));
        INFO(policy << ": " << dec.reason);
        REQUIRE(dec.placement);
        auto &p = *dec.placement;
        CHECK(p.policy == policy);
        CHECK(p.hosts.size() == 3);
        CHECK(p.rank_count() == 24);
        CHECK(p.efficiency >= 0);
        CHECK(p.efficiency <= 1);
        for (int h : p.hosts)
            CHECK(s.usable[h]);
        got[policy] = p;
    }
    // Slurm's default takes the first free hosts: two on leaf1, one on leaf2.
    CHECK(leaves_of(g, got["slurm-default"]).size() == 2);
    // Best fit: the leaf with exactly three free hosts, leaf3 stays whole.
    CHECK(leaves_of(g, got["tree-bestfit"]) == std::set<int>{g.host_leaf(host(g, "h6"))});
    CHECK(got["engine"].efficiency >= got["tree-bestfit"].efficiency);
    CHECK(got["tree-bestfit"].efficiency > got["slurm-default"].efficiency);
    CHECK(got["engine"].efficiency == Approx(1.0));
}

TEST_CASE("a work budget bounds the search without reading a clock", "[engine]") {
    auto g = fat_tree(3, 4, 200, 200, node_file("nccl-topo/ndv4-topo.xml"));
    ClusterState s(g);
    occupy(s, g, {"h1", "h2", "h5"});
    const auto d = gpu_job(3, 8);
    // A clock that counts its reads and moves 1 ms at each.
    int reads = 0;
    Clock counting{[] { return 1.7e9; }, [&reads] { return static_cast<double>(++reads); }};
    PlacementEngine timed(g, {}, {}, EngineOptions{}, counting);
    const auto by_time = timed.place(d, s);
    REQUIRE(by_time.placement);
    CHECK(reads > 2);  // the search watched its deadline
    EngineOptions work;
    work.work_budget = 1000;
    reads = 0;
    PlacementEngine counted(g, {}, {}, work, counting);
    const auto by_work = counted.place(d, s);
    REQUIRE(by_work.placement);
    CHECK(reads == 2);  // the decision's start and end, for decision_ms
    CHECK(by_work.placement->decision_ms == 1);
    CHECK(by_work.placement->hosts == by_time.placement->hosts);
    // A fixed clock: the decision takes no time.
    PlacementEngine still(g, {}, {}, work, fixed_clock(1.7e9));
    CHECK(still.place(d, s).placement->decision_ms == 0);
}

TEST_CASE("GPUs inside a host follow the NVLink pairs", "[engine]") {
    auto p8 = node_file("hwloc/power8gpudistances.xml");
    REQUIRE(p8.gpus.size() == 4);
    auto g = fat_tree(1, 2, 100, 100, p8);
    PlacementEngine engine(g, {}, {}, test::unhurried());
    ClusterState s(g);
    int h1 = host(g, "h1");
    occupy(s, g, {"h2"});
    s.free_gpus[h1] &= ~GpuMask{1};  // GPU 0 busy: 1 is left without its NVLink partner
    auto dec = engine.place(gpu_job(1, 2), s);
    REQUIRE(dec.placement);
    auto gpus = dec.placement->gpus[0];
    std::sort(gpus.begin(), gpus.end());
    CHECK(gpus == std::vector<int>{2, 3});
    CHECK(p8.path(2, 3) == PathType::kNVLink);
    // Slurm's default takes the lowest free GPUs, which are not linked.
    auto slurm = engine.place(gpu_job(1, 2), s, *make_policy("slurm-default"));
    REQUIRE(slurm.placement);
    CHECK(slurm.placement->gpus[0] == std::vector<int>{1, 2});
    CHECK(slurm.placement->efficiency < dec.placement->efficiency);
}

TEST_CASE("ranks of a host are contiguous and hosts are grouped by leaf", "[engine]") {
    auto g = fat_tree(2, 4, 100, 100, node_file("nccl-topo/ndv4-topo.xml"));
    PlacementEngine engine(g, {}, {}, test::unhurried());
    ClusterState s(g);
    occupy(s, g, {"h1", "h2", "h5"});  // two free on leaf1, three on leaf2
    auto dec = engine.place(gpu_job(4, 8), s);
    REQUIRE(dec.placement);
    auto ranks = dec.placement->ranks();
    REQUIRE(ranks.size() == 32);
    std::set<int> finished;
    for (std::size_t r = 1; r < ranks.size(); ++r)
        if (ranks[r].host != ranks[r - 1].host) {
            CHECK_FALSE(finished.count(ranks[r].host));
            finished.insert(ranks[r - 1].host);
        }
    int changes = 0;
    for (std::size_t r = 1; r < ranks.size(); ++r)
        changes += g.host_leaf(ranks[r].host) != g.host_leaf(ranks[r - 1].host);
    CHECK(changes == 1);  // one host of leaf1, then the three of leaf2
}

TEST_CASE("locality: hard waits for a compact placement, soft waits a while", "[engine]") {
    auto g = fat_tree(2, 4, 100, 25);
    PlacementEngine engine(g, {}, {}, test::unhurried());
    ClusterState s(g);
    occupy(s, g, {"h1", "h2", "h5", "h6"});  // two free hosts per leaf
    JobHints hints;
    hints.comm = CommSpec{};
    hints.comm->pattern = CommPattern::kMoE;
    JobRequest req{3, 3, 0, 0, 1};

    hints.locality = LocalitySpec{true, 0};
    auto hard = engine.place(make_demand(req, hints), s);
    CHECK_FALSE(hard.placement);
    CHECK(hard.wait);
    CHECK_THAT(hard.reason, Catch::Contains("hard locality"));

    hints.locality = LocalitySpec{false, 600};
    auto d = make_demand(req, hints);
    auto soft = engine.place(d, s);
    CHECK(soft.wait);
    CHECK_THAT(soft.reason, Catch::Contains("soft locality"));
    d.pending_s = 601;
    auto later = engine.place(d, s);
    REQUIRE(later.placement);
    CHECK(later.placement->efficiency < 0.9);

    hints.locality.reset();
    auto free_to_go = engine.place(make_demand(req, hints), s);
    CHECK(free_to_go.placement);
}

TEST_CASE("job shapes: hosts only, a GPU count, and what does not fit", "[engine]") {
    auto g = fat_tree(2, 4, 100, 100, node_file("nccl-topo/ndv4-topo.xml"));
    PlacementEngine engine(g, {}, {}, test::unhurried());
    ClusterState s(g);
    auto cpu = engine.place(make_demand(JobRequest{2, 2, 0, 0, 2}, JobHints{}), s);
    REQUIRE(cpu.placement);
    CHECK(cpu.placement->hosts.size() == 2);
    CHECK(cpu.placement->rank_count() == 2);

    s.free_gpus[host(g, "h1")] = all_gpus(4);  // h1 has 4 GPUs free, the rest 8
    auto flexible = engine.place(make_demand(JobRequest{1, 2, 0, 12, 1}, JobHints{}), s);
    REQUIRE(flexible.placement);
    CHECK(flexible.placement->rank_count() == 12);
    CHECK(flexible.placement->hosts.size() == 2);

    auto too_big = engine.place(make_demand(JobRequest{9, 9, 8, 72, 1}, JobHints{}), s);
    CHECK_FALSE(too_big.placement);
    CHECK_FALSE(too_big.wait);
    CHECK_THAT(too_big.reason, Catch::Contains("not enough free GPUs"));
    // Policies are made once by name; an unknown name is refused, passthrough places nothing.
    CHECK_FALSE(make_policy("magic"));
    auto none = engine.place(make_demand(JobRequest{1, 1, 0, 1, 1}, JobHints{}), s,
                             *make_policy("passthrough"));
    CHECK_FALSE(none.placement);
    CHECK_FALSE(none.wait);
    CHECK(none.reason == "Policy=passthrough");
}

TEST_CASE("allocating and releasing a placement round-trips the free view", "[engine]") {
    auto g = fat_tree(1, 2, 100, 100, node_file("nccl-topo/ndv4-topo.xml"));
    PlacementEngine engine(g, {}, {}, test::unhurried());
    ClusterState s(g);
    auto before = s.free_gpus;
    auto dec = engine.place(make_demand(JobRequest{1, 1, 4, 4, 1}, JobHints{}), s);
    REQUIRE(dec.placement);
    s.allocate(*dec.placement);
    CHECK(s.free_gpu_count(dec.placement->hosts[0]) == 4);
    s.release(*dec.placement);
    CHECK(s.free_gpus == before);
}

TEST_CASE("GPU lists: parse_gpu_list reads what gpu_list writes, and refuses the rest",
          "[placement]") {
    const auto g = test::nvl72_racks();
    Placement p;
    p.hosts = {0, 1, 2};
    p.gpus = {{0, 1}, {3}, {}};  // the last a host rank: its name alone
    const std::string text = gpu_list(g, p);
    const auto back = parse_gpu_list(text);
    REQUIRE(back);
    REQUIRE(back->size() == 3);
    for (std::size_t i = 0; i < 3; ++i) {
        CHECK((*back)[i].first == g.host_name(p.hosts[i]));
        CHECK((*back)[i].second == p.gpus[i]);
    }
    CHECK(parse_gpu_list("")->empty());
    CHECK_FALSE(parse_gpu_list("n1:0,x"));
    CHECK_FALSE(parse_gpu_list("n1:0,,1"));
    CHECK_FALSE(parse_gpu_list(":0"));
}
