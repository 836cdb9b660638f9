// Rail-optimized fabrics: hosts with several InfiniBand NICs, each on its own leaf, read
// from ibnetdiscover (the real NDR fabric of DGX hosts in topograph's example.out, and
// small hand-made ones whose rails are known), with the rails inferred from the cabling.
#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "slurm_ai/topology/fabric.hpp"

using namespace slurm_ai;

namespace {

const std::string kExample = std::string(SLURM_AI_DATA_DIR) + "/fabric/topograph/example.out";

// The rail of each NIC (link) of host `name`, keyed by the NIC's device name.
std::map<std::string, int> rails_of_host(const Fabric &f, const std::string &name) {
    std::map<std::string, int> out;
    const int h = f.find(name);
    REQUIRE(h >= 0);
    for (int li : f.links_of[static_cast<std::size_t>(h)]) {
        const auto &l = f.links[static_cast<std::size_t>(li)];
        out[l.device] = l.rail;
    }
    return out;
}

// A switch block of ibnetdiscover with its host ports, and a CA block per NIC.
struct Cable {
    std::string host, device, hca_guid;  // hca_guid: 16 hex digits
    std::string leaf_guid;
    int leaf_port;
};

std::string ibnetdiscover(const std::vector<std::string> &leaves, const std::vector<Cable> &cables,
                          bool with_spine = true) {
    std::string out;
    const std::string spine = "5000000000000001";
    for (std::size_t i = 0; i < leaves.size(); ++i) {
        out += "switchguid=0x" + leaves[i] + "\n";
        out += "Switch\t40 \"S-" + leaves[i] + "\"\t\t# \"leaf-" + std::to_string(i) +
               "\" enhanced port 0 lid " + std::to_string(10 + i) + " lmc 0\n";
        for (const auto &c : cables)
            if (c.leaf_guid == leaves[i])
                out += "[" + std::to_string(c.leaf_port) + "]\t\"H-" + c.hca_guid + "\"[1](" +
                       c.hca_guid + ")\t\t# \"" + c.host + " " + c.device + "\" lid 100 4xNDR\n";
        if (with_spine)
            out += "[40]\t\"S-" + spine + "\"[" + std::to_string(i + 1) +
                   "]\t\t# \"spine\" lid 9 4xNDR\n";
        out += "\n";
    }
    if (with_spine) {
        out += "Switch\t40 \"S-" + spine + "\"\t\t# \"spine\" enhanced port 0 lid 9 lmc 0\n";
        for (std::size_t i = 0; i < leaves.size(); ++i)
            out += "[" + std::to_string(i + 1) + "]\t\"S-" + leaves[i] + "\"[40]\t\t# \"leaf-" +
                   std::to_string(i) + "\" lid " + std::to_string(10 + i) + " 4xNDR\n";
        out += "\n";
    }
    for (const auto &c : cables) {
        out += "caguid=0x" + c.hca_guid + "\n";
        out += "Ca\t1 \"H-" + c.hca_guid + "\"\t\t# \"" + c.host + " " + c.device + "\"\n";
        out += "[1](" + c.hca_guid + ") \t\"S-" + c.leaf_guid + "\"[" +
               std::to_string(c.leaf_port) + "]\t\t# lid 100 lmc 0 \"leaf\" lid 10 4xNDR\n\n";
    }
    return out;
}

}  // namespace

// example.out: 31 IBLEAF switches named <rack>-P1-IBLEAF-<rail>-<unit> and 9 IBSPINEs, DGX
// hosts whose CAs say "<host> mlx5_N" or "<host> HCA-N" (rails 1, 2, 3, 4 are mlx5_0, 1, 4,
// 5 or HCA-1, 2, 5, 6), 69 CAs with the factory's description, and a SHARP aggregation
// node in every switch.
TEST_CASE("ibnetdiscover example.out: DGX hosts on 4 rails, as the leaves are named",
          "[topology][fabric][rails]") {
    auto parsed = load_ibnetdiscover(kExample);
    REQUIRE(parsed.ok());
    const Fabric &f = parsed.value();

    // The aggregation nodes are part of their switches: the spines are spines.
    for (int h : f.hosts())
        CHECK(f.nodes[static_cast<std::size_t>(h)].description.find("Aggregation Node") ==
              std::string::npos);
    CHECK(f.max_level() == 1);
    int spines = 0, leaves = 0;
    for (int sw : f.switches()) {
        const auto &n = f.nodes[static_cast<std::size_t>(sw)];
        const bool spine = n.description.find("IBSPINE") != std::string::npos;
        CHECK(n.level == (spine ? 1 : 0));
        (spine ? spines : leaves) += 1;
    }
    CHECK(spines == 9);
    CHECK(leaves == 31);

    // A host's CAs are one host, named by the description; the factory-named CAs stay
    // one host each (nothing says whose they are).
    CHECK(f.hosts().size() == 191);
    CHECK(rails_of_host(f, "a08-p1-dgx-04-c17") ==
          std::map<std::string, int>{{"mlx5_0", 0}, {"mlx5_1", 1}, {"mlx5_4", 2}, {"mlx5_5", 3}});

    // Every leaf of rail r is an IBLEAF-<r+1>-xx; every leaf with hosts is on a rail.
    REQUIRE(f.rails.size() == 4);
    std::size_t on_rails = 0;
    for (std::size_t r = 0; r < f.rails.size(); ++r) {
        const std::string tag = "IBLEAF-0" + std::to_string(r + 1) + "-";
        for (int leaf : f.rails[r]) {
            INFO("rail " << r << ": " << f.nodes[static_cast<std::size_t>(leaf)].description);
            CHECK(f.nodes[static_cast<std::size_t>(leaf)].description.find(tag) !=
                  std::string::npos);
            CHECK(f.rail_of_leaf(leaf) == static_cast<int>(r));
        }
        on_rails += f.rails[r].size();
    }
    CHECK(on_rails == 31);

    // 109 hosts have one NIC on each of the 4 rails.
    int full = 0;
    for (int h : f.hosts()) {
        std::multiset<int> rails;
        for (int li : f.links_of[static_cast<std::size_t>(h)])
            rails.insert(f.links[static_cast<std::size_t>(li)].rail);
        full += rails == std::multiset<int>{0, 1, 2, 3};
    }
    CHECK(full == 109);

    nlohmann::json j = f;
    CHECK(j["rails"] == 4);
    CHECK(j["rail_leaves"].size() == 4);
}

TEST_CASE("rails of a small fabric: 2 hosts, 2 NICs each, one leaf per rail",
          "[topology][fabric][rails]") {
    const std::string l0 = "1000000000000000", l1 = "1000000000000001";
    auto f = parse_ibnetdiscover(
        ibnetdiscover({l0, l1}, {{"gpu1", "mlx5_0", "a000000000000001", l0, 1},
                                 {"gpu1", "mlx5_1", "a000000000000002", l1, 1},
                                 {"gpu2", "mlx5_0", "a000000000000003", l0, 2},
                                 {"gpu2", "mlx5_1", "a000000000000004", l1, 2}}),
        "two-rails");
    INFO((f ? "" : f.error().message()));
    REQUIRE(f.ok());
    CHECK(f->hosts().size() == 2);
    REQUIRE(f->rails.size() == 2);
    CHECK(f->rails[0] == std::vector<int>{f->find("S-" + l0)});
    CHECK(f->rails[1] == std::vector<int>{f->find("S-" + l1)});
    CHECK(rails_of_host(*f, "gpu1") == std::map<std::string, int>{{"mlx5_0", 0}, {"mlx5_1", 1}});
    CHECK(rails_of_host(*f, "gpu2") == std::map<std::string, int>{{"mlx5_0", 0}, {"mlx5_1", 1}});
    CHECK(f->nodes[static_cast<std::size_t>(f->find("gpu1"))].ports == 2);
}

// Rail k is device mlx5_k on each host. In unit B, b3 and b5 lack mlx5_1, so their
// mlx5_2 is their second NIC by position, and b4 names its NICs HCA-1.. (rail k is
// HCA-(k+1)). By position alone leaf b2 ties between rails 1 and 2 and goes to rail 1;
// mlx5_2 is rail 2 on most hosts, which puts it back on rail 2.
TEST_CASE("rails: a missing NIC and another naming do not split a rail",
          "[topology][fabric][rails]") {
    const std::string a0 = "1000000000000a00", a1 = "1000000000000a01", a2 = "1000000000000a02";
    const std::string b0 = "1000000000000b00", b1 = "1000000000000b01", b2 = "1000000000000b02";
    std::vector<Cable> cables;
    int guid = 1;
    auto cable = [&](const std::string &host, const std::string &dev, const std::string &leaf,
                     int port) {
        char hex[17];
        std::snprintf(hex, sizeof hex, "c%015x", guid++);
        cables.push_back({host, dev, hex, leaf, port});
    };
    for (int h = 1; h <= 4; ++h) {  // unit A: mlx5_0..2 on leaves a0..a2
        cable("a" + std::to_string(h), "mlx5_0", a0, h);
        cable("a" + std::to_string(h), "mlx5_1", a1, h);
        cable("a" + std::to_string(h), "mlx5_2", a2, h);
    }
    cable("b1", "mlx5_0", b0, 1);  // unit B: b1 as the rest
    cable("b1", "mlx5_1", b1, 1);
    cable("b1", "mlx5_2", b2, 1);
    for (const char *h : {"b3", "b5"}) {  // no mlx5_1
        cable(h, "mlx5_0", b0, h[1] - '0');
        cable(h, "mlx5_2", b2, h[1] - '0');
    }
    cable("b4", "HCA-1", b0, 4);  // h4: another naming, the same cabling
    cable("b4", "HCA-2", b1, 4);
    cable("b4", "HCA-3", b2, 4);
    cable("a9", "mlx5_2", a2, 9);  // a host with one NIC: on the rail of its leaf
    auto f = parse_ibnetdiscover(ibnetdiscover({a0, a1, a2, b0, b1, b2}, cables), "shifted");
    INFO((f ? "" : f.error().message()));
    REQUIRE(f.ok());
    REQUIRE(f->rails.size() == 3);
    for (int k = 0; k < 3; ++k) {
        std::vector<int> want{f->find("S-" + std::vector<std::string>{a0, a1, a2}[k]),
                              f->find("S-" + std::vector<std::string>{b0, b1, b2}[k])};
        std::sort(want.begin(), want.end());
        CHECK(f->rails[static_cast<std::size_t>(k)] == want);
    }
    CHECK(rails_of_host(*f, "b3") == std::map<std::string, int>{{"mlx5_0", 0}, {"mlx5_2", 2}});
    CHECK(rails_of_host(*f, "b4") ==
          std::map<std::string, int>{{"HCA-1", 0}, {"HCA-2", 1}, {"HCA-3", 2}});
    CHECK(rails_of_host(*f, "a9") == std::map<std::string, int>{{"mlx5_2", 2}});
}

TEST_CASE("no rails where every host has one NIC, or one leaf", "[topology][fabric][rails]") {
    const std::string l0 = "1000000000000000", l1 = "1000000000000001";
    auto single =
        parse_ibnetdiscover(ibnetdiscover({l0, l1}, {{"n1", "mlx5_0", "a000000000000001", l0, 1},
                                                     {"n2", "mlx5_0", "a000000000000002", l1, 1}}),
                            "single");
    REQUIRE(single.ok());
    CHECK(single->rails.empty());
    for (const auto &l : single->links)
        CHECK(l.rail == -1);
    // Two NICs of a host on one leaf are more bandwidth, not two rails.
    auto bonded = parse_ibnetdiscover(ibnetdiscover({l0},
                                                    {{"n1", "mlx5_0", "a000000000000001", l0, 1},
                                                     {"n1", "mlx5_1", "a000000000000002", l0, 2}},
                                                    false),
                                      "bonded");
    REQUIRE(bonded.ok());
    CHECK(bonded->hosts().size() == 1);
    CHECK(bonded->rails.empty());
    // The GUID map still names hosts; the descriptions then only give the devices.
    GuidMap map{{"a000000000000001", "node-a"}, {"a000000000000002", "node-a"}};
    auto mapped =
        parse_ibnetdiscover(ibnetdiscover({l0, l1}, {{"x", "mlx5_0", "a000000000000001", l0, 1},
                                                     {"y", "mlx5_1", "a000000000000002", l1, 1}}),
                            "mapped", &map);
    REQUIRE(mapped.ok());
    CHECK(mapped->find("x") < 0);
    CHECK(rails_of_host(*mapped, "node-a") ==
          std::map<std::string, int>{{"mlx5_0", 0}, {"mlx5_1", 1}});
}
