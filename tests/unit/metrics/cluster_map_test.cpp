// The live map: the fabric's switches, hosts and NVLink domains from a real GB200 NVL72
// model, jobs marked on the GPUs they hold (from a record's GPU list, or the first free
// ones), pending jobs listed with their reasons, and text escaped.
#include <regex>
#include <string>

#include <catch2/catch.hpp>

#include "placement/placement_fixtures.hpp"
#include "slurm_ai/metrics/cluster_map.hpp"

using namespace slurm_ai;
using namespace slurm_ai::metrics;

namespace {

std::size_t count(const std::string &text, const std::string &what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
        ++n;
    return n;
}

}  // namespace

TEST_CASE("cluster map: NVL72 racks with their leaves, domains and GPUs", "[metrics]") {
    const ClusterGraph g = test::nvl72_racks();
    ClusterMap m = fabric_map(g, "nvl72");
    REQUIRE(m.hosts.size() == 72);
    std::set<std::string> domains, leaves;
    for (const auto &h : m.hosts) {
        CHECK(h.gpu_jobs.size() == 4);
        domains.insert(h.domain);
        leaves.insert(h.leaf);
    }
    CHECK(domains.size() == 4);
    CHECK_FALSE(domains.count(""));
    CHECK(leaves.size() == static_cast<std::size_t>(g.switch_nodes().size()) -
                               static_cast<std::size_t>(std::count_if(
                                   m.switches.begin(), m.switches.end(),
                                   [](const MapSwitch &s) { return s.level > 0; })));
    // Switches come highest level first, and every leaf links up to a switch of level 1
    // when the fabric has one.
    for (std::size_t i = 1; i < m.switches.size(); ++i)
        CHECK(m.switches[i - 1].level >= m.switches[i].level);

    const std::string html = map_html(m, 0);
    CHECK(count(html, "class=\"host ") == 72);
    CHECK(count(html, "class=\"gpu free\"") == 288);
    CHECK(html.find("http-equiv=\"refresh\"") == std::string::npos);
    CHECK(map_html(m, 15).find("content=\"15\"") != std::string::npos);
}

TEST_CASE("cluster map: jobs on the GPUs they hold, pending jobs with their reasons",
          "[metrics]") {
    const ClusterGraph g = test::nvl72_racks();
    ClusterMap m = fabric_map(g, "nvl72");
    const std::string a = m.hosts[0].name, b = m.hosts[1].name, c = m.hosts[2].name;
    MapJob placed{7, "train<&>", "alice", true, a + "," + b, 4, 0.93, "placed by the engine"};
    place_job(m, placed, a + ":0,1 " + b + ":2,3", {a, b}, 2);
    MapJob plain{8, "eval", "bob", true, b + "," + c, 4, std::nullopt, "cons_tres"};
    place_job(m, plain, "", {b, c, "not-a-host"}, 2);
    m.jobs.push_back({9, "big", "carol", false, "", 144, std::nullopt,
                      "needs 36 GPUs in one NVLink domain"});
    CHECK(m.hosts[0].gpu_jobs == std::vector<std::uint32_t>{7, 7, 0, 0});
    CHECK(m.hosts[1].gpu_jobs == std::vector<std::uint32_t>{8, 8, 7, 7});  // first free ones
    CHECK(m.hosts[2].gpu_jobs == std::vector<std::uint32_t>{8, 8, 0, 0});

    const std::string html = map_html(m, 0);
    CHECK(count(html, "data-job=\"7\" x=") == 4);
    CHECK(count(html, "data-job=\"8\" x=") == 4);
    CHECK(count(html, "class=\"gpu free\"") == 288 - 8);
    // The tooltip carries the efficiency and the reason; text is escaped.
    CHECK(html.find("placement efficiency 0.93") != std::string::npos);
    CHECK(html.find("train&lt;&amp;&gt;") != std::string::npos);
    CHECK(html.find("train<&>") == std::string::npos);
    const std::regex pending("<li class=\"pending\" data-job=\"9\">.*needs 36 GPUs in one "
                             "NVLink domain");
    CHECK(std::regex_search(html, pending));
    CHECK(html.find("Pending (1)") != std::string::npos);
    CHECK(html.find("Running (2)") != std::string::npos);
}
