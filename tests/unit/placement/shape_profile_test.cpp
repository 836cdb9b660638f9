#include "slurm_ai/placement/shape_profile.hpp"

#include <algorithm>

#include <catch2/catch.hpp>

#include "placement/placement_fixtures.hpp"
#include "slurm_ai/placement/placement_engine.hpp"
#include "search_budget.hpp"

using namespace slurm_ai;
using namespace slurm_ai::test;

namespace {

ShapeProfile parsed(const std::string &text) {
    auto p = parse_shape_profile(text, "shapes.csv");
    INFO((p ? std::string() : p.error().message()));
    REQUIRE(p);
    return std::move(p).value();
}

InputError refused(const std::string &text) {
    auto p = parse_shape_profile(text, "shapes.csv");
    REQUIRE_FALSE(p);
    return p.error();
}

// GPUs per host of a placement, largest first.
std::vector<int> shape_of(const Placement &p) {
    std::vector<int> out;
    for (const auto &g : p.gpus)
        if (!g.empty())
            out.push_back(static_cast<int>(g.size()));
    std::sort(out.begin(), out.end(), std::greater<>());
    return out;
}

// --gpus=G, which Slurm may split over up to G nodes.
JobDemand split_gpus(std::uint32_t gpus) {
    return make_demand(JobRequest{1, gpus, 0, gpus, gpus}, {});
}

// The T4 hosts of the measurement testbed, `leaves` x `per_leaf` of them.
ClusterGraph g4dn_hosts(int leaves, int per_leaf) {
    return fat_tree(leaves, per_leaf, 50, 50, input_node("g4dn-12xlarge-topo.xml"));
}

}  // namespace

TEST_CASE("a shape profile compares each GPU count's shapes with its fastest", "[shapes]") {
    // Two rows of 4+4 (in two spellings) average to 3.0; 8 GPUs' fastest is 2222 at 2.0.
    const auto p = parsed("gpus_per_host,shape,step\n"
                          "4,44,2.8\n"
                          "4,4+4,3.2\n"
                          "4,2222,2.0\n"
                          "4,431,2.2\n"
                          "4,4,1.0\n"
                          "8,8+8,5\n");
    CHECK(p.size() == 5);
    CHECK(p.host_sizes() == std::vector<int>{4, 8});
    CHECK(p.ratio(4, {4, 4}) == Approx(1.5));
    CHECK(p.ratio(4, {2, 2, 2, 2}) == Approx(1.0));
    CHECK(p.ratio(4, {1, 3, 4}) == Approx(1.1));  // any order
    CHECK(p.ratio(4, {4}) == Approx(1.0));        // the only shape of 4 GPUs
    CHECK(p.ratio(8, {8, 8}) == Approx(1.0));
    // Not profiled: the mean of the shapes with the nearest host count.
    CHECK(p.ratio(4, {3, 3, 2}) == Approx(1.1));              // 3 hosts: 431
    CHECK(p.ratio(4, {2, 2, 1, 1, 1, 1}) == Approx(1.0));     // 4 hosts: 2222
    CHECK_FALSE(p.ratio(4, {3, 3}).has_value());  // 6 GPUs: nothing profiled
    CHECK_FALSE(p.ratio(2, {1, 1}).has_value());
    const auto order = p.fastest(4, 8);
    REQUIRE(order.size() == 3);
    CHECK(order[0].first == std::vector<int>{2, 2, 2, 2});
    CHECK(order[1].first == std::vector<int>{4, 3, 1});
    CHECK(order[2].first == std::vector<int>{4, 4});
    // What csv() writes reads back to the same ratios.
    const auto again = parsed(p.csv());
    CHECK(again.ratio(4, {4, 4}) == Approx(1.5));
    CHECK(again.size() == p.size());
}

TEST_CASE("a shape profile that does not read names the line, field and value", "[shapes]") {
    const std::string head = "gpus_per_host,shape,step\n";
    auto e = refused("gpus,shape,step\n4,44,1\n");
    CHECK(e.field == "header");
    CHECK_THAT(e.expected, Catch::Contains("gpus_per_host"));
    CHECK(e.source == "shapes.csv");
    e = refused(head + "4,44,1\n4,40,1\n");
    CHECK(e.field == "shape");
    CHECK(e.value == "40");
    CHECK(e.line == 3);
    CHECK_THAT(e.message(), Catch::StartsWith("shapes.csv:3: shape='40'"));
    e = refused(head + "4,8+8,1\n");
    CHECK(e.field == "shape");
    CHECK_THAT(e.expected, Catch::Contains("gpus_per_host (4)"));
    e = refused(head + "4,4+,1\n");
    CHECK(e.value == "4+");
    e = refused(head + "0,1,1\n");
    CHECK(e.field == "gpus_per_host");
    e = refused(head + "4,44,-1\n");
    CHECK(e.field == "step");
    e = refused(head + "4,44,inf\n");
    CHECK(e.field == "step");
    e = refused(head + "4,44,1,2\n");
    CHECK(e.field == "row");
    e = refused(head);
    CHECK_THAT(e.expected, Catch::Contains("at least one row"));
    CHECK_FALSE(load_shape_profile("/nonexistent/shapes.csv"));
}

TEST_CASE("with a profile the engine spreads a job in the shape measured fastest", "[shapes]") {
    const auto g = g4dn_hosts(1, 4);
    ClusterState s(g);
    const auto job = split_gpus(8);
    const PlacementEngine plain(g, {}, {}, test::unhurried());
    auto by_model = plain.place(job, s);
    REQUIRE(by_model.placement);
    CHECK(shape_of(*by_model.placement) == std::vector<int>{4, 4});  // the fewest hosts

    // Measured: two hosts of 4 run 1.5 times as long as four of 2.
    EngineOptions o;
    o.shape_profile = std::make_shared<ShapeProfile>(
        parsed("gpus_per_host,shape,step\n4,44,1.5\n4,2222,1.0\n4,431,1.3\n"));
    const PlacementEngine measured(g, {}, {}, test::unhurried(o));
    auto d = measured.place(job, s);
    REQUIRE(d.placement);
    CHECK(shape_of(*d.placement) == std::vector<int>{2, 2, 2, 2});
    CHECK(d.placement->rank_count() == 8);

    // A host with only 3 GPUs free: 2222 still fits, on the other three and it.
    std::vector<int> gpus_free{0, 1, 2};
    s.free_gpus[host(g, "h1")] = 0;
    for (int gpu : gpus_free)
        s.free_gpus[host(g, "h1")] |= 1u << gpu;
    d = measured.place(job, s);
    REQUIRE(d.placement);
    CHECK(shape_of(*d.placement) == std::vector<int>{2, 2, 2, 2});

    // A job that fixes its shape (-N2 --gpus-per-node=4) keeps it.
    ClusterState empty(g);
    auto fixed = measured.place(make_demand(JobRequest{2, 2, 4, 8, 8}, {}), empty);
    REQUIRE(fixed.placement);
    CHECK(shape_of(*fixed.placement) == std::vector<int>{4, 4});

    // Where the profile measures 44 fastest, the engine keeps it.
    o.shape_profile = std::make_shared<ShapeProfile>(
        parsed("gpus_per_host,shape,step\n4,44,1.0\n4,2222,1.2\n"));
    const PlacementEngine packed(g, {}, {}, test::unhurried(o));
    auto p = packed.place(job, empty);
    REQUIRE(p.placement);
    CHECK(shape_of(*p.placement) == std::vector<int>{4, 4});
}

TEST_CASE("a measured shape is kept under one leaf switch where one holds it", "[shapes]") {
    // Two leaves of 4 hosts; leaf1 has 2 free GPUs on each host, leaf2 all free.
    const auto g = g4dn_hosts(2, 4);
    ClusterState s(g);
    for (const char *h : {"h1", "h2", "h3", "h4"})
        s.free_gpus[host(g, h)] = 0x3;
    EngineOptions o;
    o.shape_profile = std::make_shared<ShapeProfile>(
        parsed("gpus_per_host,shape,step\n4,44,1.5\n4,2222,1.0\n"));
    const PlacementEngine measured(g, {}, {}, test::unhurried(o));
    auto d = measured.place(split_gpus(8), s);
    REQUIRE(d.placement);
    CHECK(shape_of(*d.placement) == std::vector<int>{2, 2, 2, 2});
    std::set<int> leaves;
    for (int h : d.placement->hosts)
        leaves.insert(g.host_leaf(h));
    CHECK(leaves.size() == 1);
    // The tightest leaf: leaf1's hosts, whose 2 free GPUs each it takes whole.
    for (int h : d.placement->hosts)
        CHECK(g.host_leaf(h) == g.host_leaf(host(g, "h1")));
}

TEST_CASE("a measured shape takes no more room than best fit for the sizes waiting and asked "
          "lately", "[shapes][terms]") {
    // One leaf of 4 hosts, every GPU free; measured, 2222 runs 1.5 times as fast as 44.
    const auto g = g4dn_hosts(1, 4);
    EngineOptions o;
    o.shape_profile = std::make_shared<ShapeProfile>(
        parsed("gpus_per_host,shape,step\n4,44,1.5\n4,2222,1.0\n"));
    const PlacementEngine measured(g, {}, {}, test::unhurried(o));
    const auto job = split_gpus(8);
    ClusterState s(g);
    // Lately, 2-GPU jobs Slurm may split (weight 5): 44 and 2222 take as much of their
    // room, 16 GPUs x 5 each (at the hosts 2 x (2 - 0) x 2 against 4 x (2 - 1) x 2, in the
    // leaf (8 - 4) x 2 for both): the measured shape.
    s.recent = {{2, 5}};
    auto d = measured.place(job, s);
    REQUIRE(d.placement);
    CHECK(shape_of(*d.placement) == std::vector<int>{2, 2, 2, 2});
    // Lately, three jobs of one whole host (-N1 --gpus-per-node=4): 44 leaves 2 whole
    // hosts, (4 - 2) x 4 x 3 = 24 GPUs of their room; 2222 leaves none, 48. Best fit's.
    s.recent = {{4, 3, 4, 1}};
    d = measured.place(job, s);
    REQUIRE(d.placement);
    CHECK(shape_of(*d.placement) == std::vector<int>{4, 4});
    // The same sizes waiting in the queue instead.
    s.recent.clear();
    s.wanted = {{4, 3, 4, 1}};
    d = measured.place(job, s);
    REQUIRE(d.placement);
    CHECK(shape_of(*d.placement) == std::vector<int>{4, 4});
    // The job itself, counted in the queue and the history by its caller, is not a
    // reason to keep its own room: with only it seen, the measured shape.
    s.wanted = {{8, 1}};
    s.recent = {{8, 1}};
    d = measured.place(job, s);
    REQUIRE(d.placement);
    CHECK(shape_of(*d.placement) == std::vector<int>{2, 2, 2, 2});
    // Without a profile the lists only break ties: 44 either way.
    const PlacementEngine plain(g, {}, {}, test::unhurried());
    s.recent = {{2, 5}};
    auto p = plain.place(job, s);
    REQUIRE(p.placement);
    CHECK(shape_of(*p.placement) == std::vector<int>{4, 4});
}
