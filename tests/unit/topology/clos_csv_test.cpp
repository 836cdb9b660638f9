// A Clos fabric host by host: Alibaba's Lingjun topo.csv (847 hosts under 119 ToRs, 3
// aggregation switches and 1 core), read as the three-level tree it is.
#include <algorithm>
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include "slurm_ai/topology/fabric.hpp"
#include "slurm_ai/topology/topology_file.hpp"

using namespace slurm_ai;

namespace {
const std::string kLingjun = std::string(SLURM_AI_DATA_DIR) + "/fabric/lingjun-topo.csv";
}  // namespace

TEST_CASE("Lingjun topo.csv: 847 hosts under 119 ToRs, 3 aggregation switches, 1 core",
          "[topology][clos]") {
    auto file = load_topology_file(kLingjun);
    INFO((file ? "" : file.error().message()));
    REQUIRE(file.ok());
    REQUIRE(std::holds_alternative<Fabric>(file.value()));
    const Fabric &f = std::get<Fabric>(file.value());
    CHECK(f.format == "clos-csv");
    CHECK(f.hosts().size() == 847);
    CHECK(f.max_level() == 2);
    int tors = 0, aggregation = 0, cores = 0;
    for (int sw : f.switches()) {
        const auto &n = f.nodes[static_cast<std::size_t>(sw)];
        switch (n.level) {
            case 0: {
                ++tors;
                // ToR names repeat under each aggregation switch: each is "<PSW>-<ASW>".
                CHECK((n.name.starts_with("P8-") || n.name.starts_with("P10-") ||
                       n.name.starts_with("P12-")));
                const auto hosts = f.switch_stats(sw).down_gbps / 100.0;
                CHECK(hosts >= 2);
                CHECK(hosts <= 8);
                break;
            }
            case 1:
                ++aggregation;
                CHECK((n.name == "P8" || n.name == "P10" || n.name == "P12"));
                break;
            default:
                ++cores;
                CHECK(n.name == "G6");
        }
    }
    CHECK(tors == 119);
    CHECK(aggregation == 3);
    CHECK(cores == 1);
    // Every host has one link, to its ToR.
    for (int h : f.hosts())
        CHECK(f.links_of[static_cast<std::size_t>(h)].size() == 1);
    // Written as topology.conf, it reads back as the same tree.
    auto again = parse_topology_conf(write_topology_conf(f), "written.conf");
    REQUIRE(again.ok());
    CHECK(again->hosts().size() == 847);
    CHECK(again->switches().size() == 123);
    CHECK(again->max_level() == 2);
}

TEST_CASE("Clos CSV: names unique under their parent stay as they are", "[topology][clos]") {
    auto f = parse_clos_csv("host,spine,leaf\nn1,s1,l1\nn2,s1,l1\nn3,s2,l2\n", "t.csv");
    REQUIRE(f.ok());
    CHECK(f->find("l1") >= 0);
    CHECK(f->find("s2-l2") < 0);
    CHECK(f->nodes[static_cast<std::size_t>(f->find("s1"))].level == 1);
}

TEST_CASE("Clos CSV: bad rows are refused with the column, the value and the line",
          "[topology][clos]") {
    struct Case {
        const char *text, *field, *value;
        int line;
    };
    for (const auto &c : {
             Case{"ip,DSW,PSW,ASW\nh1,G6,P8\n", "row", "h1,G6,P8", 2},
             Case{"ip,DSW,PSW,ASW\nh1,G6,P8,S1\n# again\nh1,G6,P8,S2\n", "ip", "h1", 4},
             Case{"ip,DSW,PSW,ASW\nh 1,G6,P8,S1\n", "ip", "h 1", 2},
             Case{"ip,DSW,PSW,ASW\nh1,G6,,S1\n", "PSW", "", 2},
             Case{"ip,DSW,PSW,ASW\nh1,G6,P8,S1\nS1,G6,P8,S2\n", "ip", "S1", 3},
             Case{"ip,DSW,PSW,ASW\nh1,G6,P8,S1\nh2,G6,P10,"
                  "S1234567890123456789012345678901234567890123456789012345678901\n"
                  "h3,G6,P8,S1234567890123456789012345678901234567890123456789012345678901\n",
                  "ASW", "P10-S1234567890123456789012345678901234567890123456789012345678901", 3},
             Case{"ip,DSW\n", "header", "", 0},
         }) {
        INFO(c.text);
        auto r = parse_clos_csv(c.text, "bad.csv");
        if (std::string(c.field) == "header") {
            // A header and no rows is an empty fabric, not an error.
            REQUIRE(r.ok());
            CHECK(r->nodes.empty());
            continue;
        }
        REQUIRE_FALSE(r.ok());
        CHECK(r.error().field == c.field);
        CHECK(r.error().value == c.value);
        CHECK(r.error().line == c.line);
        CHECK(r.error().source == "bad.csv");
    }
    auto no_header = parse_clos_csv("", "empty.csv");
    REQUIRE_FALSE(no_header.ok());
    CHECK(no_header.error().field == "header");
    CHECK_FALSE(looks_like_clos_csv("SwitchName=s1 Nodes=n1"));
    CHECK_FALSE(looks_like_clos_csv("ip"));
    CHECK(looks_like_clos_csv("ip,DSW,PSW,ASW"));
}
