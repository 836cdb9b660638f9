#include "slurm_ai/select_service.hpp"

#include <filesystem>
#include <fstream>

#include <unistd.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "slurm_ai/plugin_config.hpp"

using namespace slurm_ai;

namespace {

const std::string kInputs = SLURM_AI_TEST_INPUTS;

std::string temp_dir() {
    auto d = std::filesystem::temp_directory_path() /
             ("slurm-ai-test-" + std::to_string(::getpid()) + "-" +
              std::to_string(reinterpret_cast<std::uintptr_t>(&kInputs) & 0xffff));
    std::filesystem::create_directories(d);
    return d.string();
}

void write(const std::string &path, const std::string &text) {
    std::ofstream(path) << text;
}

const std::vector<std::string> kNodes{"g1", "g2", "g3", "g4"};

}  // namespace

TEST_CASE("plugin configuration keys and errors", "[config]") {
    auto ok = parse_plugin_config(
        "# comment\nFabric=fabric.conf\nNodeTopology=g[1-2]=a.xml\n"
        "POLICY=tree-bestfit\nTimeBudgetMs=2.5\nDefaultComm=pipeline:stages=4\n"
        "MultiNodeBestFit=no\nDebug=yes  # trailing comment\n",
        "/etc/slurm/ai_select.conf", "/etc/slurm/topology.conf");
    REQUIRE(ok.ok());
    CHECK(ok->cluster.fabric == "/etc/slurm/fabric.conf");
    CHECK(ok->cluster.nodes == std::vector<std::string>{"g[1-2]=/etc/slurm/a.xml"});
    CHECK(ok->policy == "tree-bestfit");
    CHECK(ok->engine.time_budget_ms == Approx(2.5));
    CHECK(ok->default_comm->stages == 4);
    CHECK_FALSE(ok->multi_node_best_fit);
    CHECK(ok->debug);
    CHECK(parse_plugin_config("", "x.conf", "/d/topology.conf")->cluster.fabric ==
          "/d/topology.conf");

    struct Bad {
        const char *text, *key;
        int line;
    };
    for (auto b :
         {Bad{"Colour=red\n", "Colour", 1}, Bad{"\n\nPolicy=fastest\n", "Policy", 3},
          Bad{"TimeBudgetMs=-1\n", "TimeBudgetMs", 1}, Bad{"Debug=maybe\n", "Debug", 1},
          Bad{"DefaultComm=allgather\n", "DefaultComm", 1}, Bad{"Fabric=\n", "Fabric", 1}}) {
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
    auto dir = temp_dir();
    write(dir + "/ai_select.conf", "NodeTopology=" + kInputs + "/minicluster-node.xml\n");
    SelectService s;
    CHECK_FALSE(s.ready());
    auto err = s.load(dir + "/ai_select.conf", kInputs + "/two-leaves.topology.conf", kNodes);
    REQUIRE_FALSE(err);
    REQUIRE(s.ready());
    CHECK(s.config()->policy == "engine");

    write(dir + "/ai_select.conf", "Policy=bogus\n");
    auto bad = s.load(dir + "/ai_select.conf", kInputs + "/two-leaves.topology.conf", kNodes);
    REQUIRE(bad);
    CHECK_THAT(*bad, Catch::Contains("Policy"));
    CHECK(s.config()->policy == "engine");  // still the good one

    auto missing = s.load(dir + "/ai_select.conf.none", "/nonexistent/topology.conf", kNodes);
    REQUIRE(missing);
    CHECK(s.ready());
    std::filesystem::remove_all(dir);
}

TEST_CASE("decisions: placement, passthrough and the record", "[service]") {
    auto dir = temp_dir();
    SelectService s;
    write(dir + "/ai_select.conf", "NodeTopology=" + kInputs + "/minicluster-node.xml\n");
    REQUIRE_FALSE(s.load(dir + "/ai_select.conf", kInputs + "/two-leaves.topology.conf", kNodes));
    std::vector<SelectNode> view(4, SelectNode{true, 0xf, 1});
    view[0].usable = false;  // g1 not a candidate

    SelectJob job{7, 2, 2, 2, 4, 2, 0, {"_SLURM_SPANK_OPTION_ai_ai_comm=allreduce:bytes=1G"}};
    auto o = s.decide(job, view);
    REQUIRE(o.kind == SelectOutcome::Kind::kPlaced);
    CHECK(o.nodes == std::vector<int>{2, 3});  // g3, g4: the leaf with both free
    CHECK_THAT(o.reason, Catch::Contains("placed by engine"));

    auto summary = s.record(dir, 7, "g[3-4]", "g3:0,1 g4:0,1", job.env, "g[2-3]");
    CHECK_THAT(summary, Catch::Contains("engine placed g[3-4]"));
    std::ifstream rec(dir + "/ai_select/jobs/7.json");
    auto j = nlohmann::json::parse(rec);
    CHECK(j["decision"]["nodes"] == "g[3-4]");
    CHECK(j["hints"]["comm"]["bytes"] == 1ull << 30);
    CHECK(j["cons_tres_would_choose"] == "g[2-3]");
    // Recording again (a running job at a slurmctld restart) keeps the first record.
    CHECK(s.record(dir, 7, "g[3-4]", "", job.env, "").empty());

    SelectJob bad{8, 2, 2, 0, 0, 2, 0, {"_SLURM_SPANK_OPTION_ai_ai_comm=allgather"}};
    auto b = s.decide(bad, view);
    CHECK(b.kind == SelectOutcome::Kind::kPassthrough);
    CHECK(b.log_reason);                          // logged once...
    CHECK_FALSE(s.decide(bad, view).log_reason);  // ...not twice
    CHECK_THAT(b.reason, Catch::Contains("invalid hint"));

    SelectJob plain{9, 1, 1, 0, 0, 1, 0, {}};
    CHECK(s.decide(plain, view).kind == SelectOutcome::Kind::kPassthrough);
    std::filesystem::remove_all(dir);
}

TEST_CASE("failure history survives a save and restore, a corrupt file does not", "[service]") {
    auto dir = temp_dir();
    SelectService a;
    a.note_failure("g2", 1000);
    a.note_failure("g2", 1100);  // the same outage seen twice counts once
    CHECK(a.failures("g2", 1000) == Approx(1.0));
    CHECK(a.failures("g2", 1000 + kFailureHalfLifeS) == Approx(0.5));
    a.note_failure("g2", 1000 + 7200);
    REQUIRE_FALSE(a.save_state(dir));

    SelectService b;
    REQUIRE_FALSE(b.restore_state(dir));
    CHECK(b.failures("g2", 1000 + 7200) == Approx(a.failures("g2", 1000 + 7200)));

    write(dir + "/ai_select_state.json", "{\"version\": 1, \"failures\": {\"g2\": ");
    SelectService c;
    auto err = c.restore_state(dir);
    REQUIRE(err);
    CHECK_THAT(*err, Catch::Contains("corrupt"));
    CHECK(c.failures("g2", 0) == 0);
    std::filesystem::remove(dir + "/ai_select_state.json");
    CHECK_FALSE(SelectService().restore_state(dir));  // no file: a first start
    std::filesystem::remove_all(dir);
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
