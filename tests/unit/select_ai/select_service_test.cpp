#include "slurm_ai/select_ai/select_service.hpp"

#include <bit>
#include <csignal>
#include <ctime>
#include <filesystem>
#include <fstream>

#include <unistd.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "slurm_ai/common/state_paths.hpp"
#include "slurm_ai/config/plugin_config.hpp"
#include "slurm_ai/placement/learned_placement.hpp"
#include "slurm_ai/placement/learned_risk.hpp"
#include "slurm_ai/topology/cluster_files.hpp"
#include "scratch_dir.hpp"
#include "search_budget.hpp"

using namespace slurm_ai;

namespace {

const std::string kInputs = SLURM_AI_TEST_INPUTS;

void write(const std::string &path, const std::string &text) {
    std::ofstream(path) << text;
}

const std::vector<std::string> kNodes{"g1", "g2", "g3", "g4"};

// `with` loaded from an ai_select.conf in dir of the minicluster's node and the line `key`,
// `without` from the same without it; both on the two-leaves fabric.
void load_with_and_without(const std::string &dir, const std::string &key, SelectService &with,
                           SelectService &without) {
    const std::string node = "NodeTopology=" + kInputs + "/minicluster-node.xml\n";
    write(dir + "/ai_select.conf", node + key + "\n");
    write(dir + "/plain.conf", node);
    const std::string fabric = kInputs + "/two-leaves.topology.conf";
    REQUIRE_FALSE(without.load(dir + "/plain.conf", fabric, kNodes));
    REQUIRE_FALSE(with.load(dir + "/ai_select.conf", fabric, kNodes));
}

}  // namespace

TEST_CASE("plugin configuration keys and errors", "[config]") {
    auto ok = parse_plugin_config(
        "# comment\nFabric=fabric.conf\nNodeTopology=g[1-2]=a.xml\n"
        "POLICY=tree-bestfit\nTimeBudgetMs=2.5\nDefaultComm=pipeline:stages=4\n"
        "MultiNodeBestFit=no\nDebug=yes  # trailing comment\n"
        "NvlinkDomain=g[1-2]\nnvlinkdomain=Blocks\nNvlinkGbps=7200\nRiskDomainPerDay=0.01\n",
        "/etc/slurm/ai_select.conf", "/etc/slurm/topology.conf");
    REQUIRE(ok.ok());
    CHECK(ok->cluster.fabric == "/etc/slurm/fabric.conf");
    CHECK(ok->cluster.nodes == std::vector<std::string>{"g[1-2]=/etc/slurm/a.xml"});
    CHECK(ok->policy == "tree-bestfit");
    CHECK(ok->engine.time_budget_ms == Approx(2.5));
    CHECK(ok->default_comm->stages == 4);
    CHECK_FALSE(ok->multi_node_best_fit);
    CHECK(ok->debug);
    CHECK(ok->cluster.nvlink_domains == std::vector<std::string>{"g[1-2]", "blocks"});
    CHECK(ok->cluster.nvlink_gpu_gbps == 7200);
    CHECK(ok->risk.domain_per_day == Approx(0.01));
    CHECK(parse_plugin_config("", "x.conf", "/d/topology.conf")->cluster.fabric ==
          "/d/topology.conf");

    struct Bad {
        const char *text, *key;
        int line;
    };
    for (auto b :
         {Bad{"Colour=red\n", "Colour", 1}, Bad{"\n\nPolicy=fastest\n", "Policy", 3},
          Bad{"TimeBudgetMs=-1\n", "TimeBudgetMs", 1}, Bad{"Debug=maybe\n", "Debug", 1},
          Bad{"DefaultComm=allgather\n", "DefaultComm", 1}, Bad{"Fabric=\n", "Fabric", 1},
          Bad{"NvlinkDomain=g[1-\n", "NvlinkDomain", 1}, Bad{"NvlinkGbps=0\n", "NvlinkGbps", 1}}) {
        auto bad = parse_plugin_config(b.text, "ai_select.conf", "t.conf");
        INFO(b.text);
        REQUIRE_FALSE(bad.ok());
        CHECK(bad.error().field == b.key);
        CHECK(bad.error().line == b.line);
        CHECK(bad.error().source == "ai_select.conf");
    }
    auto no_eq = parse_plugin_config("Policy engine\n", "c", "t");
    REQUIRE_FALSE(no_eq.ok());
    CHECK_THAT(no_eq.error().message(), Catch::Contains("Key=Value"));
}

TEST_CASE("the service keeps the last good configuration", "[service]") {
    const test::ScratchDir scratch("service");
    const std::string dir = scratch.str();
    write(dir + "/ai_select.conf", "NodeTopology=" + kInputs + "/minicluster-node.xml\n");
    SelectService s({}, test::kUnhurriedSearch);
    CHECK_FALSE(s.ready());
    auto err = s.load(dir + "/ai_select.conf", kInputs + "/two-leaves.topology.conf", kNodes);
    REQUIRE_FALSE(err);
    REQUIRE(s.ready());
    CHECK(s.config()->policy == "engine");

    write(dir + "/ai_select.conf", "Policy=bogus\n");
    auto bad = s.load(dir + "/ai_select.conf", kInputs + "/two-leaves.topology.conf", kNodes);
    REQUIRE(bad);
    CHECK_THAT(bad->message(), Catch::Contains("Policy='bogus'"));
    CHECK(s.config()->policy == "engine");  // still the good one

    auto missing = s.load(dir + "/ai_select.conf.none", "/nonexistent/topology.conf", kNodes);
    REQUIRE(missing);
    CHECK(s.ready());
}

TEST_CASE("decisions: placement, passthrough and the record", "[service]") {
    const test::ScratchDir scratch("service");
    const std::string dir = scratch.str();
    SelectService s({}, test::kUnhurriedSearch);
    write(dir + "/ai_select.conf", "NodeTopology=" + kInputs + "/minicluster-node.xml\n");
    REQUIRE_FALSE(s.load(dir + "/ai_select.conf", kInputs + "/two-leaves.topology.conf", kNodes));
    std::vector<SelectNode> view(4, SelectNode{true, 0xf, 1, 0});
    view[0].usable = false;  // g1 not a candidate

    SelectJob job{7, 2, 2, 2, 4, 2, 0, {"_SLURM_SPANK_OPTION_ai_ai_comm=allreduce:bytes=1G"}};
    auto o = s.decide(job, view);
    REQUIRE(o.kind == SelectOutcome::Kind::kPlaced);
    CHECK(o.nodes == std::vector<int>{2, 3});  // g3, g4: the leaf with both free
    CHECK_THAT(o.reason, Catch::Contains("placed by engine"));

    s.note_stock(7, "g[2-3]");
    auto summary = s.record(dir, 7, "g[3-4]", "g3:0,1 g4:0,1", job.env);
    CHECK_THAT(summary, Catch::Contains("engine placed g[3-4]"));
    std::ifstream rec(dir + "/ai_select/jobs/7.json");
    auto j = nlohmann::json::parse(rec);
    CHECK(j["decision"]["nodes"] == "g[3-4]");
    CHECK(j["hints"]["comm"]["bytes"] == 1ull << 30);
    CHECK(j["cons_tres_would_choose"] == "g[2-3]");
    // Recording again (a running job at a slurmctld restart) keeps the first record.
    CHECK(s.record(dir, 7, "g[3-4]", "", job.env).empty());

    SelectJob bad{8, 2, 2, 0, 0, 2, 0, {"_SLURM_SPANK_OPTION_ai_ai_comm=allgather"}};
    auto b = s.decide(bad, view);
    CHECK(b.kind == SelectOutcome::Kind::kPassthrough);
    CHECK(b.log_reason);                          // logged once...
    CHECK_FALSE(s.decide(bad, view).log_reason);  // ...not twice
    CHECK_THAT(b.reason, Catch::Contains("invalid hint"));
    // Its record keeps the fallback, classed for ai-metrics.
    s.record(dir, 8, "g[1-2]", "", bad.env);
    auto bad_rec = read_job_record(dir, 8);
    REQUIRE(bad_rec.ok());
    CHECK(bad_rec->fell_back);
    CHECK(bad_rec->fallback_class == FallbackClass::kInvalidHint);

    // A job that never asked the engine (no hints, no GPUs) has no fallback at all.
    SelectJob plain{9, 1, 1, 0, 0, 1, 0, {}};
    CHECK(s.decide(plain, view).kind == SelectOutcome::Kind::kPassthrough);
    s.record(dir, 9, "g2", "", plain.env);
    auto plain_rec = read_job_record(dir, 9);
    REQUIRE(plain_rec.ok());
    CHECK_FALSE(plain_rec->fell_back);
    CHECK_FALSE(plain_rec->fallback_class);
}

TEST_CASE("GPUs Slurm gave on nodes whose topology is unknown or smaller", "[service]") {
    // gres.conf may list GPUs that no NodeTopology describes (g3, g4 here), or more than
    // the topology holds (g2:7); the uplink estimate takes such a node as one host rank.
    const test::ScratchDir scratch("service");
    const std::string dir = scratch.str();
    SelectService s({}, test::kUnhurriedSearch);
    write(dir + "/ai_select.conf", "NodeTopology=g[1-2]=" + kInputs + "/minicluster-node.xml\n");
    REQUIRE_FALSE(s.load(dir + "/ai_select.conf", kInputs + "/two-leaves.topology.conf", kNodes));
    const std::vector<const char *> env{"_SLURM_SPANK_OPTION_ai_ai_comm=allreduce:bytes=1G"};
    auto summary = s.record(dir, 41, "g[1-4]", "g1:0,1,2,3 g2:0,7 g3:0,1,2,3 g4:0,1,2,3", env);
    CHECK_FALSE(summary.empty());
    std::ifstream rec(dir + "/ai_select/jobs/41.json");
    const auto j = nlohmann::json::parse(rec);
    INFO(j.dump());
    CHECK(j["nodes"] == "g[1-4]");
    // The next placement still sees the cluster (and this job's load on it).
    SelectJob next{42, 2, 2, 1, 0, 2, 0, {}};
    next.env = env;
    CHECK(s.decide(next, std::vector<SelectNode>(4, SelectNode{true, 0xf, 1, 0})).kind ==
          SelectOutcome::Kind::kPlaced);
}

TEST_CASE("an elastic job starts within the node range Slurm accepts", "[service][elastic]") {
    const test::ScratchDir scratch("service");
    const std::string dir = scratch.str();
    SelectService s({}, test::kUnhurriedSearch);
    // As large as fits (the goodput rule's size is elastic_test's).
    write(dir + "/ai_select.conf",
          "NodeTopology=" + kInputs + "/minicluster-node.xml\nElasticStart=max\n");
    REQUIRE_FALSE(s.load(dir + "/ai_select.conf", kInputs + "/two-leaves.topology.conf", kNodes));
    const std::vector<SelectNode> all(4, SelectNode{true, 0xf, 1, 0});
    struct Case {
        const char *what, *elastic;
        std::uint32_t slurm_min, slurm_max;
        std::size_t placed, min, max;
    };
    for (auto c : {
             // sbatch -N4 --ai-elastic=2:2: never fewer nodes than slurmctld's minimum.
             Case{"ranges apart", "2:2", 4, 4, 4, 4, 4},
             // sbatch -N2-3 --ai-elastic=1:8: the intersection, as large as fits.
             Case{"ranges overlap", "1:8", 2, 3, 3, 2, 3},
             // sbatch --ai-elastic=2:3 (no --nodes): as typed.
             Case{"no --nodes", "2:3", 1, 500000, 3, 2, 3},
         }) {
        INFO(c.what);
        SelectJob job{21, c.slurm_min, c.slurm_max, 1, 0, 1, 0, {}};
        const std::string opt = std::string("_SLURM_SPANK_OPTION_ai_ai_elastic=") + c.elastic;
        job.env = {opt.c_str()};
        auto o = s.decide(job, all);
        REQUIRE(o.kind == SelectOutcome::Kind::kPlaced);
        CHECK(o.nodes.size() == c.placed);
        CHECK(o.min_nodes == c.min);
        CHECK(o.max_nodes == c.max);
        CHECK(o.req_nodes == c.placed);
        // The range cons_tres gets for will-run and test-only is the same one.
        auto range = s.elastic_start(job.job_id, job.env, {c.slurm_min, c.slurm_max});
        REQUIRE(range);
        CHECK(range->min_nodes == c.min);
        CHECK(range->max_nodes == c.max);
        s.forget(job.job_id);
    }

    // The record keeps MIN:MAX as typed (resizes keep to it) and says how the job started
    // (also in the SystemComment).
    std::vector<const char *> env{"_SLURM_SPANK_OPTION_ai_ai_elastic=2:2:signal=USR2"};
    auto summary = s.record(dir, 22, "g[1-4]", "", env, {4, 4});
    CHECK_THAT(summary,
               Catch::Contains("--ai-elastic=2:2 started as 4:4, within the 4 nodes Slurm"));
    auto j = nlohmann::json::parse(std::ifstream(dir + "/ai_select/jobs/22.json"));
    CHECK(j["hints"]["elastic"]["min_nodes"] == 2);
    CHECK(j["options"]["ai-elastic"] == "2:2:signal=USR2");
    CHECK_THAT(j["elastic_start"].get<std::string>(), Catch::Contains("started as 4:4"));
    // The size CommShare is measured at, which ai-elasticd reads once the job runs.
    CHECK(j["elastic_start_max"] == 4);
    s.record(dir, 23, "g[1-2]", "", env, {1, 500000});
    auto k = nlohmann::json::parse(std::ifstream(dir + "/ai_select/jobs/23.json"));
    CHECK_FALSE(k.contains("elastic_start"));
    CHECK(k["elastic_start_max"] == 2);
    s.record(dir, 24, "g1", "", {}, {1, 1});
    auto rigid = nlohmann::json::parse(std::ifstream(dir + "/ai_select/jobs/24.json"));
    CHECK_FALSE(rigid.contains("elastic_start_max"));
}

TEST_CASE("a task DAG needing more GPUs than the job asks Slurm for is not placed by",
          "[service][dag]") {
    const test::ScratchDir scratch("service");
    const std::string dir = scratch.str();
    SelectService s({}, test::kUnhurriedSearch);
    write(dir + "/ai_select.conf", "NodeTopology=" + kInputs + "/minicluster-node.xml\n");
    REQUIRE_FALSE(s.load(dir + "/ai_select.conf", kInputs + "/two-leaves.topology.conf", kNodes));
    const std::vector<SelectNode> all(4, SelectNode{true, 0xf, 1, 0});
    const std::string dag =
        std::string(kDagEnvName) + R"(={"t":[["a",4,0.01],["b",4,0.01]],"e":[[0,1,67108864]]})";
    // 8 GPUs in the DAG; the job asks Slurm for 2 nodes with 2 GPUs each.
    SelectJob job{31, 2, 2, 2, 4, 2, 0, {dag.c_str()}};
    auto o = s.decide(job, all);
    CHECK(o.kind == SelectOutcome::Kind::kPassthrough);
    CHECK(o.log_reason);
    CHECK_THAT(o.reason, Catch::Contains("needs 8 GPUs, the job asks Slurm for 4"));
    auto summary = s.record(dir, 31, "g[1-2]", "", job.env, {2, 2});
    CHECK_THAT(summary, Catch::Contains("placed by cons_tres on g[1-2] (the task DAG needs 8"));
    // With 4 GPUs on each node the DAG fits what Slurm gives, and places the job.
    SelectJob enough{32, 2, 2, 4, 8, 2, 0, {dag.c_str()}};
    CHECK(s.decide(enough, all).kind == SelectOutcome::Kind::kPlaced);
}

TEST_CASE("failure history survives a save and restore, a corrupt file does not", "[service]") {
    const test::ScratchDir scratch("service");
    const std::string dir = scratch.str();
    SelectService a({}, test::kUnhurriedSearch);
    a.note_failure("g2", 1000);
    a.note_failure("g2", 1100);  // the same outage seen twice counts once
    CHECK(a.failures("g2", 1000) == Approx(1.0));
    CHECK(a.failures("g2", 1000 + kWeekHalfLifeS) == Approx(0.5));
    a.note_failure("g2", 1000 + 7200);
    REQUIRE_FALSE(a.save_state(dir));

    SelectService b({}, test::kUnhurriedSearch);
    REQUIRE_FALSE(b.restore_state(dir));
    CHECK(b.failures("g2", 1000 + 7200) == Approx(a.failures("g2", 1000 + 7200)));

    write(dir + "/ai_select_state.json", "{\"version\": 1, \"failures\": {\"g2\": ");
    SelectService c({}, test::kUnhurriedSearch);
    auto err = c.restore_state(dir);
    REQUIRE(err);
    CHECK_THAT(err->message(),
               Catch::Contains("ai_select_state.json") && Catch::Contains("corrupt"));
    CHECK(c.failures("g2", 0) == 0);
    std::filesystem::remove(dir + "/ai_select_state.json");
    CHECK_FALSE(SelectService().restore_state(dir));  // no file: a first start
}

TEST_CASE("the failure history tells a flaky NIC from a GPU's ECC storm", "[service][failures]") {
    const test::ScratchDir scratch("service");
    const std::string dir = scratch.str();
    SelectService a({}, test::kUnhurriedSearch);
    // DOWN counts, by the class of Slurm's reason; a DRAIN only when its reason names a
    // failing part.
    CHECK(a.note_failure("g1", 1000, "NHC: check_gpu: GPU 2 DBE ECC errors", true));
    CHECK(a.note_failure("g1", 90000, "GPU 2 Xid 48", false));
    CHECK(a.note_failure("g3", 1000, "IB port mlx5_1 link down", false));
    CHECK(a.note_failure("g3", 90000, "Not responding", true));
    CHECK(a.note_failure("g4", 1000, "kernel panic", false));  // software: a named part
    CHECK_FALSE(a.note_failure("g2", 1000, "maintenance window", false));
    CHECK(a.history("g2") == nullptr);
    const HostFailures *g1 = a.history("g1");
    REQUIRE(g1);
    CHECK(g1->by_class[static_cast<std::size_t>(FailureClass::kGpu)] > 1.5);
    const HostFailures *g3 = a.history("g3");
    REQUIRE(g3);
    CHECK(g3->as_of(90000).by_class[static_cast<std::size_t>(FailureClass::kNetwork)] ==
          Approx(std::exp2(-89000 / kWeekHalfLifeS)));
    CHECK(g3->by_class[static_cast<std::size_t>(FailureClass::kOther)] == Approx(1.0));
    // The classes survive the state file (version 2)...
    REQUIRE_FALSE(a.save_state(dir));
    SelectService b({}, test::kUnhurriedSearch);
    REQUIRE_FALSE(b.restore_state(dir));
    REQUIRE(b.history("g1"));
    CHECK(*b.history("g1") == *g1);
    // ...and the first version's file still reads, its counts of class "other".
    write(dir + "/ai_select_state.json",
          R"({"version": 1, "failures": {"g2": {"count": 2, "at": 5000}}})");
    SelectService c({}, test::kUnhurriedSearch);
    REQUIRE_FALSE(c.restore_state(dir));
    CHECK(c.failures("g2", 5000) == Approx(2));
    CHECK(c.history("g2")->by_class[static_cast<std::size_t>(FailureClass::kOther)] == 2);
    write(dir + "/ai_select_state.json",
          R"({"version": 2, "failures": {"g2": {"day": 1, "week": 1, "month": 1, "at": 5,
              "last": 5, "classes": {"gpu": -1}}}})");
    auto bad = SelectService().restore_state(dir);
    REQUIRE(bad);
    CHECK(bad->field == "failures.g2.classes.gpu");
}

TEST_CASE("RiskModel= is used only when it beat the hand-written model", "[service][failures]") {
    const test::ScratchDir scratch("service");
    const std::string dir = scratch.str();
    LearnedRisk m;
    m.w.back() = -4;  // a rate of 0.018 a day everywhere
    m.info.beats_hand_written = false;
    write(dir + "/model.json", m.to_json());
    write(dir + "/ai_select.conf", "NodeTopology=" + kInputs + "/minicluster-node.xml\nRiskModel=model.json\n");
    // A machine so loaded that every read of the monotonic clock finds 10 ms gone (the
    // time budget spent before the search starts): the search counted in work still
    // reaches the host the model draws the job to. CI's ASan run once missed it on time.
    auto racing = std::make_shared<double>(0);
    Clock loaded;
    loaded.steady_ms = [racing] { return *racing += 10; };
    SelectService s(loaded, test::kUnhurriedSearch);
    REQUIRE_FALSE(s.load(dir + "/ai_select.conf", kInputs + "/two-leaves.topology.conf", kNodes));
    CHECK_THAT(s.load_note(), Catch::Contains("not used") && Catch::Contains("model.json"));
    m.info.beats_hand_written = true;
    write(dir + "/model.json", m.to_json());
    REQUIRE_FALSE(s.load(dir + "/ai_select.conf", kInputs + "/two-leaves.topology.conf", kNodes));
    CHECK_THAT(s.load_note(), Catch::Contains("in use"));
    // In use, it decides: a contrary model, whose rate falls with the hosts' weekly count
    // (input 8), puts a job on the node that just failed, where the hand-written model
    // keeps it away.
    const double now = static_cast<double>(std::time(nullptr));
    SelectJob job{11, 1, 1, 2, 2, 1, 0, {"_SLURM_SPANK_OPTION_ai_ai_comm=allreduce:bytes=1G"}};
    const std::vector<SelectNode> view(4, SelectNode{true, 0xf, 1, 0});
    SelectService hand({}, test::kUnhurriedSearch);
    write(dir + "/hand.conf", "NodeTopology=" + kInputs + "/minicluster-node.xml\n");
    REQUIRE_FALSE(hand.load(dir + "/hand.conf", kInputs + "/two-leaves.topology.conf", kNodes));
    for (auto *svc : {&s, &hand})
        REQUIRE(svc->note_failure("g3", now - 60, "GPU Xid 79"));
    auto kept_away = hand.decide(job, view);
    REQUIRE(kept_away.kind == SelectOutcome::Kind::kPlaced);
    CHECK(kept_away.nodes != std::vector<int>{2});
    m.w[8] = 1;                                          // w1[0][8]
    m.w[LearnedRisk::kParameters - 1 - kRiskHidden] = -8;  // w2[0]
    write(dir + "/model.json", m.to_json());
    REQUIRE_FALSE(s.load(dir + "/ai_select.conf", kInputs + "/two-leaves.topology.conf", kNodes));
    auto drawn = s.decide(job, view);
    REQUIRE(drawn.kind == SelectOutcome::Kind::kPlaced);
    CHECK(drawn.nodes == std::vector<int>{2});
    // A broken file is a configuration error naming it; the last good one stays.
    write(dir + "/model.json", "{\"format\": \"something else\"}");
    auto err = s.load(dir + "/ai_select.conf", kInputs + "/two-leaves.topology.conf", kNodes);
    REQUIRE(err);
    CHECK(err->field == "format");
    CHECK(s.ready());
}

TEST_CASE("PlacementModel= is refused unless its file records a win at every judged size",
          "[service][learned]") {
    const test::ScratchDir scratch("service");
    const std::string dir = scratch.str();
    // A model that prefers the emptier leaf: v = tanh(5 x the region's free share before),
    // q = tanh(2): the opposite of the engine's best fit.
    LearnedPlacement m(1);
    m.w[6] = 2;                                       // bq
    m.w[6 + 1 + kPlaceCandidateInputs + 1 + kPlaceRegionInputs + 1] = 5;  // Wv[0][1]
    m.info = {"two-leaves", "by hand", 4, 1, 1, 1, 0, {{8, 1, 1.0, 1.1}, {16, 1, 1.2, 1.1}}};
    write(dir + "/model.json", m.to_json());
    SelectService learned, plain;
    load_with_and_without(dir, "PlacementModel=model.json", learned, plain);
    CHECK_THAT(learned.load_note(), Catch::Contains("PlacementModel=" + dir + "/model.json") &&
                                        Catch::Contains("refused") &&
                                        Catch::Contains("1.200 h against the engine's 1.100 h"));
    // g1 has two of its GPUs free, the others all: best fit puts a 2-GPU job on g1.
    const SelectJob job{12, 1, 1, 2, 2, 1, 0, {}};
    std::vector<SelectNode> view(4, SelectNode{true, 0xf, 1, 0});
    view[0].free_gpus = 0x3;
    const auto engine = plain.decide(job, view);
    REQUIRE(engine.kind == SelectOutcome::Kind::kPlaced);
    CHECK(engine.nodes == std::vector<int>{0});
    CHECK(learned.decide(job, view).nodes == engine.nodes);  // refused: the engine decides
    // Judged better at every size, it is used, and it decides.
    m.info.judged[1].mean_jct_h = 1.0;
    write(dir + "/model.json", m.to_json());
    REQUIRE_FALSE(learned.load(dir + "/ai_select.conf", kInputs + "/two-leaves.topology.conf",
                               kNodes));
    CHECK_THAT(learned.load_note(), Catch::Contains("picks among the engine's candidates"));
    const auto chosen = learned.decide(job, view);
    REQUIRE(chosen.kind == SelectOutcome::Kind::kPlaced);
    REQUIRE(chosen.nodes.size() == 1);
    CHECK(chosen.nodes[0] >= 2);  // the leaf with every GPU free
    // A broken file is a configuration error naming the field.
    write(dir + "/model.json", "{\"format\": \"slurm-ai learned placement scorer\"}");
    auto err = learned.load(dir + "/ai_select.conf", kInputs + "/two-leaves.topology.conf",
                            kNodes);
    REQUIRE(err);
    CHECK(err->field == "version");
}

TEST_CASE("ShapeProfile= is read once at load and spreads a job as it measured fastest",
          "[service][shapes]") {
    const test::ScratchDir scratch("service");
    const std::string dir = scratch.str();
    // The minicluster's hosts have 4 GPUs; 4 of them measured fastest as 2 + 2.
    write(dir + "/shapes.csv", "gpus_per_host,shape,step\n4,4,2.0\n4,22,1.0\n4,1111,1.4\n");
    SelectService measured, plain;
    load_with_and_without(dir, "ShapeProfile=shapes.csv", measured, plain);
    CHECK_THAT(measured.load_note(), Catch::Contains("ShapeProfile=" + dir + "/shapes.csv") &&
                                         Catch::Contains("3 measured shapes"));
    // --gpus=4 on 1 to 4 nodes, every GPU free.
    const SelectJob job{13, 1, 4, 0, 4, 1, 0, {}};
    const std::vector<SelectNode> view(4, SelectNode{true, 0xf, 1, 0});
    const auto by_model = plain.decide(job, view);
    REQUIRE(by_model.kind == SelectOutcome::Kind::kPlaced);
    CHECK(by_model.nodes.size() == 1);
    const auto spread = measured.decide(job, view);
    REQUIRE(spread.kind == SelectOutcome::Kind::kPlaced);
    REQUIRE(spread.nodes.size() == 2);
    for (auto gpus : spread.gpus)
        CHECK(std::popcount(gpus) == 2);
    // Both under one leaf switch: g1 and g2, or g3 and g4.
    CHECK(spread.nodes[0] / 2 == spread.nodes[1] / 2);
    // Another --gpus=4 job: one was asked in the last day (job 13, ClusterState::recent),
    // and 2 + 2 over two whole nodes leaves room for one such job fewer than one whole
    // node does. The measured shape may not take more of it than best fit: one node.
    const SelectJob next{14, 1, 4, 0, 4, 1, 0, {}};
    const auto packed = measured.decide(next, view);
    REQUIRE(packed.kind == SelectOutcome::Kind::kPlaced);
    CHECK(packed.nodes.size() == 1);
    // The cluster test's order on one service: plain, then ShapeHistory=0, then the day.
    {
        SelectService one;
        const std::string fabric = kInputs + "/two-leaves.topology.conf";
        const std::string node = "NodeTopology=" + kInputs + "/minicluster-node.xml\n";
        write(dir + "/a.conf", node);
        write(dir + "/b.conf", node + "ShapeProfile=shapes.csv\nShapeHistory=0\n");
        write(dir + "/c.conf", node + "ShapeProfile=shapes.csv\n");
        REQUIRE_FALSE(one.load(dir + "/a.conf", fabric, kNodes));
        CHECK(one.decide(SelectJob{21, 1, 4, 0, 4, 1, 0, {}}, view).nodes.size() == 1);
        one.forget(21);
        REQUIRE_FALSE(one.load(dir + "/b.conf", fabric, kNodes));
        CHECK(one.decide(SelectJob{22, 1, 4, 0, 4, 1, 0, {}}, view).nodes.size() == 2);
        one.forget(22);
        REQUIRE_FALSE(one.load(dir + "/c.conf", fabric, kNodes));
        CHECK(one.decide(SelectJob{23, 1, 4, 0, 4, 1, 0, {}}, view).nodes.size() == 1);
    }
    // ShapeHistory=0: the queue's sizes only, and it holds no other: 2 + 2 again.
    SelectService forgetful, unused;
    load_with_and_without(dir, "ShapeProfile=shapes.csv\nShapeHistory=0", forgetful, unused);
    REQUIRE(forgetful.decide(job, view).nodes.size() == 2);
    CHECK(forgetful.decide(next, view).nodes.size() == 2);
    // A file that does not read is a configuration error naming its line and field.
    write(dir + "/shapes.csv", "gpus_per_host,shape,step\n4,22,fast\n");
    auto err = measured.load(dir + "/ai_select.conf", kInputs + "/two-leaves.topology.conf",
                             kNodes);
    REQUIRE(err);
    CHECK(err->field == "step");
    CHECK(err->line == 2);
    CHECK(err->source == dir + "/shapes.csv");
}

TEST_CASE("the NVL72 example configuration in contrib makes each block an NVLink domain",
          "[config][nvlink]") {
    auto c =
        load_plugin_config(std::string(SLURM_AI_CONTRIB) + "/slurm.conf.d/ai_select-nvl72.conf",
                           "/etc/slurm/topology.conf");
    INFO((c.ok() ? std::string() : c.error().message()));
    REQUIRE(c.ok());
    auto g = load_cluster(c->cluster);
    INFO((g.ok() ? std::string() : g.error().message()));
    REQUIRE(g.ok());
    REQUIRE(g->fabric().nvlink_domains.size() == 4);
    for (const auto &d : g->fabric().nvlink_domains) {
        CHECK(d.hosts.size() == 18);
        CHECK(d.gpu_gbps == 7200);
    }
    CHECK(g->nvlink_domain(g->host_index("node1101")) !=
          g->nvlink_domain(g->host_index("node1201")));
}

TEST_CASE("the example configuration in contrib is valid and holds the defaults", "[config]") {
    auto c = load_plugin_config(std::string(SLURM_AI_CONTRIB) + "/slurm.conf.d/ai_select.conf",
                                "/etc/slurm/topology.conf");
    INFO((c.ok() ? std::string() : c.error().message()));
    REQUIRE(c.ok());
    PluginConfig defaults;
    CHECK(c->policy == defaults.policy);
    CHECK(c->engine.time_budget_ms == defaults.engine.time_budget_ms);
    CHECK(c->engine.risk_weight == defaults.engine.risk_weight);
    CHECK(c->cost.alpha_inter_s == Approx(defaults.cost.alpha_inter_s));
    CHECK(c->cost.inter_efficiency == Approx(defaults.cost.inter_efficiency));
    CHECK(c->risk.host_per_day == Approx(defaults.risk.host_per_day));
    CHECK(c->multi_node_best_fit == defaults.multi_node_best_fit);
    CHECK(c->debug == defaults.debug);
    CHECK(c->cluster.fabric == "/etc/slurm/topology.conf");
}

TEST_CASE("a job's options are decoded once while its environment stays", "[service][cache]") {
    const test::ScratchDir scratch("service");
    const std::string dir = scratch.str();
    SelectService s({}, test::kUnhurriedSearch);
    write(dir + "/ai_select.conf", "NodeTopology=" + kInputs + "/minicluster-node.xml\n");
    REQUIRE_FALSE(s.load(dir + "/ai_select.conf", kInputs + "/two-leaves.topology.conf", kNodes));
    std::vector<SelectNode> busy(4, SelectNode{true, 0x1, 1, 0});  // one free GPU per node
    const std::string dag =
        std::string(kDagEnvName) + R"(={"t":[["a",2,0.01],["b",2,0.01]],"e":[[0,1,67108864]]})";
    // A pending job that does not fit (2 GPUs on each of 2 nodes), tested pass after pass,
    // as run-now, will-run and by the adapter's questions.
    SelectJob job{41,
                  2,
                  2,
                  2,
                  4,
                  2,
                  0,
                  {"_SLURM_SPANK_OPTION_ai_ai_comm=pipeline",
                   "_SLURM_SPANK_OPTION_ai_ai_locality=soft", dag.c_str()}};
    const auto before = s.option_decodes();
    for (int pass = 0; pass < 20; ++pass) {
        s.decide(job, busy);
        s.elastic_start(job.job_id, job.env, {2, 2});
        CHECK(s.options(job.job_id, job.env).hints.locality);
    }
    CHECK(s.option_decodes() == before + 1);
    CHECK(s.options(job.job_id, job.env).dag->tasks.size() == 2);

    // Another environment (an update of the job, its requeue with new options): decoded
    // again, once.
    std::vector<const char *> changed = job.env;
    changed[1] = "_SLURM_SPANK_OPTION_ai_ai_locality=hard";
    job.env = changed;
    for (int pass = 0; pass < 5; ++pass)
        s.decide(job, busy);
    CHECK(s.option_decodes() == before + 2);
    CHECK(s.options(job.job_id, job.env).hints.locality->hard);
    CHECK(s.option_decodes() == before + 2);

    // The job ends: its decoding goes, and a job reusing the id is decoded afresh.
    CHECK(s.cached_jobs() == 1);
    s.forget(job.job_id);
    CHECK(s.cached_jobs() == 0);
    s.decide(job, busy);
    CHECK(s.option_decodes() == before + 3);
}

TEST_CASE("the options cache stays bounded", "[cache]") {
    JobOptionsCache c;
    const char *env[] = {"_SLURM_SPANK_OPTION_ai_ai_comm=allreduce"};
    for (std::uint32_t id = 1; id <= JobOptionsCache::kMaxJobs + 10; ++id)
        c.get(id, env);
    CHECK(c.size() <= JobOptionsCache::kMaxJobs);
    CHECK(c.size() > JobOptionsCache::kMaxJobs / 4);
    // The most recent jobs stay.
    const auto d = c.decodes();
    c.get(JobOptionsCache::kMaxJobs + 10, env);
    CHECK(c.decodes() == d);
    // A bad option or DAG is decoded once too, with its error kept.
    const char *bad[] = {"_SLURM_SPANK_OPTION_ai_ai_comm=allgather", "AI_DAG={"};
    const auto &o = c.get(7, bad);
    CHECK(o.errors.size() == 1);
    CHECK(o.dag_error);
    CHECK(o.typed.at("ai-comm") == "allgather");  // as typed, bad or not, for the record
    CHECK(env_fingerprint(env) != env_fingerprint(bad));
}

TEST_CASE("a job record reads back as it was written", "[record]") {
    const test::ScratchDir scratch("service");
    const std::string dir = scratch.str();
    JobRecord r;
    r.job_id = 77;
    r.nodes = "g[1-2]";
    r.gpus = "g1:0,1 g2:0,1";
    REQUIRE_FALSE(apply_hint(r.hints, "ai-comm", "pipeline:stages=4,bytes=64M"));
    REQUIRE_FALSE(apply_hint(r.hints, "ai-elastic", "2:8:signal=USR2"));
    REQUIRE_FALSE(apply_hint(r.hints, "ai-gang", "team:3:10m:onfail=keep"));
    REQUIRE_FALSE(apply_hint(r.hints, "ai-checkpoint", "/ckpt/x,signal=USR1@120,keep=2"));
    REQUIRE_FALSE(apply_hint(r.hints, "ai-locality", "soft:30s"));
    r.dag_compact_bytes = 123;
    r.options = {{"ai-comm", "pipeline:stages=4,bytes=64M"}, {"ai-elastic", "2:8:signal=USR2"}};
    r.hint_errors = {"--ai-comm='x': expected y"};
    r.decision =
        JobDecision{"engine",   "g[1-2]", "g1:0 g1:1 g2:0 g2:1", 0.5, 0.25, 0.5, 0.01, "ring", 1.5,
                    "pipeline", 64u << 20};
    r.fell_back = true;
    r.fallback_reason = "why";
    r.fallback_class = FallbackClass::kOutsideFabric;
    r.cons_tres_would_choose = "g[2-3]";
    r.elastic_start = "--ai-elastic=2:8 started as 2:2";
    r.elastic_start_max = 2;
    r.recorded_at = 1795352481;
    write_job_record(dir, r);
    CHECK(job_record_path(dir, 77) == dir + "/ai_select/jobs/77.json");
    auto back = read_job_record(dir, 77);
    REQUIRE(back.ok());
    CHECK(back->hints == r.hints);  // elastic.signal and gang.onfail included
    CHECK(back->hints.elastic->signal == SIGUSR2);
    CHECK(back->dag_compact_bytes == 123);
    CHECK(back->options == r.options);
    CHECK(back->hint_errors == r.hint_errors);
    CHECK(back->decision == r.decision);
    CHECK(back->fallback_reason == "why");
    CHECK(back->fallback_class == FallbackClass::kOutsideFabric);
    CHECK(back->cons_tres_would_choose == "g[2-3]");
    CHECK(back->elastic_start == r.elastic_start);
    CHECK(back->elastic_start_max == 2);
    CHECK(back->recorded_at == r.recorded_at);

    // A checkpoint path may hold bytes that are not UTF-8 (Linux allows any): the record
    // is still written (a fuzzer's find), those bytes as U+FFFD.
    REQUIRE_FALSE(apply_hint(r.hints, "ai-checkpoint", "/ckpt/caf\xe9\xff,keep=2"));
    r.job_id = 80;
    write_job_record(dir, r);
    auto latin = read_job_record(dir, 80);
    REQUIRE(latin.ok());
    CHECK(latin->hints.checkpoint->dir == "/ckpt/caf\xef\xbf\xbd\xef\xbf\xbd");

    // Missing, or not a record: an error naming the file.
    auto none = read_job_record(dir, 78);
    REQUIRE_FALSE(none.ok());
    CHECK_THAT(none.error().message(), Catch::Contains("78.json"));
    write(job_record_path(dir, 79), "{\"job_id\": \"seventy-nine\"}");
    auto bad = read_job_record(dir, 79);
    REQUIRE_FALSE(bad.ok());
    CHECK_THAT(bad.error().message(), Catch::Contains("79.json"));
    write(job_record_path(dir, 81),
          "{\"job_id\": 81, \"fell_back\": true, \"fallback_class\": \"x\"}");
    auto unknown = read_job_record(dir, 81);
    REQUIRE_FALSE(unknown.ok());
    CHECK_THAT(unknown.error().message(), Catch::Contains("fallback_class 'x': expected"));
    // A record from before elastic_start_max: ai-elasticd then measures at the present size.
    write(job_record_path(dir, 82), "{\"job_id\": 82}");
    auto older = read_job_record(dir, 82);
    REQUIRE(older.ok());
    CHECK(older->elastic_start_max == 0);

    // The text alone, without the file system: what the file holds, and errors naming
    // the source they are given.
    auto text = parse_job_record(dump_job_record(r), "record.json");
    REQUIRE(text.ok());
    CHECK(text->hints.checkpoint->dir == "/ckpt/caf\xef\xbf\xbd\xef\xbf\xbd");
    CHECK(dump_job_record(text.value()) == dump_job_record(latin.value()));
    for (const char *not_a_record : {"", "[1]", "{\"job_id\": \"77\"}", "{\"nodes\": \"n1\"}",
                                     "{\"job_id\": 1e300}", "{\"job_id\": -77}"}) {
        INFO(not_a_record);
        auto p = parse_job_record(not_a_record, "record.json");
        REQUIRE_FALSE(p.ok());
        CHECK_THAT(p.error().message(), Catch::StartsWith("record.json: record="));
    }
}

TEST_CASE("running jobs' uplink load steers the next placement off their leaves",
          "[service][contention]") {
    // Four leaves of two hosts. A running job on g1 and g3 all-reduces 8 GiB a step across
    // leaf1's and leaf2's uplinks; with CommShare 0.5 it takes about a fifth of them (its
    // uplinks are busy 0.86 s of a 3.76 s step). One host is left on each leaf: a new
    // 2-node job, which must cross leaves, takes the two on the unloaded leaves.
    const test::ScratchDir scratch("service");
    const std::string dir = scratch.str();
    std::string conf;
    for (int l = 1; l <= 4; ++l)
        conf += "SwitchName=leaf" + std::to_string(l) + " Nodes=g[" + std::to_string(2 * l - 1) +
                "-" + std::to_string(2 * l) + "] LinkSpeed=100\n";
    write(dir + "/four-leaves.conf", conf + "SwitchName=spine Switches=leaf[1-4] LinkSpeed=100\n");
    write(dir + "/ai_select.conf", "NodeTopology=" + kInputs + "/minicluster-node.xml\n");
    const std::vector<std::string> eight{"g1", "g2", "g3", "g4", "g5", "g6", "g7", "g8"};
    SelectService s({}, test::kUnhurriedSearch);
    REQUIRE_FALSE(s.load(dir + "/ai_select.conf", dir + "/four-leaves.conf", eight));
    std::vector<SelectNode> view(8, SelectNode{true, 0xf, 1, 0});
    for (int busy : {0, 2, 4, 6})  // g1, g3 (the running job), g5, g7 (others)
        view[busy] = SelectNode{false, 0, 1, 0};
    SelectJob job{21, 2, 2, 4, 8, 8, 0, {"_SLURM_SPANK_OPTION_ai_ai_comm=allreduce:bytes=1G"}};

    // Alone, any two of g2, g4, g6, g8 cost the same: best fit's first, g2 and g4.
    auto alone = s.decide(job, view);
    REQUIRE(alone.kind == SelectOutcome::Kind::kPlaced);
    CHECK(alone.nodes == std::vector<int>{1, 3});

    const std::vector<const char *> heavy{"_SLURM_SPANK_OPTION_ai_ai_comm=allreduce:bytes=8G"};
    s.record(dir, 20, "g[1,3]", "g1:0,1,2,3 g3:0,1,2,3", heavy);
    auto loaded = s.decide(job, view);
    REQUIRE(loaded.kind == SelectOutcome::Kind::kPlaced);
    CHECK(loaded.nodes == std::vector<int>{5, 7});  // g6 and g8
    // Once the running job ends its load goes with it.
    s.forget(20);
    CHECK(s.decide(job, view).nodes == alone.nodes);
}

TEST_CASE("the select service keeps room for the multi-GPU jobs it has seen waiting",
          "[service][terms]") {
    // Two leaves of two 4-GPU nodes. A 4-GPU job W, whose candidates are g1 and g2 (3 GPUs
    // free each), cannot start. A 2-GPU job X may go anywhere: the tightest leaf is leaf2
    // (g3 4 free, g4 1), where only g3 holds it, breaking the one node W could use.
    const test::ScratchDir scratch("service");
    const std::string dir = scratch.str();
    write(dir + "/ai_select.conf", "NodeTopology=" + kInputs + "/minicluster-node.xml\n");
    const std::vector<SelectNode> for_x{
        SelectNode{true, 0x7, 1, 0}, SelectNode{true, 0x7, 1, 0}, SelectNode{true, 0xf, 1, 0},
        SelectNode{true, 0x1, 1, 0}};
    std::vector<SelectNode> for_w = for_x;
    for_w[2].usable = for_w[3].usable = false;
    const SelectJob w{20, 1, 1, 4, 4, 1, 0, {}}, x{21, 1, 2, 0, 2, 1, 0, {}};

    SelectService alone({}, test::kUnhurriedSearch);
    REQUIRE_FALSE(alone.load(dir + "/ai_select.conf", kInputs + "/two-leaves.topology.conf", kNodes));
    auto first = alone.decide(x, for_x);
    REQUIRE(first.kind == SelectOutcome::Kind::kPlaced);
    CHECK(first.nodes == std::vector<int>{2});  // g3: best fit, nothing waits

    SelectService s({}, test::kUnhurriedSearch);
    REQUIRE_FALSE(s.load(dir + "/ai_select.conf", kInputs + "/two-leaves.topology.conf", kNodes));
    CHECK(s.decide(w, for_w).kind == SelectOutcome::Kind::kPassthrough);  // no node with 4 free
    auto kept = s.decide(x, for_x);
    REQUIRE(kept.kind == SelectOutcome::Kind::kPlaced);
    REQUIRE(kept.nodes.size() == 1);
    CHECK(kept.nodes[0] < 2);  // leaf1: g3 stays whole for W
    CHECK(kept.gpus.size() == 1);
    CHECK(__builtin_popcountll(kept.gpus[0]) == 2);
    // Once W has started (or ended) it no longer holds room.
    s.forget(20);
    CHECK(s.decide(SelectJob{22, 1, 2, 0, 2, 1, 0, {}}, for_x).nodes == std::vector<int>{2});
}

TEST_CASE("a job the engine holds leaves a note with its hints until it starts or ends",
          "[service][pending]") {
    const test::ScratchDir scratch("pending");
    const std::string dir = scratch.str();
    SelectService s({}, test::kUnhurriedSearch);
    write(dir + "/ai_select.conf", "NodeTopology=" + kInputs + "/minicluster-node.xml\n");
    REQUIRE_FALSE(s.load(dir + "/ai_select.conf", kInputs + "/two-leaves.topology.conf", kNodes));
    // One free node under each leaf: a 2-node job that must stay under one leaf waits.
    std::vector<SelectNode> view(4, SelectNode{true, 0xf, 1, 0});
    view[1].free_gpus = 0;
    view[3].free_gpus = 0;
    const std::vector<const char *> env{"_SLURM_SPANK_OPTION_ai_ai_locality=hard",
                                        "_SLURM_SPANK_OPTION_ai_ai_comm=allreduce:bytes=1G"};
    SelectJob job{10, 2, 2, 4, 8, 2, 0, env};
    CHECK(s.decide(job, view).kind != SelectOutcome::Kind::kPlaced);
    CHECK_FALSE(s.save_pending(dir));
    auto note = read_pending_note(dir, 10);
    REQUIRE(note.ok());
    CHECK(note->hints.locality);
    CHECK(note->hints.locality->hard);
    CHECK(note->options.at("ai-locality") == "hard");
    CHECK(parse_pending_note(dump_pending_note(*note), "again").value() == *note);
    // Written once: the next passes, whatever the engine says of the job, write nothing
    // (slurmctld's scheduling passes stay free of file writes).
    std::filesystem::remove(state_paths::pending_note(dir, 10));
    view[0].free_gpus = 0;  // another reason to wait: no free node under the first leaf
    CHECK(s.decide(job, view).kind != SelectOutcome::Kind::kPlaced);
    CHECK_FALSE(s.save_pending(dir));
    CHECK_FALSE(std::filesystem::exists(state_paths::pending_note(dir, 10)));

    // It starts: the note goes with its record.
    s.record(dir, 10, "g[1-2]", "", env);
    CHECK_FALSE(read_pending_note(dir, 10).ok());
    // Another ends while waiting (scancel): the next save removes its note.
    SelectJob other{11, 2, 2, 4, 8, 2, 0, env};
    s.decide(other, view);
    s.save_pending(dir);
    REQUIRE(read_pending_note(dir, 11).ok());
    s.forget(11);
    s.save_pending(dir);
    CHECK_FALSE(read_pending_note(dir, 11).ok());
    CHECK_THAT(read_pending_note(dir, 11).error().message(), Catch::Contains("pending/11.json"));
}

TEST_CASE("a job held for placement is held from its first test, not from its submission",
          "[service][pending]") {
    const test::ScratchDir scratch("held");
    const std::string dir = scratch.str();
    auto now = std::make_shared<double>(1e9);
    SelectService s(Clock{[now] { return *now; }, [] { return 0.0; }});
    write(dir + "/ai_select.conf", "NodeTopology=" + kInputs + "/minicluster-node.xml\n");
    // Two leaves of two nodes under a spine ten times as slow as the nodes' links.
    write(dir + "/slow-spine.conf", "SwitchName=leaf1 Nodes=g[1-2] LinkSpeed=100\n"
                                    "SwitchName=leaf2 Nodes=g[3-4] LinkSpeed=100\n"
                                    "SwitchName=spine Switches=leaf[1-2] LinkSpeed=10\n");
    REQUIRE_FALSE(s.load(dir + "/ai_select.conf", dir + "/slow-spine.conf", kNodes));
    // One free node under each leaf: a 2-node all-reduce can only start across the spine.
    std::vector<SelectNode> view(4, SelectNode{true, 0xf, 1, 0});
    view[1].free_gpus = 0;
    view[3].free_gpus = 0;
    const std::vector<const char *> env{"_SLURM_SPANK_OPTION_ai_ai_comm=allreduce:bytes=1G"};
    // It has waited a day behind other jobs: that buys its placement nothing.
    const SelectJob job{30, 2, 2, 4, 8, 2, 86400, env, 3600};
    auto first = s.decide(job, view);
    REQUIRE(first.kind == SelectOutcome::Kind::kWait);
    CHECK_THAT(first.reason, Catch::Contains("held for placement"));
    // Tested every 60 s (as slurmctld's passes do), it starts once held as long as the
    // reason said it would wait.
    const long limit = std::stol(first.reason.substr(first.reason.find("up to ") + 6));
    REQUIRE(limit > 120);
    double started_after = -1;
    for (double waited = 60; waited <= limit + 120 && started_after < 0; waited += 60) {
        *now = 1e9 + waited;
        if (s.decide(job, view).kind == SelectOutcome::Kind::kPlaced)
            started_after = waited;
    }
    CHECK(started_after >= limit);
    CHECK(started_after <= limit + 60);
    // A job not tested for five minutes (held by its user, say) is held afresh.
    const SelectJob again{31, 2, 2, 4, 8, 2, 86400, env, 3600};
    REQUIRE(s.decide(again, view).kind == SelectOutcome::Kind::kWait);
    *now += limit + 400;
    CHECK(s.decide(again, view).kind == SelectOutcome::Kind::kWait);
}
