// ai_select.conf's keys come from one table: the parser, its unknown-key and Policy
// messages, the manual's KEYS section (docs/man/ai_select.conf.5) and the check that the
// shipped file (contrib/slurm.conf.d/ai_select.conf) names each key all read it.
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>

#include "slurm_ai/common/file_io.hpp"
#include "slurm_ai/config/plugin_config.hpp"
#include "slurm_ai/placement/placement_engine.hpp"
#include "scratch_dir.hpp"

using namespace slurm_ai;

namespace {

const std::string kManual = std::string(SLURM_AI_CONTRIB) + "/../docs/man/ai_select.conf.5";
const std::string kShipped = std::string(SLURM_AI_CONTRIB) + "/slurm.conf.d/ai_select.conf";

}  // namespace

TEST_CASE("ai_select.conf: the manual's KEYS section is the parser's table",
          "[config]") {
    auto text = read_text_file(kManual);
    REQUIRE(text.ok());
    const std::string page = text.value();
    const auto at = page.find(".SH KEYS\n");
    REQUIRE(at != std::string::npos);
    const auto end = page.find("\n.SH ", at + 1);
    const std::string section =
        page.substr(at, end == std::string::npos ? std::string::npos : end + 1 - at);
    if (std::getenv("SLURM_AI_UPDATE_GOLDEN") && section != plugin_config_manual()) {
        std::ofstream(kManual) << page.substr(0, at) + plugin_config_manual() +
                                      (end == std::string::npos ? "" : page.substr(end + 1));
        FAIL("rewrote " << kManual << "'s KEYS section: review the diff");
    }
    CHECK(section == plugin_config_manual());
}

TEST_CASE("ai_select.conf: the shipped file names every key of the parser's table",
          "[config]") {
    auto text = read_text_file(kShipped);
    REQUIRE(text.ok());
    // Each key on a line of its own, set ("Key=") or shown commented out ("#Key=").
    const std::string file = "\n" + *text;
    for (const auto &k : plugin_config_keys()) {
        INFO(k.name);
        const std::string key(k.name);
        CHECK((file.find("\n" + key + "=") != std::string::npos ||
               file.find("\n#" + key + "=") != std::string::npos));
    }
}

TEST_CASE("ai_select.conf: every key parses, and the messages name every key and policy",
          "[config]") {
    // A value each key accepts, by the form its manual gives.
    auto sample = [](const PluginConfigKey &k) -> std::string {
        const std::string v(k.value);
        if (v == "yes|no")
            return "no";
        if (k.name == "LeasePeriod")
            return "1s";  // the lease times must fit together (below)
        if (k.name == "LeaseFence")
            return "2s";
        if (k.name == "LeaseLapse")
            return "5s";
        if (v == "DURATION")
            return "30s";
        if (v == "PORT")
            return "6900";
        if (v == "goodput|priority")
            return "priority";
        if (v == "goodput|max")
            return "max";
        if (v == "NAME")
            return "tree-bestfit";
        if (v == "SPEC")
            return "allreduce";
        if (v == "HOSTLIST or blocks")
            return "gb-[01-18]";
        if (k.name == "ElasticViewDir")
            return "/var/spool/views";
        if (k.name == "HealthEventFile")
            return "/var/log/nvidia-xid.log";
        if (k.name == "NvlinkGbps")
            return "400";
        if (v.find("PATH") != std::string::npos)
            return "file.xml";
        return "0.5";
    };
    const auto keys = plugin_config_keys();
    REQUIRE(keys.size() >= 29);
    for (const auto &k : keys) {
        INFO(k.name);
        const std::string line = std::string(k.name) + "=" + sample(k) + "\n";
        CHECK(parse_plugin_config(line, "/etc/slurm/ai_select.conf", "topology.conf").ok());
    }
    auto unknown = parse_plugin_config("Fabrik=x\n", "ai_select.conf", "");
    REQUIRE_FALSE(unknown.ok());
    for (const auto &k : keys)
        CHECK(unknown.error().expected.find(std::string(k.name)) != std::string::npos);
    auto policy = parse_plugin_config("Policy=best\n", "ai_select.conf", "");
    REQUIRE_FALSE(policy.ok());
    for (const auto &p : PlacementEngine::policies())
        CHECK(policy.error().expected.find(p) != std::string::npos);
    // Keys are case-insensitive, values checked as before.
    auto c = parse_plugin_config("riskweight=0.5\nTIMEBUDGETMS=2\n", "ai_select.conf", "");
    REQUIRE(c.ok());
    CHECK(c->engine.risk_weight == 0.5);
    CHECK(c->engine.time_budget_ms == 2);
    auto bad = parse_plugin_config("CommShare=1\n", "ai_select.conf", "");
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().message() == "ai_select.conf:1: CommShare='1': expected a number from 0.01 "
                                   "to 0.99");
}

TEST_CASE("ai_select.conf: the lease keys, and times that do not fit together", "[config]") {
    auto c = parse_plugin_config("LeasePeriod=2\nLeaseFence=5s\nLeaseLapse=8s\nLeaseKill=1m\n"
                                 "LeasePort=7000\nHealthEventFile=/var/log/xid.log\n",
                                 "/etc/slurm/ai_select.conf", "");
    REQUIRE(c.ok());
    CHECK(c->lease.times.period_s == 2);
    CHECK(c->lease.times.fence_s == 5);
    CHECK(c->lease.times.lapse_s == 8);
    CHECK(c->lease.times.kill_s == 60);
    CHECK(c->lease.port == 7000);
    CHECK(c->lease.health_file == "/var/log/xid.log");
    CHECK(c->lease.watch);
    CHECK_FALSE(parse_plugin_config("LeaseWatch=no\n", "a.conf", "")->lease.watch);
    // The lease section compares as a whole, its times included: written out in other
    // units it is the same, one time changed it is not.
    auto same = parse_plugin_config("LeasePeriod=2s\nLeaseFence=5\nLeaseLapse=8\nLeaseKill=60\n"
                                    "LeasePort=7000\nHealthEventFile=/var/log/xid.log\n",
                                    "/etc/slurm/ai_select.conf", "");
    REQUIRE(same.ok());
    CHECK(same->lease == c->lease);
    auto other = parse_plugin_config("LeasePeriod=2\nLeaseFence=5s\nLeaseLapse=8s\nLeaseKill=2m\n"
                                     "LeasePort=7000\nHealthEventFile=/var/log/xid.log\n",
                                     "/etc/slurm/ai_select.conf", "");
    REQUIRE(other.ok());
    CHECK_FALSE(other->lease == c->lease);
    // The shipped file's lease keys are at their defaults.
    auto contrib = load_plugin_config(kShipped, "/etc/slurm/topology.conf");
    REQUIRE(contrib.ok());
    CHECK(contrib->lease == LeaseConfig{});
    // A node must fence before its lease can be taken over.
    auto late = parse_plugin_config("LeaseFence=4s\n", "/etc/slurm/ai_select.conf", "");
    REQUIRE_FALSE(late.ok());
    CHECK(late.error().message() == "/etc/slurm/ai_select.conf: LeaseLapse='3': expected longer "
                                    "than LeaseFence (a node fences before its lease is taken "
                                    "over)");
    CHECK(parse_plugin_config("LeasePort=70000\n", "a.conf", "").error().field == "LeasePort");
    CHECK(parse_plugin_config("LeasePort=68.5\n", "a.conf", "").error().field == "LeasePort");
    CHECK(parse_plugin_config("HealthEventFile=xid.log\n", "a.conf", "").error().field ==
          "HealthEventFile");
    CHECK(parse_plugin_config("LeasePeriod=0\n", "a.conf", "").error().field == "LeasePeriod");
}

TEST_CASE("the files beside slurm.conf: topology.yaml first where Slurm reads it",
          "[config]") {
    const test::ScratchDir scratch("beside");
    const std::string dir = scratch.str();
    auto files = beside_slurm_conf(dir + "/slurm.conf", true);
    CHECK(files.ai_conf == dir + "/ai_select.conf");
    CHECK(files.fabric == dir + "/topology.conf");  // no topology.yaml
    std::ofstream(dir + "/topology.yaml") << "topology: []\n";
    CHECK(beside_slurm_conf(dir + "/slurm.conf", true).fabric == dir + "/topology.yaml");
    // Slurm before 25.05 reads no topology.yaml, whatever the folder holds.
    CHECK(beside_slurm_conf(dir + "/slurm.conf", false).fabric == dir + "/topology.conf");
    CHECK(beside_slurm_conf("slurm.conf", false).ai_conf == "./ai_select.conf");
}
