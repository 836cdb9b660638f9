// The engine's terms beside its cost and risk models (placement_terms.hpp), computed by
// hand on the NVL72 racks of nvl72.yaml (GB200 trays of 4 GPUs, 18 trays per rack, each
// rack a leaf and an NVLink domain) and on a small oversubscribed fat tree.
#include <cmath>

#include <catch2/catch.hpp>

#include "placement/placement_fixtures.hpp"
#include "slurm_ai/config/plugin_config.hpp"
#include "slurm_ai/placement/placement_engine.hpp"
#include "slurm_ai/placement/placement_terms.hpp"
#include "search_budget.hpp"

using namespace slurm_ai;
using namespace slurm_ai::test;

namespace {

// Only the named trays are usable, with the GPUs given free (mask), the rest taken.
ClusterState only(const ClusterGraph &g, std::initializer_list<std::pair<const char *, GpuMask>> free) {
    ClusterState s(g);
    for (int h = 0; h < g.host_count(); ++h) {
        s.usable[h] = 0;
        s.free_gpus[h] = 0;
    }
    for (const auto &[name, mask] : free) {
        s.usable[host(g, name)] = 1;
        s.free_gpus[host(g, name)] = mask;
    }
    return s;
}

Placement tray(const ClusterGraph &g, const char *name, std::vector<int> gpus) {
    Placement p;
    p.hosts.push_back(host(g, name));
    p.gpus.push_back(std::move(gpus));
    return p;
}

}  // namespace

TEST_CASE("destroyed capacity: splitting a rack the queue wants whole costs its size",
          "[placement][terms]") {
    const ClusterGraph g = nvl72_racks();
    // Rack 1101-1118 has two whole trays free (8 GPUs), rack 1201-1218 three (12 GPUs).
    ClusterState s = only(g, {{"node1101", 0xf}, {"node1102", 0xf}, {"node1201", 0xf},
                              {"node1202", 0xf}, {"node1203", 0xf}});
    const Placement in_a = tray(g, "node1101", {0, 1, 2, 3});
    const Placement in_b = tray(g, "node1201", {0, 1, 2, 3});
    CHECK(destroyed_capacity(s, in_a) == 0);  // nothing waits: no preference

    // An 8-GPU job waits. Rack A: 8 free hold one such job, 4 after the placement hold
    // none: 8 x (1 - 0) = 8 GPUs lost. Rack B: 12 free hold one, 8 after still one: 0.
    // A tray (4 GPUs) can never hold 8, so the hosts add nothing.
    s.wanted = {{8, 1}};
    CHECK(destroyed_capacity(s, in_a) == Approx(8));
    CHECK(destroyed_capacity(s, in_b) == Approx(0));

    // Two 4-GPU jobs wait as well (weight 2): each placement takes one whole tray, 4 x 2 x
    // (1 - 0) = 8 at the host; in the rack, A: 4 x 2 x (2 - 1) = 8, B: 4 x 2 x (3 - 2) = 8.
    s.wanted = {{8, 1}, {4, 2}};
    CHECK(destroyed_capacity(s, in_a) == Approx(8 + 8 + 8));
    CHECK(destroyed_capacity(s, in_b) == Approx(0 + 8 + 8));

    // One GPU of a whole tray: the tray no longer holds a 4-GPU job (4 x 2 = 8); the rack
    // still holds as many 4-GPU jobs (8 -> 7 free: 2 -> 1 for A, 12 -> 11: 3 -> 2 for B).
    s.wanted = {{4, 2}};
    const Placement one = tray(g, "node1101", {0});
    CHECK(destroyed_capacity(s, one) == Approx(8 + 8));
}

TEST_CASE("destroyed capacity: a size that fixes its GPUs per host counts whole hosts",
          "[placement][terms]") {
    const ClusterGraph g = nvl72_racks();
    // Rack A: trays 1101 and 1102 whole, 1103 with 2 free; one NVLink domain.
    const ClusterState base = only(g, {{"node1101", 0xf}, {"node1102", 0xf}, {"node1103", 0x3}});
    Placement two_trays;  // 2 GPUs on each whole tray
    two_trays.hosts = {host(g, "node1101"), host(g, "node1102")};
    two_trays.gpus = {{0, 1}, {0, 1}};
    const Placement packed = tray(g, "node1101", {0, 1, 2, 3});
    ClusterState s = base;
    // Two jobs of -N1 --gpus-per-node=4 wait (4 GPUs on 1 host each). Before: the
    // domain's hosts with 4 free hold 2 such jobs. The packed placement leaves one
    // (2 - 1) x 4 x 2 = 8; two trays broken leave none: (2 - 0) x 4 x 2 = 16. A size
    // Slurm may split counts free GPUs instead, so the two tie at the domain for it.
    s.wanted = {{4, 2, 4, 1}};
    CHECK(destroyed_capacity(s, packed) == Approx(8));
    CHECK(destroyed_capacity(s, two_trays) == Approx(16));
    // -N2 --gpus-per-node=2 (4 GPUs on 2 distinct hosts, 2 each): before, 1101 and 1102
    // hold 2 parts each and 1103 one: 2 jobs. After the packed placement 1102 holds 2 and
    // 1103 one: 1 job, (2 - 1) x 4 = 4. After two_trays, three hosts of one part: 1 job,
    // also 4.
    s.wanted = {{4, 1, 2, 2}};
    CHECK(destroyed_capacity(s, packed) == Approx(4));
    CHECK(destroyed_capacity(s, two_trays) == Approx(4));
    // -N3 --gpus-per-node=2: before, 1 job (2, 2 and 1 parts, but each job needs three
    // distinct hosts: for 2 jobs min(2,2) + min(2,2) + min(1,2) = 5 < 6). Packed: 1102 and
    // 1103 are left, two hosts: 0 jobs, (1 - 0) x 6 = 6. two_trays: three hosts of one
    // part, 1 job: 0.
    s.wanted = {{6, 1, 2, 3}};
    CHECK(destroyed_capacity(s, packed) == Approx(6));
    CHECK(destroyed_capacity(s, two_trays) == Approx(0));
    // The list is the caller's: ClusterState::recent's sizes counted alike.
    ClusterState r = base;
    r.recent = {{4, 2, 4, 1}};
    CHECK(destroyed_capacity(r, two_trays) == 0);  // nothing waits
    CHECK(destroyed_capacity(r, two_trays, r.recent) == Approx(16));
}

TEST_CASE("sizes are counted once per kind, in one order", "[placement][terms]") {
    std::vector<ClusterState::WantedSize> sizes;
    const JobDemand split = make_demand(JobRequest{1, 4, 0, 8, 8}, JobHints{});
    const JobDemand per_node = make_demand(JobRequest{2, 2, 4, 8, 8}, JobHints{});
    ClusterState::count_size(sizes, ClusterState::size_of(8, per_node));
    ClusterState::count_size(sizes, ClusterState::size_of(8, split));
    ClusterState::count_size(sizes, ClusterState::size_of(8, per_node));
    ClusterState::count_size(sizes, ClusterState::size_of(2, split));
    REQUIRE(sizes.size() == 3);
    CHECK(sizes[0].gpus == 2);
    CHECK((sizes[1].gpus == 8 && sizes[1].per_host == 0 && sizes[1].weight == 1));
    CHECK((sizes[2].per_host == 4 && sizes[2].hosts == 2 && sizes[2].weight == 2));
}

TEST_CASE("the engine keeps a rack whole for the size that waits, best fit otherwise",
          "[placement][terms][engine]") {
    const ClusterGraph g = nvl72_racks();
    PlacementEngine engine(g, {}, {}, test::unhurried());
    ClusterState s = only(g, {{"node1101", 0xf}, {"node1102", 0xf}, {"node1201", 0xf},
                              {"node1202", 0xf}, {"node1203", 0xf}});
    const JobDemand four = make_demand(JobRequest{1, 1, 4, 4, 1}, JobHints{});
    // Nothing waits: the tightest rack (A, 2 trays free), as tree best fit.
    auto alone = engine.place(four, s);
    REQUIRE(alone.placement);
    CHECK(g.host_name(alone.placement->hosts[0]).starts_with("node11"));
    // An 8-GPU job waits: rack B, which still holds it afterwards.
    s.wanted = {{8, 1}};
    auto kept = engine.place(four, s);
    REQUIRE(kept.placement);
    CHECK(g.host_name(kept.placement->hosts[0]).starts_with("node12"));
    // Slurm's policies do not look.
    auto tree = engine.place(four, s, *make_policy("tree-bestfit"));
    REQUIRE(tree.placement);
    CHECK(g.host_name(tree.placement->hosts[0]).starts_with("node11"));

    // A third rack with four trays free keeps the 8-GPU job's room too: of the two that
    // take nothing from it, the tighter (B). The engine does not score a rival that takes
    // no less than its best at the ideal; what it keeps carries score()'s figures.
    s = only(g, {{"node1101", 0xf}, {"node1102", 0xf}, {"node2101", 0xf}, {"node2102", 0xf},
                 {"node2103", 0xf}, {"node2104", 0xf}, {"node1201", 0xf}, {"node1202", 0xf},
                 {"node1203", 0xf}});
    s.wanted = {{8, 1}};
    auto tight = engine.place(four, s);
    REQUIRE(tight.placement);
    CHECK(g.host_name(tight.placement->hosts[0]).starts_with("node12"));
    Placement rescored = *tight.placement;
    engine.score(four, &s, rescored);
    CHECK(tight.placement->comm_s == rescored.comm_s);
    CHECK(tight.placement->efficiency == rescored.efficiency);
    CHECK(tight.placement->risk == rescored.risk);
    CHECK(tight.placement->risk > 0);
}

TEST_CASE("GPUs by count: the engine takes the tray that fits tightest, keeping whole ones whole",
          "[placement][terms][engine]") {
    const ClusterGraph g = nvl72_racks();
    PlacementEngine engine(g, {}, {}, test::unhurried());
    // One rack: a whole tray, and a tray with one GPU free.
    ClusterState s = only(g, {{"node1101", 0xf}, {"node1102", 0x8}});
    const JobDemand one = make_demand(JobRequest{1, 2, 0, 1, 1}, JobHints{});  // --gpus=1
    auto e = engine.place(one, s);
    REQUIRE(e.placement);
    CHECK(g.host_name(e.placement->hosts[0]) == "node1102");
    CHECK(e.placement->gpus[0] == std::vector<int>{3});
    auto tree = engine.place(one, s, *make_policy("tree-bestfit"));
    REQUIRE(tree.placement);
    CHECK(g.host_name(tree.placement->hosts[0]) == "node1101");  // the fullest first
    // Five GPUs: the whole tray, then the one that finishes it (not two partial trays).
    s = only(g, {{"node1101", 0xf}, {"node1102", 0x3}, {"node1103", 0x1}});
    auto five = engine.place(make_demand(JobRequest{1, 2, 0, 5, 1}, JobHints{}), s);
    REQUIRE(five.placement);
    CHECK(host_list(g, *five.placement) == "node[1101,1103]");
}

TEST_CASE("failure evidence: the risk term's weight follows what has failed",
          "[placement][terms][risk]") {
    const ClusterGraph g = nvl72_racks();
    ClusterState s(g);
    const double rate = 1e-3;
    // Steady state of a host failing at the base rate: a weekly count of 7 x 1e-3 / ln 2.
    const double per_host = rate * 7 / std::log(2.0);
    const double hosts = g.host_count();
    CHECK(failure_evidence(s, rate) == 0);
    // 72 trays: 72 x 1e-3 x 7 / ln 2 = 0.727 failures' worth of weekly count in steady state.
    REQUIRE(hosts == 72);
    s.failures[host(g, "node1201")] = 0.2;
    CHECK(failure_evidence(s, rate) == Approx(0.2 / (hosts * per_host)));
    s.failures[host(g, "node2101")] = 0.3;
    CHECK(failure_evidence(s, rate) == Approx(0.5 / (hosts * per_host)));
    s.down[host(g, "node1101")] = 1;  // a host down or drained counts one failure: 1.5 > 0.727
    CHECK(failure_evidence(s, rate) == 1);  // at most 1
}

TEST_CASE("the engine holds a job while waiting costs less than its placement now",
          "[placement][terms][engine]") {
    auto g = fat_tree(2, 4, 100, 25);  // 4:1 oversubscribed leaves
    PlacementEngine engine(g, {}, {}, test::unhurried());
    ClusterState s(g);
    occupy(s, g, {"h1", "h2", "h3", "h5", "h6", "h7"});  // one free host per leaf
    JobDemand d = pattern_demand(CommPattern::kAllReduce, 2);
    // No time limit: never held (Slurm's INFINITE, or a caller that does not say).
    auto now = engine.place(d, s);
    REQUIRE(now.placement);
    const double eff = now.placement->efficiency;
    REQUIRE(eff < 0.9);
    // Held for time limit x 0.5 x (1/eff - 1).
    d.time_limit_s = 3600;
    const double hold = 3600 * 0.5 * (1 / eff - 1);
    CHECK(hold_for_s(d, eff, 0.5) == Approx(hold));
    auto held = engine.place(d, s);
    CHECK_FALSE(held.placement);
    CHECK(held.wait);
    CHECK_THAT(held.reason, Catch::Contains("held for placement") &&
                                Catch::Contains(std::to_string(static_cast<long>(hold))));
    // The hold runs from the first test that held it: time in the queue before that
    // (behind other jobs) bought the placement nothing.
    d.pending_s = static_cast<std::uint32_t>(hold) * 10;
    CHECK(engine.place(d, s).wait);
    d.held_s = static_cast<std::uint32_t>(hold) - 1;
    CHECK(engine.place(d, s).wait);
    d.held_s = static_cast<std::uint32_t>(hold) + 1;
    auto later = engine.place(d, s);
    REQUIRE(later.placement);
    // A placement as good as the cluster allows is never held.
    ClusterState empty(g);
    d.pending_s = d.held_s = 0;
    auto whole = engine.place(d, empty);
    REQUIRE(whole.placement);
    CHECK(whole.placement->efficiency == Approx(1));
    // Nor when the engine is told not to hold.
    EngineOptions never;
    never.hold_comm_share = 0;
    PlacementEngine patient(g, {}, {}, test::unhurried(never));
    CHECK(patient.place(d, s).placement);
}

TEST_CASE("ai_select.conf: PlacementHold and CommShare set how long the engine holds a job",
          "[placement][terms][config]") {
    auto def = parse_plugin_config("", "/etc/slurm/ai_select.conf", "/etc/slurm/topology.conf");
    REQUIRE(def.ok());
    CHECK(def->placement_hold);
    CHECK(def->engine.hold_comm_share == 0.5);
    auto share = parse_plugin_config("CommShare=0.3\n", "a.conf", "t.conf");
    REQUIRE(share.ok());
    CHECK(share->engine.hold_comm_share == 0.3);
    auto off = parse_plugin_config("placementhold=No\nCommShare=0.3\n", "a.conf", "t.conf");
    REQUIRE(off.ok());
    CHECK_FALSE(off->placement_hold);
    CHECK(off->engine.hold_comm_share == 0);
    auto bad = parse_plugin_config("\nPlacementHold=sometimes\n", "a.conf", "t.conf");
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().line == 2);
    CHECK(bad.error().field == "PlacementHold");
    CHECK_THAT(bad.error().message(), Catch::Contains("sometimes"));
    auto contrib = load_plugin_config(
        std::string(SLURM_AI_CONTRIB) + "/slurm.conf.d/ai_select.conf", "/etc/slurm/topology.conf");
    REQUIRE(contrib.ok());
    CHECK(contrib->placement_hold);
}
