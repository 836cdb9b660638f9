// Gangs: the --ai-gang option with its failure policy, the barrier (assess_gang), the
// joint placement (place_gang), the select service's plan that holds the members' nodes
// until they have all started, gangs.json, and what ai-elasticd does with a gang.
#include <csignal>
#include <filesystem>
#include <fstream>
#include <set>

#include <unistd.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "placement/placement_fixtures.hpp"
#include "slurm_ai/gang/gang.hpp"
#include "slurm_ai/gang/gang_file.hpp"
#include "slurm_ai/gang/gang_placement.hpp"
#include "slurm_ai/select_ai/select_service.hpp"
#include "scratch_dir.hpp"
#include "search_budget.hpp"

using namespace slurm_ai;
using namespace slurm_ai::test;

namespace {

GangSpec gang(std::string name, std::uint32_t size, std::uint32_t timeout = 0) {
    GangSpec g;
    g.name = std::move(name);
    g.size = size;
    g.timeout_s = timeout;
    return g;
}

GangMember member(std::uint32_t id, MemberState state, const GangSpec &spec,
                  std::int64_t submit = 100, bool eligible = true) {
    return GangMember{id, state, /*held=*/!eligible, 0, 0, submit, spec};
}

}  // namespace

TEST_CASE("gang option (--ai-gang) takes a failure policy and keeps its old forms",
          "[gang][hints]") {
    auto plain = parse_gang("train:3");
    REQUIRE(plain.ok());
    CHECK_FALSE(plain->keep_on_failure);
    auto keep = parse_gang("train:3:10m:onfail=keep");
    REQUIRE(keep.ok());
    CHECK(keep->keep_on_failure);
    CHECK(keep->timeout_s == 600);
    auto no_timeout = parse_gang("train:3:onfail=KILL");
    REQUIRE(no_timeout.ok());
    CHECK_FALSE(no_timeout->keep_on_failure);
    CHECK(no_timeout->timeout_s == 0);

    auto bad_value = parse_gang("train:3:onfail=maybe");
    REQUIRE_FALSE(bad_value.ok());
    CHECK(bad_value.error().field == "--ai-gang onfail");
    CHECK(bad_value.error().value == "maybe");
    auto bad_key = parse_gang("train:3:10m:onerror=keep");
    REQUIRE_FALSE(bad_key.ok());
    CHECK_THAT(bad_key.error().expected, Catch::Contains("onfail=kill or onfail=keep"));
    CHECK_FALSE(parse_gang("train:3:10m:onfail=keep:x").ok());
    CHECK_FALSE(parse_gang("train:onfail=keep").ok());  // SIZE is not optional
}

TEST_CASE("elastic option (--ai-elastic) takes the signal that announces a resize",
          "[elastic][hints]") {
    auto e = parse_elastic("2:8:signal=USR2");
    REQUIRE(e.ok());
    CHECK(e->min_nodes == 2);
    CHECK(e->max_nodes == 8);
    CHECK(e->signal == SIGUSR2);
    CHECK(parse_elastic("2:8")->signal == 0);
    CHECK(parse_elastic("1:4:SIGNAL=sigterm")->signal == SIGTERM);
    auto bad = parse_elastic("2:8:signal=NOPE");
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().field == "--ai-elastic signal");
    CHECK_FALSE(parse_elastic("2:8:USR2").ok());
    CHECK_FALSE(parse_elastic("2:8:signal=USR2:x").ok());
}

TEST_CASE("a gang waits until all of its members are pending and eligible", "[gang]") {
    auto g = gang("train", 3, 600);
    std::vector<GangMember> m{member(1, MemberState::kPending, g, 100),
                              member(2, MemberState::kPending, g, 130)};
    auto v = assess_gang(g, m, 200);
    CHECK(v.state == GangState::kWaiting);
    CHECK_THAT(v.reason, Catch::Contains("2 of 3 members submitted"));
    CHECK(v.deadline == 700);  // the first submission plus TIMEOUT

    m.push_back(member(3, MemberState::kPending, g, 150, /*eligible=*/false));
    v = assess_gang(g, m, 200);
    CHECK(v.state == GangState::kWaiting);
    CHECK_THAT(v.reason, Catch::Contains("not eligible (3)"));

    m.back().held = false;
    CHECK(assess_gang(g, m, 200).state == GangState::kStarting);
    // Once one member runs, the rest start as soon as they fit, timeout or not.
    m[0].state = MemberState::kRunning;
    CHECK(assess_gang(g, m, 5000).state == GangState::kStarted);
}

TEST_CASE("a gang that cannot start within its timeout is released", "[gang]") {
    auto g = gang("train", 3, 60);
    std::vector<GangMember> m{member(1, MemberState::kPending, g, 1000),
                              member(2, MemberState::kPending, g, 1010)};
    CHECK(assess_gang(g, m, 1059).state == GangState::kWaiting);
    auto v = assess_gang(g, m, 1060);
    CHECK(v.state == GangState::kTimedOut);
    CHECK_THAT(v.reason, Catch::Contains("timed out after 60 s with 2 of 3"));
    // Members that ended do not count, and a gang without timeout waits for ever.
    m.push_back(member(3, MemberState::kEnded, g, 10));
    CHECK(assess_gang(gang("train", 3), m, 1e9).state == GangState::kWaiting);
}

TEST_CASE("members that disagree on SIZE or too many members keep a gang waiting", "[gang]") {
    auto g3 = gang("train", 3);
    std::vector<GangMember> m{member(1, MemberState::kPending, g3),
                              member(2, MemberState::kPending, g3),
                              member(3, MemberState::kPending, gang("train", 4))};
    auto v = assess_gang(g3, m, 200);
    CHECK(v.state == GangState::kWaiting);
    CHECK_THAT(v.reason, Catch::Contains("jobs 3 give another SIZE than 3"));
    m[2].spec = g3;
    m.push_back(member(4, MemberState::kPending, g3));
    v = assess_gang(g3, m, 200);
    CHECK(v.state == GangState::kWaiting);
    CHECK_THAT(v.reason, Catch::Contains("4 jobs claim it, SIZE is 3"));
}

TEST_CASE("a failed member ends the gang unless it keeps going", "[gang]") {
    auto kill = gang("g", 2);
    auto keep = kill;
    keep.keep_on_failure = true;
    CHECK(gang_member_failed(kill, "FAILED"));
    CHECK(gang_member_failed(kill, "NODE_FAIL"));
    CHECK(gang_member_failed(kill, "CANCELLED"));
    CHECK_FALSE(gang_member_failed(kill, "COMPLETED"));
    CHECK_FALSE(gang_member_failed(keep, "FAILED"));
    CHECK(gang_key(1000, "g") != gang_key(1001, "g"));
}

TEST_CASE("a gang is placed jointly: all members or none", "[gang]") {
    // Three leaves of four 8-GPU hosts (real NDv4 node file); two hosts free on leaf 1,
    // three on leaf 2, four on leaf 3.
    auto g = fat_tree(3, 4, 200, 100, node_file("nccl-topo/ndv4-topo.xml"));
    PlacementEngine engine(g, {}, {}, test::unhurried());
    ClusterState s(g);
    occupy(s, g, {"h1", "h2", "h5"});
    auto part = [&](std::uint32_t id, std::uint32_t nodes) {
        return GangPart{id, pattern_demand(CommPattern::kAllReduce, nodes, 8 * nodes),
                        std::vector<std::uint8_t>(g.host_count(), 1)};
    };
    std::vector<GangPart> three{part(1, 1), part(2, 1), part(3, 2)};
    auto p = place_gang(engine, three, s);
    REQUIRE(p.parts.size() == 3);
    CHECK(p.joint);
    std::set<int> hosts;
    for (const auto &pl : p.parts)
        for (int h : pl.hosts) {
            CHECK(s.usable[h]);
            CHECK(hosts.insert(h).second);  // no host twice
        }
    CHECK(hosts.size() == 4);
    // The engine saw the four hosts as one job: they share one leaf (leaf 3 is free).
    Placement all;
    for (const auto &pl : p.parts)
        all.hosts.insert(all.hosts.end(), pl.hosts.begin(), pl.hosts.end());
    CHECK(leaves_of(g, all).size() == 1);
    CHECK(p.parts[2].hosts.size() == 2);

    // Ten hosts asked for, nine free: nothing is placed, not even the members that fit.
    std::vector<GangPart> too_big{part(1, 4), part(2, 4), part(3, 2)};
    auto none = place_gang(engine, too_big, s);
    CHECK(none.parts.empty());
    CHECK_FALSE(none.reason.empty());
}

TEST_CASE("members with other shapes are placed one after another, largest first", "[gang]") {
    auto g = fat_tree(2, 4, 200, 100, node_file("nccl-topo/ndv4-topo.xml"));
    PlacementEngine engine(g, {}, {}, test::unhurried());
    ClusterState s(g);
    occupy(s, g, {"h1", "h2", "h3", "h5", "h6"});  // h4, h7, h8 free
    std::vector<GangPart> parts{
        {1, pattern_demand(CommPattern::kAllReduce, 1, 4), std::vector<std::uint8_t>(8, 1)},
        {2, pattern_demand(CommPattern::kAllReduce, 2, 16), std::vector<std::uint8_t>(8, 1)}};
    auto p = place_gang(engine, parts, s);
    REQUIRE(p.parts.size() == 2);
    CHECK_FALSE(p.joint);
    // The 2-host member took the pair under one leaf; the small one the host left over.
    CHECK(leaves_of(g, p.parts[1]).size() == 1);
    CHECK(p.parts[0].hosts == std::vector<int>{host(g, "h4")});

    // A member limited to hosts that are taken: the whole gang waits.
    parts[0].usable.assign(8, 0);
    parts[0].usable[host(g, "h1")] = 1;
    auto none = place_gang(engine, parts, s);
    CHECK(none.parts.empty());
    CHECK_THAT(none.reason, Catch::Contains("member 1"));
}

namespace {

const std::string kInputs = SLURM_AI_TEST_INPUTS;

// The mini-cluster's node file on the two-leaf test fabric g1..g4 (4 GPUs each).
void load_service(SelectService &s, const std::string &dir) {
    std::ofstream(dir + "/ai_select.conf") << "NodeTopology=" + kInputs + "/minicluster-node.xml\n";
    auto err = s.load(dir + "/ai_select.conf", kInputs + "/two-leaves.topology.conf",
                      {"g1", "g2", "g3", "g4"});
    INFO((err ? err->message() : std::string()));
    REQUIRE_FALSE(err);
}

SelectGangMember pending_member(std::uint32_t id, const std::vector<const char *> &env) {
    SelectGangMember m;
    m.job = SelectJob{id, 1, 1, 4, 4, 1, 0, env};
    m.facts.submit_time = 1000 + id;
    m.usable.assign(4, 1);
    return m;
}

}  // namespace

TEST_CASE("the select service plans a gang once and holds the nodes of its members",
          "[gang][select]") {
    const test::ScratchDir scratch("gang-plan");
    const std::string dir = scratch.str();
    SelectService s({}, test::kUnhurriedSearch);
    load_service(s, dir);
    const std::vector<const char *> env{"_SLURM_SPANK_OPTION_ai_ai_gang=trio:3:5m"};
    std::vector<SelectNode> view(4, SelectNode{true, 0xf, 1, 0});
    std::vector<SelectGangMember> members{pending_member(11, env), pending_member(12, env)};

    // Two of three submitted: every member waits, with its reason as SystemComment.
    auto o = s.decide_gang(members[0].job, 0, members, view, 1100, true);
    CHECK(o.kind == SelectOutcome::Kind::kWait);
    CHECK_THAT(o.comment, Catch::StartsWith("ai: gang trio waits: 2 of 3"));
    REQUIRE_FALSE(s.save_gangs(dir, 1100));
    auto gangs = nlohmann::json::parse(std::ifstream(dir + "/ai_select/gangs.json"));
    REQUIRE(gangs["gangs"].size() == 1);
    CHECK(gangs["gangs"][0]["status"] == "waiting");
    CHECK(gangs["gangs"][0]["deadline"] == 1011 + 300);

    // The third arrives: the first member tested gets its share of a joint plan.
    members.push_back(pending_member(13, env));
    o = s.decide_gang(members[0].job, 0, members, view, 1101, true);
    REQUIRE(o.kind == SelectOutcome::Kind::kPlaced);
    REQUIRE(o.nodes.size() == 1);
    const int first = o.nodes[0];
    // Other jobs' run-now tests leave out the nodes planned for the three, until each
    // has started.
    auto held = s.gang_reserved(99, 1101);
    CHECK(held.size() == 3);
    CHECK(std::find(held.begin(), held.end(), first) != held.end());
    // Member 12 gets another of them, not member 11's node, whatever the view says.
    o = s.decide_gang(members[1].job, 0, members, view, 1101, true);
    REQUIRE(o.kind == SelectOutcome::Kind::kPlaced);
    CHECK(o.nodes[0] != first);
    CHECK(std::find(held.begin(), held.end(), o.nodes[0]) != held.end());
    for (int w : o.widen)
        CHECK((w == o.nodes[0] || std::find(held.begin(), held.end(), w) == held.end()));

    // Once all have started nothing is held any more.
    s.record(dir, 11, "g1", "", env);
    s.record(dir, 12, "g2", "", env);
    CHECK(s.gang_reserved(99, 1102).size() == 1);
    s.record(dir, 13, "g3", "", env);
    CHECK(s.gang_reserved(99, 1102).empty());
}

TEST_CASE("a gang that does not fit together waits whole, and a stale plan is dropped",
          "[gang][select]") {
    const test::ScratchDir scratch("gang-nofit");
    const std::string dir = scratch.str();
    SelectService s({}, test::kUnhurriedSearch);
    load_service(s, dir);
    const std::vector<const char *> env{"_SLURM_SPANK_OPTION_ai_ai_gang=trio:3"};
    std::vector<SelectGangMember> members{pending_member(21, env), pending_member(22, env),
                                          pending_member(23, env)};
    // Only g1 and g2 can take a member: three do not fit, so none starts.
    std::vector<SelectNode> two_free(4, SelectNode{false, 0, 1, 0});
    two_free[0] = two_free[1] = SelectNode{true, 0xf, 1, 0};
    for (auto &m : members)
        m.usable = {1, 1, 0, 0};
    auto o = s.decide_gang(members[0].job, 0, members, two_free, 3000, true);
    CHECK(o.kind == SelectOutcome::Kind::kWait);
    CHECK_THAT(o.reason, Catch::Contains("do not fit together"));
    CHECK(s.gang_reserved(99, 3000).empty());

    // All fit: planned; nobody starts within the plan's lifetime: the hold is dropped.
    std::vector<SelectNode> all_free(4, SelectNode{true, 0xf, 1, 0});
    for (auto &m : members)
        m.usable = {1, 1, 1, 1};
    REQUIRE(s.decide_gang(members[0].job, 0, members, all_free, 3001, true).kind ==
            SelectOutcome::Kind::kPlaced);
    CHECK(s.gang_reserved(99, 3001).size() == 3);
    CHECK(s.gang_reserved(99, 3001 + GangBook::kPlanTtlS + 1).empty());

    // Planned again, then a member is cancelled before any started: the plan goes.
    REQUIRE(s.decide_gang(members[0].job, 0, members, all_free, 3200, true).kind ==
            SelectOutcome::Kind::kPlaced);
    std::vector<SelectGangMember> two(members.begin(), members.begin() + 2);
    CHECK(s.decide_gang(two[1].job, 0, two, all_free, 3201, true).kind ==
          SelectOutcome::Kind::kWait);
    CHECK(s.gang_reserved(99, 3201).empty());

    // Backfill's will-run test only asks whether the barrier is open.
    auto w = s.decide_gang(members[0].job, 0, members, all_free, 3500, false);
    CHECK(w.kind == SelectOutcome::Kind::kPassthrough);
}

TEST_CASE("the gang file reads back as the plugin wrote it, its state an enum", "[gang][record]") {
    const test::ScratchDir scratch("gang-file");
    const std::string dir = scratch.str();
    // No file yet: no gang has been seen, which is no error.
    auto none = read_gang_file(dir);
    REQUIRE(none);
    CHECK(none.value().empty());

    SelectService s({}, test::kUnhurriedSearch);
    load_service(s, dir);
    const std::vector<const char *> env{"_SLURM_SPANK_OPTION_ai_ai_gang=pair:2:1m:onfail=keep"};
    std::vector<SelectNode> view(4, SelectNode{true, 0xf, 1, 0});
    std::vector<SelectGangMember> members{pending_member(21, env)};
    s.decide_gang(members[0].job, 7, members, view, 1030, true);  // 9 s after submission
    REQUIRE_FALSE(s.save_gangs(dir, 1030));
    auto read = read_gang_file(dir);
    REQUIRE(read);
    REQUIRE(read.value().size() == 1);
    const GangRecord &g = read.value()[0];
    CHECK(g.key == gang_key(7, "pair"));
    CHECK(g.state == GangState::kWaiting);
    CHECK(g.spec.size == 2);
    CHECK(g.spec.timeout_s == 60);
    CHECK(g.spec.keep_on_failure);
    CHECK(g.members == std::set<std::uint32_t>{21});
    CHECK(g.deadline == 1021 + 60);
    // What the plugin writes, the reader gives back whole.
    write_gang_file(dir, read.value());
    auto again = read_gang_file(dir);
    REQUIRE(again);
    CHECK(again.value() == read.value());

    // A status no plugin writes is an error naming the file and the value.
    std::ofstream(gang_file_path(dir))
        << R"({"version":1,"gangs":[{"key":"7:x","user_id":7,"name":"x","size":2,)"
           R"("status":"running"}]})";
    auto bad = read_gang_file(dir);
    REQUIRE_FALSE(bad);
    CHECK_THAT(bad.error().message(), Catch::Contains("gangs.json"));
    CHECK_THAT(bad.error().message(), Catch::Contains("status='running'"));
    CHECK(gang_state_from("timed_out") == GangState::kTimedOut);
    CHECK_FALSE(gang_state_from("Waiting"));
}

TEST_CASE("a member is eligible when pending, not held, past its begin time, dependencies met",
          "[gang]") {
    auto g = gang("e", 2);
    GangMember m = member(1, MemberState::kPending, g);
    CHECK(is_eligible(m, 100));
    m.held = true;
    CHECK_FALSE(is_eligible(m, 100));
    m.held = false;
    m.begin_time = 150;
    CHECK_FALSE(is_eligible(m, 149));
    CHECK(is_eligible(m, 150));
    m.dependencies = 1;
    CHECK_FALSE(is_eligible(m, 200));
    m.dependencies = 0;
    m.state = MemberState::kRunning;
    CHECK_FALSE(is_eligible(m, 200));
}

TEST_CASE("ai-elasticd releases a timed-out gang once and ends a failed gang once", "[gang]") {
    auto g = gang("rl", 3, 600);
    std::vector<GangJob> jobs{{1, MemberState::kPending, "PENDING", false},
                              {2, MemberState::kPending, "PENDING", false}};
    // Before the deadline: nothing to do, both members are waiting.
    auto before = follow_up_gang(g, GangState::kWaiting, 1600, jobs, 1599, false, {});
    CHECK(before.actions.empty());
    CHECK(before.waiting == std::vector<std::uint32_t>{1, 2});
    // At the deadline the pending ones go, with the reason; a second look does nothing.
    auto at = follow_up_gang(g, GangState::kTimedOut, 1600, jobs, 1600, false, {});
    REQUIRE(at.actions.size() == 1);
    CHECK(at.actions[0].cancel == std::vector<std::uint32_t>{1, 2});
    CHECK(at.actions[0].comment ==
          "ai: gang rl timed out after 600 s with 2 of 3 members; released by ai-elasticd");
    CHECK(at.released);
    CHECK(follow_up_gang(g, GangState::kTimedOut, 1600, jobs, 1700, true, {}).actions.empty());

    // Started: member 1 ran and failed; the others are ended with it, once.
    jobs = {{1, MemberState::kEnded, "FAILED", true},
            {2, MemberState::kRunning, "RUNNING", true},
            {3, MemberState::kPending, "PENDING", false}};
    auto failed = follow_up_gang(g, GangState::kStarted, 1600, jobs, 5000, false, {});
    REQUIRE(failed.actions.size() == 1);
    CHECK(failed.actions[0].cancel == std::vector<std::uint32_t>{2, 3});
    CHECK(failed.actions[0].comment ==
          "ai: gang rl: member 1 ended FAILED; ended with it (onfail=kill)");
    CHECK(failed.failures_seen == std::vector<std::uint32_t>{1});
    CHECK(failed.waiting.empty());  // a started gang waits for nothing
    CHECK(follow_up_gang(g, GangState::kStarted, 1600, jobs, 5001, false, {1}).actions.empty());
    // onfail=keep, a member that never ran, or one that completed: nobody is ended.
    auto keep = g;
    keep.keep_on_failure = true;
    CHECK(follow_up_gang(keep, GangState::kStarted, 0, jobs, 5000, false, {}).actions.empty());
    jobs[0].started = false;
    CHECK(follow_up_gang(g, GangState::kStarted, 0, jobs, 5000, false, {}).actions.empty());
    jobs[0] = {1, MemberState::kEnded, "COMPLETED", true};
    CHECK(follow_up_gang(g, GangState::kStarted, 0, jobs, 5000, false, {}).actions.empty());
}

TEST_CASE("the gang file's text parses back without a file, errors naming the source",
          "[gang][record]") {
    GangRecord r;
    r.key = gang_key(5, "pp");
    r.user_id = 5;
    r.spec = gang("pp", 2, 60);
    r.members = {7, 8};
    r.state = GangState::kStarting;
    r.reason = "gang pp: all 2 members pending";
    r.deadline = 1060;
    r.updated = 1001;
    const std::vector<GangRecord> all{r};
    auto back = parse_gang_file(dump_gang_file(all), "text");
    REQUIRE(back);
    CHECK(back.value() == all);
    auto bad = parse_gang_file(R"({"gangs":[{"key":"5:pp","user_id":5,"name":"pp","size":2,)"
                               R"("status":"done"}]})",
                               "/state/ai_select/gangs.json");
    REQUIRE_FALSE(bad);
    CHECK(bad.error().field == "status");
    CHECK(bad.error().value == "done");
    CHECK(bad.error().expected == "waiting, timed_out, starting or started");
    CHECK_THAT(bad.error().message(), Catch::Contains("/state/ai_select/gangs.json"));
    CHECK_FALSE(parse_gang_file("{", "x"));
    auto huge = parse_gang_file(R"({"gangs":[{"key":"5:pp","user_id":5,"name":"pp","size":1e300,)"
                                R"("status":"waiting"}]})",
                                "gangs.json");
    REQUIRE_FALSE(huge);
    CHECK_THAT(huge.error().message(), Catch::Contains("size must be a whole number"));
}
