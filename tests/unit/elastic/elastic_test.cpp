// Elastic resize: which hosts a grow adds and a shrink releases (on the cost model), the
// automatic policy of ai-elasticd, the job's view files, the daemon's state file, and the
// select service's placement of elastic and expansion jobs.
#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <set>

#include <unistd.h>
#include <catch2/catch.hpp>

#include "placement/placement_fixtures.hpp"
#include "slurm_ai/config/plugin_config.hpp"
#include "slurm_ai/elastic/elastic_plan.hpp"
#include "slurm_ai/elastic/elastic_policy.hpp"
#include "slurm_ai/elastic/elastic_state.hpp"
#include "slurm_ai/elastic/elastic_view.hpp"
#include "slurm_ai/select_ai/select_service.hpp"
#include "scratch_dir.hpp"
#include "search_budget.hpp"

using namespace slurm_ai;
using namespace slurm_ai::test;

namespace {

std::vector<int> hosts(const ClusterGraph &g, std::initializer_list<const char *> names) {
    std::vector<int> out;
    for (auto *n : names)
        out.push_back(host(g, n));
    return out;
}

std::set<std::string> names(const ClusterGraph &g, const std::vector<int> &hs) {
    std::set<std::string> out;
    for (int h : hs)
        out.insert(g.host_name(h));
    return out;
}

}  // namespace

TEST_CASE("a grow takes the free hosts next to the job's own", "[elastic]") {
    // Two leaves of four 8-GPU hosts with thin uplinks: crossing leaves is costly.
    auto g = fat_tree(2, 4, 200, 50, node_file("nccl-topo/ndv4-topo.xml"));
    PlacementEngine engine(g, {}, {}, test::unhurried());
    ClusterState s(g);
    auto job = hosts(g, {"h1", "h2"});
    occupy(s, g, {"h1", "h2", "h3"});  // the job itself and another job on h3
    auto d = pattern_demand(CommPattern::kAllReduce, 2, 16);
    auto one = plan_grow(engine, d, job, s, 1);
    REQUIRE(one.hosts.size() == 1);
    CHECK(g.host_name(one.hosts[0]) == "h4");  // the last free host of leaf 1
    CHECK(one.comm_after_s > 0);

    // Two more: h4 and then, leaf 1 being full, one host of leaf 2.
    auto two = plan_grow(engine, d, job, s, 2);
    REQUIRE(two.hosts.size() == 2);
    CHECK(g.host_name(two.hosts[0]) == "h4");
    CHECK(g.host_leaf(two.hosts[1]) == g.host_leaf(host(g, "h5")));
    CHECK(two.comm_after_s >= one.comm_after_s);

    // A host without the GPUs one node of the job needs is no candidate.
    s.free_gpus[host(g, "h4")] = 0x0f;
    auto skip = plan_grow(engine, d, job, s, 1);
    REQUIRE(skip.hosts.size() == 1);
    CHECK(g.host_name(skip.hosts[0]) != "h4");

    auto none = plan_grow(engine, d, job, s, 6);
    CHECK(none.hosts.empty());
    CHECK_THAT(none.reason, Catch::Contains("needs 6 more host(s)"));
}

TEST_CASE("a shrink releases the hosts whose loss costs the job least", "[elastic]") {
    auto g = fat_tree(2, 4, 200, 50, node_file("nccl-topo/ndv4-topo.xml"));
    PlacementEngine engine(g, {}, {}, test::unhurried());
    // Three hosts on leaf 1 and one stray on leaf 2: the stray is the one to give back.
    auto job = hosts(g, {"h1", "h2", "h3", "h5"});
    auto d = pattern_demand(CommPattern::kAllReduce, 4, 32);
    auto r = plan_shrink(engine, d, job, 1, {});
    REQUIRE(r.hosts.size() == 1);
    CHECK(g.host_name(r.hosts[0]) == "h5");
    CHECK(r.comm_after_s < r.comm_before_s);  // leaving the slow uplink makes the ring faster

    // The batch host stays, whatever it costs.
    auto kept = plan_shrink(engine, d, job, 1, hosts(g, {"h5"}));
    REQUIRE(kept.hosts.size() == 1);
    CHECK(g.host_name(kept.hosts[0]) != "h5");

    auto two = plan_shrink(engine, d, job, 2, hosts(g, {"h1"}));
    REQUIRE(two.hosts.size() == 2);
    CHECK(names(g, two.hosts).count("h5") == 1);
    CHECK(names(g, two.hosts).count("h1") == 0);

    // Four on leaf 1, two on leaf 2, two to give back: the job leaves leaf 2 entirely
    // rather than thinning both leaves and still crossing the uplink.
    auto six = hosts(g, {"h1", "h2", "h3", "h4", "h5", "h6"});
    auto leave = plan_shrink(engine, pattern_demand(CommPattern::kAllReduce, 6, 48), six, 2,
                             hosts(g, {"h1"}));
    CHECK(names(g, leave.hosts) == std::set<std::string>{"h5", "h6"});
    CHECK(leave.comm_after_s < leave.comm_before_s);

    CHECK(plan_shrink(engine, d, job, 4, {}).hosts.empty());
    CHECK_THAT(plan_shrink(engine, d, job, 3, hosts(g, {"h1", "h2"})).reason,
               Catch::Contains("2 must stay"));
}

TEST_CASE("a job's demand follows its size", "[elastic]") {
    auto d = pattern_demand(CommPattern::kAllReduce, 2, 16);
    auto d4 = demand_at_size(d, 4);
    CHECK(d4.min_nodes == 4);
    CHECK(d4.max_nodes == 4);
    CHECK(d4.total_gpus == 32);
    CHECK(d4.gpus_per_node == 8);
    // A pipeline whose stages came from its size keeps one stage per node.
    JobHints pipeline;
    pipeline.comm = CommSpec{};
    pipeline.comm->pattern = CommPattern::kPipeline;
    auto p = make_demand(JobRequest{3, 3, 0, 0, 3}, pipeline);
    CHECK(demand_at_size(p, 5).comm.stages == 5);
    pipeline.comm->stages = 8;
    auto q = make_demand(JobRequest{3, 3, 0, 0, 3}, pipeline);
    CHECK(demand_at_size(q, 5).comm.stages == 8);
}

// place_sized with a scripted policy: sizes that place, sizes held, sizes that do not fit.
TEST_CASE("an elastic job starts at the largest size that places; a held size does not stop "
          "a smaller one",
          "[elastic]") {
    const auto base = pattern_demand(CommPattern::kAllReduce, 2, 16);
    std::vector<std::uint32_t> asked;
    auto policy = [&](std::set<std::uint32_t> places, std::set<std::uint32_t> held) {
        return [&asked, places, held](const JobDemand &d) {
            asked.push_back(d.min_nodes);
            Decision out;
            if (places.count(d.min_nodes)) {
                out.placement = Placement{};
                out.placement->hosts.assign(d.min_nodes, 0);
            } else if (held.count(d.min_nodes)) {
                out.wait = true;
                out.reason = "held at " + std::to_string(d.min_nodes);
            } else {
                out.reason = "no room at " + std::to_string(d.min_nodes);
            }
            return out;
        };
    };
    // 6 and 5 held, 4 places: it starts on 4 nodes, asked from the largest down.
    auto s = place_sized(base, 2, 6, policy({4, 3}, {6, 5}));
    CHECK(s.nodes == 4);
    REQUIRE(s.decision.placement);
    CHECK(s.decision.placement->hosts.size() == 4);
    CHECK(asked == std::vector<std::uint32_t>{6, 5, 4});
    // No size places: the first hold says why, and it waits.
    asked.clear();
    s = place_sized(base, 2, 6, policy({}, {5, 3}));
    CHECK(s.nodes == 0);
    CHECK(s.decision.wait);
    CHECK(s.decision.reason == "held at 5");
    CHECK(asked == std::vector<std::uint32_t>{6, 5, 4, 3, 2});
    // Nothing held, nothing fits: the smallest size's reason.
    s = place_sized(base, 2, 6, policy({}, {}));
    CHECK(s.nodes == 0);
    CHECK_FALSE(s.decision.wait);
    CHECK(s.decision.reason == "no room at 2");
    // A MAX below MIN is asked at MIN.
    asked.clear();
    s = place_sized(base, 3, 2, policy({3}, {}));
    CHECK(s.nodes == 3);
    CHECK(asked == std::vector<std::uint32_t>{3});
}

TEST_CASE("ai-elasticd shrinks for a job of higher priority and grows into idle nodes",
          "[elastic]") {
    ElasticPolicyInput in;
    in.now = 1000;
    in.elastic.push_back({10, 100, "debug", 6, ElasticSpec{2, 8, 0}, false, 0, {}, 1});
    in.idle["debug"] = 1;
    // A job of priority 500 needs 4 nodes: one is idle, the elastic job gives 3.
    in.waiting.push_back({20, 500, "debug", 4});
    auto a = plan_elastic(in);
    REQUIRE(a.size() == 1);
    CHECK(a[0].kind == ElasticAction::Kind::kShrink);
    CHECK(a[0].job_id == 10);
    CHECK(a[0].nodes == 3);
    CHECK(a[0].for_job == 20);

    // Never below MIN; if even that would not let the job start, nobody gives anything.
    in.waiting[0].nodes = 6;
    CHECK(plan_elastic(in).empty());

    // A waiting job of lower priority takes nothing, and stops no grow either.
    in.waiting[0] = {21, 50, "debug", 4};
    a = plan_elastic(in);
    REQUIRE(a.size() == 1);
    CHECK(a[0].kind == ElasticAction::Kind::kGrow);
    CHECK(a[0].nodes == 1);

    // Higher priority pending in the partition: no grow. Another partition: grow.
    in.waiting[0] = {22, 500, "other", 1};
    in.idle["other"] = 1;
    a = plan_elastic(in);
    REQUIRE(a.size() == 1);
    CHECK(a[0].kind == ElasticAction::Kind::kGrow);
    in.waiting[0].partition = "debug";
    in.waiting[0].nodes = 1;  // it starts on the idle node: nothing left to grow into
    CHECK(plan_elastic(in).empty());

    // Where Slurm cannot merge an expansion job: the shrink for a waiting job as before,
    // no grow into idle nodes under either rule.
    in.can_grow = false;
    in.waiting[0] = {20, 500, "debug", 4};
    a = plan_elastic(in);
    REQUIRE(a.size() == 1);
    CHECK(a[0].kind == ElasticAction::Kind::kShrink);
    CHECK(a[0].nodes == 3);
    in.waiting.clear();
    CHECK(plan_elastic(in).empty());
    in.can_grow = true;
    CHECK_FALSE(plan_elastic(in).empty());
}

TEST_CASE("growth respects MAX, the cooldown and a grow under way", "[elastic]") {
    ElasticPolicyInput in;
    in.now = 1000;
    in.grow_cooldown_s = 60;
    in.idle["p"] = 10;
    in.elastic.push_back({1, 10, "p", 3, ElasticSpec{1, 5, 0}, false, 0, {}, 1});
    auto a = plan_elastic(in);
    REQUIRE(a.size() == 1);
    CHECK(a[0].nodes == 2);  // up to MAX, not all idle nodes
    in.elastic[0].last_resize = 970;
    CHECK(plan_elastic(in).empty());
    in.elastic[0].last_resize = 900;
    in.elastic[0].resizing = true;
    CHECK(plan_elastic(in).empty());
    in.elastic[0].resizing = false;
    in.elastic[0].nodes = 5;
    CHECK(plan_elastic(in).empty());

    // Two donors: the lower priority one gives first.
    ElasticPolicyInput two;
    two.elastic.push_back({1, 300, "p", 4, ElasticSpec{1, 4, 0}, false, 0, {}, 1});
    two.elastic.push_back({2, 200, "p", 4, ElasticSpec{2, 4, 0}, false, 0, {}, 1});
    two.waiting.push_back({3, 900, "p", 3});
    a = plan_elastic(two);
    REQUIRE(a.size() == 2);
    CHECK(a[0].job_id == 2);
    CHECK(a[0].nodes == 2);
    CHECK(a[1].job_id == 1);
    CHECK(a[1].nodes == 1);
}

TEST_CASE("the goodput rule: idle nodes to the largest gain per GPU, waiting jobs first",
          "[elastic]") {
    // Job 1 (4 GPUs a node) does 4, 7.5, 10.5 and 12 GPUs' worth of work on 1 to 4 nodes:
    // a second node adds 3.5 / 4 = 0.875 per GPU, a third 0.75, a fourth 0.375. Job 2
    // (2 GPUs a node): 2, 2.8, 3.2 on 1 to 3 nodes, adding 0.4 then 0.2 per GPU.
    ElasticPolicyInput in;
    in.now = 1000;
    in.min_gain = 0.5;
    in.idle["p"] = 3;
    in.elastic.push_back({1, 10, "p", 1, ElasticSpec{1, 4, 0}, false, 0, {0, 4, 7.5, 10.5, 12}, 4});
    in.elastic.push_back({2, 99, "p", 1, ElasticSpec{1, 3, 0}, false, 0, {0, 2, 2.8, 3.2}, 2});
    CHECK(gain_per_gpu(in.elastic[0]) == Approx(0.875));
    CHECK(gain_per_gpu(in.elastic[1]) == Approx(0.4));
    // Two nodes to job 1 (0.875, then 0.75), whatever job 2's higher priority; the third
    // stays idle: 0.375 and 0.4 are under min_gain.
    auto a = plan_elastic(in, ElasticRule::kGoodput);
    REQUIRE(a.size() == 1);
    CHECK(a[0].kind == ElasticAction::Kind::kGrow);
    CHECK(a[0].job_id == 1);
    CHECK(a[0].nodes == 2);
    // The priority rule gives them by priority instead: job 2 to its MAX, job 1 the rest.
    auto p = plan_elastic(in, ElasticRule::kPriority);
    REQUIRE(p.size() == 2);
    CHECK(p[0].job_id == 2);
    CHECK(p[0].nodes == 2);
    CHECK(p[1].job_id == 1);
    CHECK(p[1].nodes == 1);
    // With min_gain 0.35 job 2's 0.4 and job 1's 0.375 count too, in that order.
    in.min_gain = 0.35;
    a = plan_elastic(in, ElasticRule::kGoodput);
    REQUIRE(a.size() == 2);
    CHECK(a[0].job_id == 1);
    CHECK(a[0].nodes == 2);
    CHECK(a[1].job_id == 2);
    CHECK(a[1].nodes == 1);

    // A waiting job, whatever its priority, first takes the idle node it needs; a second
    // node comes from the job that loses least per GPU: job 1 at 3 nodes loses 0.75 per
    // GPU, job 2 at 2 loses 0.4.
    in.min_gain = 0.5;
    in.idle["p"] = 1;
    in.elastic[0].nodes = 3;
    in.elastic[1].nodes = 2;
    in.waiting.push_back({3, 1, "p", 2});
    a = plan_elastic(in, ElasticRule::kGoodput);
    REQUIRE(a.size() == 1);
    CHECK(a[0].kind == ElasticAction::Kind::kShrink);
    CHECK(a[0].job_id == 2);
    CHECK(a[0].nodes == 1);
    CHECK(a[0].for_job == 3);
    // One that would still not start takes nothing; nor does growth take what it needs.
    in.waiting[0].nodes = 5;
    CHECK(plan_elastic(in, ElasticRule::kGoodput).empty());
    in.waiting[0].nodes = 1;
    CHECK(plan_elastic(in, ElasticRule::kGoodput).empty());
    // Without it: job 1's fourth node (0.375) and job 2's third (0.2) are not worth it;
    // at 2 nodes job 1's third is, unless it grew less than the cooldown ago.
    in.waiting.clear();
    CHECK(plan_elastic(in, ElasticRule::kGoodput).empty());
    in.elastic[0].nodes = 2;
    a = plan_elastic(in, ElasticRule::kGoodput);
    REQUIRE(a.size() == 1);
    CHECK(a[0].job_id == 1);
    CHECK(a[0].kind == ElasticAction::Kind::kGrow);
    in.elastic[0].last_resize = 990;
    CHECK(plan_elastic(in, ElasticRule::kGoodput).empty());
}

TEST_CASE("an elastic job's goodput size: the nodes the goodput rule would grow it to",
          "[elastic]") {
    // The curve of job 1 above: from 1 node, a second adds 0.875 per GPU, a third 0.75, a
    // fourth 0.375.
    ElasticJob j{1, 10, "p", 4, ElasticSpec{1, 4, 0}, false, 0, {0, 4, 7.5, 10.5, 12}, 4};
    CHECK(goodput_size(j, 0.5) == 3);  // j.nodes (4) is not read
    CHECK(goodput_size(j, 0.8) == 2);
    CHECK(goodput_size(j, 0.9) == 1);
    CHECK(goodput_size(j, 0.3) == 4);  // never above MAX
    j.spec = ElasticSpec{3, 4, 0};     // from MIN: 3 nodes, whatever the gains below it
    CHECK(goodput_size(j, 0.9) == 3);
    j.goodput.pop_back();  // no curve: MIN
    CHECK(goodput_size(j, 0) == 3);
}

TEST_CASE("a job's goodput curve measured at its start size stays one curve as it grows",
          "[elastic]") {
    // ai-elasticd measures CommShare at the size the job started asking for (its record's
    // elastic_start_max), where the select plugin measured it: the curve of a job started
    // on 2 hosts is the same once it runs on 3, and the same as the plugin's at its start.
    auto g = fat_tree(2, 4, 200, 50, node_file("nccl-topo/ndv4-topo.xml"));
    PlacementEngine engine(g, {}, {}, test::unhurried());
    const auto d = pattern_demand(CommPattern::kAllReduce, 2, 16);
    const auto at2 = job_goodput(engine, demand_at_size(d, 2), 2, 6, 0.5);
    const auto grown = job_goodput(engine, demand_at_size(d, 3), 2, 6, 0.5);
    REQUIRE(at2.size() == 7);
    for (std::size_t n = 1; n < at2.size(); ++n)
        CHECK(grown[n] == Approx(at2[n]).epsilon(1e-12));
    // Communication is half of a step on 2 ideal hosts: 2 hosts do 16 GPUs' work in two
    // steps' time, 8 GPUs' worth.
    CHECK(at2[2] == Approx(8).epsilon(1e-9));
    // Measured at the present size instead, the same job's curve moves with every resize
    // (what ai-elasticd did before): the anchor is what keeps it still.
    const auto drifted = job_goodput(engine, demand_at_size(d, 3), 3, 6, 0.5);
    CHECK(std::abs(drifted[2] - at2[2]) > 0.05);

}

TEST_CASE("fewer free hosts cap an elastic job's start size, and its curve stays the same",
          "[elastic]") {
    // CommShare is measured at comm_share_size(MAX): at MAX, or at the fabric's hosts when
    // they are fewer (8 here), whatever is free when the job starts.
    auto g = fat_tree(2, 4, 200, 50, node_file("nccl-topo/ndv4-topo.xml"));
    PlacementEngine engine(g, {}, {}, test::unhurried());
    CHECK(comm_share_size(engine, 6) == 6);
    CHECK(comm_share_size(engine, 100000) == 8);
    CHECK(comm_share_size(engine, 0) == 1);
    // A job of --ai-elastic=1:6 that all-reduces without compute=: on its curve measured at
    // 6 hosts, a second host adds 0.77 of a GPU's work per GPU; measured at 2 (as when only
    // 2 hosts were free, before 2026-11-29), 0.33, and it would start on 1.
    const auto d = pattern_demand(CommPattern::kAllReduce, 2, 16);
    const ElasticSpec spec{1, 6, 0};
    for (double bar : {0.5, 0.6, 0.7}) {
        INFO("ElasticMinGain " << bar);
        const auto all = goodput_start(engine, d, spec, 6, 0.5, bar);
        CHECK(all >= 2);
        for (std::uint32_t free : {2u, 3u})
            CHECK(goodput_start(engine, d, spec, free, 0.5, bar) == std::min(all, free));
    }
}

TEST_CASE("ElasticStart=goodput's bar: a whole GPU's worth per GPU while a job waits that "
          "the GPUs beside the MIN could start, else ElasticMinGain",
          "[elastic]") {
    const ClusterGraph g = nvl72_racks();
    ClusterState s(g);
    for (int h = 0; h < g.host_count(); ++h)
        s.usable[h] = 0;
    for (const char *n : {"node1101", "node1102", "node1103"})  // 12 GPUs free
        s.usable[host(g, n)] = 1;
    // The job (8 GPUs, MIN 4 of them) is the only one waiting: the growth bar.
    s.wanted = {{8, 1}};
    CHECK(start_gain(s, 8, 4, 0.5) == 0.5);
    // Another 8-GPU job waits: the 12 - 4 = 8 GPUs beside the MIN hold it.
    s.wanted = {{8, 2}};
    CHECK(start_gain(s, 8, 4, 0.5) == kWaitingGpuWorth);
    // A 16-GPU job waits: 8 cannot start it.
    s.wanted = {{8, 1}, {16, 1}};
    CHECK(start_gain(s, 8, 4, 0.5) == 0.5);
    // A MIN of 8 GPUs leaves 4: a 4-GPU job counts, another 8-GPU job does not.
    s.wanted = {{8, 2}};
    CHECK(start_gain(s, 8, 8, 0.5) == 0.5);
    s.wanted = {{8, 2}, {4, 1}};
    CHECK(start_gain(s, 8, 8, 0.5) == kWaitingGpuWorth);
    // A node with no GPU free adds nothing: 8 - 4 = 4 cannot start the other 8-GPU job.
    s.wanted = {{8, 2}};
    s.free_gpus[host(g, "node1103")] = 0;
    CHECK(start_gain(s, 8, 4, 0.5) == 0.5);
}

TEST_CASE("a job's view files: generation, host file, environment", "[elastic]") {
    const test::ScratchDir scratch("elastic-view");
    const std::string dir = scratch / "7";
    ResizeView v;
    v.job_id = 7;
    v.nodes = {"n3", "n1", "n2"};
    v.procs_per_node = 4;
    auto first = publish_view(dir, v);
    CHECK(first.generation == 0);
    CHECK(first.world_size() == 12);
    std::ifstream hf(dir + "/hostfile");
    std::string line;
    std::getline(hf, line);
    CHECK(line == "n3 slots=4");  // rank order, not sorted
    std::ifstream env(dir + "/env");
    std::string all((std::istreambuf_iterator<char>(env)), std::istreambuf_iterator<char>());
    CHECK_THAT(all, Catch::Contains("export SLURM_JOB_NODELIST=\"n[1-3]\""));
    CHECK_THAT(all, Catch::Contains("export WORLD_SIZE=\"12\""));
    CHECK_THAT(all, Catch::Contains("export MASTER_ADDR=\"n3\""));

    // The same nodes again: nothing changes. Other nodes: the next generation.
    CHECK(publish_view(dir, v).generation == 0);
    v.nodes.push_back("n4");
    CHECK(publish_view(dir, v).generation == 1);
    auto back = read_view(dir);
    REQUIRE(back);
    CHECK(back->nodes == v.nodes);
    CHECK(back->generation == 1);
    // Each generation counts as a grow, a shrink or (same size) a replacement.
    CHECK(back->grows == 1);
    CHECK(back->shrinks == 0);
    v.nodes = {"n3", "n1"};
    auto shrunk = publish_view(dir, v);
    CHECK((shrunk.generation == 2 && shrunk.grows == 1 && shrunk.shrinks == 1));
    v.nodes = {"n3", "n5"};
    auto replaced = publish_view(dir, v);
    CHECK((replaced.generation == 3 && replaced.grows == 1 && replaced.shrinks == 1));
    CHECK(*read_view(dir) == replaced);
    // A view written before grows and shrinks were counted reads as none of either.
    auto old = parse_job_view(R"({"job_id": 7, "generation": 4, "nodes": ["n1"],
                                  "procs_per_node": 1})",
                              "old view.json");
    REQUIRE(old.ok());
    CHECK((old->generation == 4 && old->grows == 0 && old->shrinks == 0));

    std::ofstream(dir + "/view.json") << "{\"job_id\": 7";
    CHECK_FALSE(read_view(dir));
    auto bad = parse_job_view("{\"job_id\": 7}", "view.json");
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().source == "view.json");
}

TEST_CASE("the task environment names the job's view and its signal", "[elastic]") {
    ElasticSpec e{2, 8, SIGUSR2};
    auto env = elastic_task_env(&e, 42, "/shared/views");
    std::map<std::string, std::string> m(env.begin(), env.end());
    CHECK(m["SLURM_AI_ELASTIC_VIEW"] == "/shared/views/42/view.json");
    CHECK(m["SLURM_AI_ELASTIC_HOSTFILE"] == "/shared/views/42/hostfile");
    CHECK(m["SLURM_AI_ELASTIC_MIN"] == "2");
    CHECK(m["SLURM_AI_ELASTIC_MAX"] == "8");
    CHECK(m["SLURM_AI_ELASTIC_SIGNAL"] == "USR2");
    CHECK(elastic_task_env(nullptr, 42, "/v").size() == 3);
    CHECK(resolve_view_dir("", "/var/spool/slurmctld") == "/var/spool/slurmctld/ai_elastic/views");
    CHECK(resolve_view_dir("/shared/v", "/var/spool/slurmctld") == "/shared/v");
}

TEST_CASE("ai-elasticd's state survives a round trip and a corrupt file is refused", "[elastic]") {
    ElasticdState s;
    s.grows.push_back({42, 43, 2, 4, 1700000060, "grow +2"});
    s.last_resize[42] = 1700000000;
    s.gangs_released.insert("0:trio");
    s.failures_handled.insert(77);
    auto back = parse_elasticd_state(dump_elasticd_state(s), "elasticd.json");
    REQUIRE(back.ok());
    CHECK(back.value() == s);
    auto corrupt = parse_elasticd_state("{\"version\": 1, \"grows\": [", "elasticd.json");
    REQUIRE_FALSE(corrupt.ok());
    CHECK(corrupt.error().source == "elasticd.json");
    // A number a crash or a hand edit left that no job id or time is: refused, not cast.
    for (const char *value : {"1e300", "-1", "2.5"}) {
        INFO(value);
        const std::string text = std::string(R"({"version": 1, "grows": [], "last_resize": {},)"
                                             R"("gangs_released": [], "failures_handled": [)") +
                                 value + "]}";
        auto torn = parse_elasticd_state(text, "elasticd.json");
        REQUIRE_FALSE(torn.ok());
        CHECK_THAT(torn.error().message(),
                   Catch::Contains("failures_handled must be a whole number"));
    }
    auto other = parse_elasticd_state("{\"version\": 2}", "elasticd.json");
    REQUIRE_FALSE(other.ok());
    CHECK(other.error().field == "version");

    CHECK(expanded_job_of(expansion_job_name(42)) == 42);
    CHECK(expanded_job_of("ai-expand:x") == 0);
    CHECK(expanded_job_of("train") == 0);
    CHECK(expansion_deadline("note; " + expansion_comment(1700000060)) == 1700000060);
    CHECK(expansion_deadline("no deadline") == 0);
}

TEST_CASE("ai_select.conf's elastic keys, and contrib documents them at their defaults",
          "[elastic][config]") {
    auto c = parse_plugin_config(
        "ElasticViewDir=/shared/views\nElasticAuto=no\nElasticInterval=2\n"
        "ElasticGrowTimeout=2m\nElasticGrowCooldown=30s\nElasticPolicy=Priority\n"
        "ElasticMinGain=0.25\nCommShare=0.3\n",
        "/etc/slurm/ai_select.conf", "/etc/slurm/topology.conf");
    REQUIRE(c.ok());
    CHECK(c->elastic.view_dir == "/shared/views");
    CHECK_FALSE(c->elastic.auto_resize);
    CHECK(c->elastic.interval_s == 2);
    CHECK(c->elastic.grow_timeout_s == 120);
    CHECK(c->elastic.grow_cooldown_s == 30);
    CHECK(c->elastic.policy == "priority");
    CHECK(c->elastic.min_gain == 0.25);
    CHECK(c->comm_share == 0.3);
    for (const char *bad : {"ElasticPolicy=fastest\n", "ElasticMinGain=2\n", "CommShare=0\n"}) {
        auto b = parse_plugin_config(bad, "a.conf", "t.conf");
        REQUIRE_FALSE(b.ok());
        CHECK(b.error().line == 1);
        CHECK_THAT(b.error().message(), Catch::Contains(std::string(bad).substr(0, 10)));
    }
    auto rel = parse_plugin_config("ElasticViewDir=views\n", "a.conf", "t.conf");
    REQUIRE_FALSE(rel.ok());
    CHECK(rel.error().field == "ElasticViewDir");
    auto zero = parse_plugin_config("ElasticInterval=0\n", "a.conf", "t.conf");
    REQUIRE_FALSE(zero.ok());
    CHECK(zero.error().line == 1);

    auto contrib = load_plugin_config(
        std::string(SLURM_AI_CONTRIB) + "/slurm.conf.d/ai_select.conf", "/etc/slurm/topology.conf");
    REQUIRE(contrib.ok());
    // The shipped file's elastic keys are at their defaults (that it names every key is
    // plugin_config_test's).
    CHECK(contrib->elastic == ElasticConfig{});
    CHECK(contrib->comm_share == PluginConfig{}.comm_share);
}

TEST_CASE(
    "the select service starts an elastic job as large as fits and places expansions "
    "next to the job",
    "[elastic][select]") {
    const test::ScratchDir scratch("elastic-select");
    const std::string dir = scratch.str();
    std::ofstream(dir + "/ai_select.conf")
        << "NodeTopology=" << SLURM_AI_TEST_INPUTS << "/minicluster-node.xml\n"
        << "ElasticStart=max\n";
    SelectService s({}, test::kUnhurriedSearch);
    REQUIRE_FALSE(s.load(dir + "/ai_select.conf",
                         std::string(SLURM_AI_TEST_INPUTS) + "/two-leaves.topology.conf",
                         {"g1", "g2", "g3", "g4"}));
    const std::vector<const char *> env{"_SLURM_SPANK_OPTION_ai_ai_elastic=2:4"};
    std::vector<SelectNode> view(4, SelectNode{true, 0xf, 1, 0});
    view[3] = SelectNode{false, 0, 1, 0};  // g4 is busy
    auto o = s.decide(SelectJob{5, 1, 100, 4, 4, 1, 0, env}, view);
    REQUIRE(o.kind == SelectOutcome::Kind::kPlaced);
    CHECK(o.nodes.size() == 3);  // MAX does not fit, three of four do
    CHECK(o.min_nodes == 2);
    CHECK(o.max_nodes == 4);
    CHECK(o.req_nodes == 3);

    // An expansion of a job on g1 (node 0) by one node: g2, under g1's leaf.
    std::vector<SelectNode> rest(4, SelectNode{true, 0xf, 1, 0});
    rest[0] = SelectNode{false, 0, 1, 0};
    const std::vector<const char *> parent{"_SLURM_SPANK_OPTION_ai_ai_comm=allreduce"};
    std::vector<int> parent_nodes{0};
    auto e = s.decide_expansion(SelectJob{6, 1, 1, 4, 4, 1, 0, {}}, 5, parent_nodes, parent, rest);
    REQUIRE(e.kind == SelectOutcome::Kind::kPlaced);
    REQUIRE(e.nodes.size() == 1);
    CHECK(e.nodes[0] == 1);
}

TEST_CASE("ElasticStart=goodput: an elastic job starts on no node the goodput rule would not "
          "grow it into",
          "[elastic][select]") {
    const test::ScratchDir scratch("elastic-start");
    const std::string dir = scratch.str();
    const std::string topo = std::string(SLURM_AI_TEST_INPUTS) + "/two-leaves.topology.conf";
    const std::vector<std::string> nodes{"g1", "g2", "g3", "g4"};
    std::ofstream(dir + "/ai_select.conf")
        << "NodeTopology=" << SLURM_AI_TEST_INPUTS << "/minicluster-node.xml\n";
    SelectService s({}, test::kUnhurriedSearch);
    REQUIRE_FALSE(s.load(dir + "/ai_select.conf", topo, nodes));
    const std::vector<SelectNode> idle(4, SelectNode{true, 0xf, 1, 0});
    // The nodes job `id` (--ai-elastic=1:MAX, 4 GPUs a node) starts on, all 4 idle.
    auto start = [&](SelectService &svc, std::uint32_t id, std::uint32_t max, const char *comm) {
        const std::string e = "_SLURM_SPANK_OPTION_ai_ai_elastic=1:" + std::to_string(max);
        const std::string c = std::string("_SLURM_SPANK_OPTION_ai_ai_comm=") + comm;
        const std::vector<const char *> env{e.c_str(), c.c_str()};
        auto o = svc.decide(SelectJob{id, 1, max, 4, 4, 1, 0, env}, idle);
        REQUIRE(o.kind == SelectOutcome::Kind::kPlaced);
        CHECK(o.req_nodes == o.nodes.size());
        return o.nodes.size();
    };
    const char *scales = "allreduce:bytes=16M,compute=60s";
    const char *poorly = "allreduce:bytes=8G,compute=500ms";
    // elastic_goodput's jobs (tests/cluster): 16 MiB against 60 s of computation gains
    // nearly a node's worth per node, to its MAX; 8 GiB against 0.5 s gains little, and
    // starts on its MIN with three nodes idle.
    CHECK(start(s, 1, 4, scales) == 4);
    CHECK(start(s, 2, 4, poorly) == 1);
    // The largest MAX --ai-elastic takes: the curve is drawn only as far as the
    // candidates go.
    CHECK(start(s, 3, 100000, scales) == 4);
    // Without compute=, CommShare is taken at the largest size the cluster holds: a MAX
    // above it starts as a MAX of 4 does (a share at 100000 nodes, which no placement
    // holds, would make every node worthless and start it on its MIN).
    const std::size_t at4 = start(s, 5, 4, "allreduce:bytes=16M");
    CHECK(at4 > 1);
    CHECK(start(s, 6, 100000, "allreduce:bytes=16M") == at4);

    // While a job waits that the GPUs beside the MIN could start (2 nodes, 8 GPUs; only
    // one node was free when it was tested), a node above MIN must add a whole GPU's worth
    // per GPU (start_gain): the job that scales nearly perfectly starts on its MIN.
    std::vector<SelectNode> one(4, SelectNode{false, 0, 1, 0});
    one[0] = SelectNode{true, 0xf, 1, 0};
    CHECK(s.decide(SelectJob{8, 2, 2, 4, 8, 1, 0, {}}, one).kind != SelectOutcome::Kind::kPlaced);
    CHECK(start(s, 9, 4, scales) == 1);

    // ElasticStart=max: as many as fit, as Slurm's node range.
    std::ofstream(dir + "/ai_select.conf", std::ios::app) << "ElasticStart=max\n";
    SelectService m({}, test::kUnhurriedSearch);
    REQUIRE_FALSE(m.load(dir + "/ai_select.conf", topo, nodes));
    CHECK(start(m, 7, 4, poorly) == 4);
}
