// NVLink domains and Slurm's block topology: topograph's model YAML (every model in
// ../shared/data/fabric/topograph), topology.conf's BlockName=/BlockSizes= form, and the
// tree and block topology.conf written from them, checked against the configs topograph
// itself generates for large.yaml.
#include <map>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "slurm_ai/common/file_io.hpp"
#include "slurm_ai/topology/fabric.hpp"
#include "slurm_ai/topology/topology_file.hpp"

using namespace slurm_ai;

namespace {

const std::string kDir = std::string(SLURM_AI_DATA_DIR) + "/fabric/topograph/";

Fabric model(const std::string &name) {
    auto f = load_topograph_model(kDir + name);
    INFO((f ? "" : f.error().message()));
    REQUIRE(f.ok());
    return std::move(f).value();
}

std::string text_of(const std::string &path) {
    auto t = read_text_file(path);
    REQUIRE(t.ok());
    return t.value();
}

std::vector<std::string> names(const Fabric &f, const std::vector<int> &hosts) {
    std::vector<std::string> out;
    for (int h : hosts)
        out.push_back(f.nodes[static_cast<std::size_t>(h)].name);
    return out;
}

const NvlinkDomain &domain(const Fabric &f, const std::string &name) {
    for (const auto &d : f.nvlink_domains)
        if (d.name == name)
            return d;
    FAIL("no NVLink domain " << name);
    return f.nvlink_domains.front();
}

Fabric model_text(const std::string &yaml) {
    auto f = parse_topograph_model(yaml, "test.yaml");
    INFO((f ? "" : f.error().message()));
    REQUIRE(f.ok());
    return std::move(f).value();
}

InputError model_error(const std::string &yaml) {
    auto f = parse_topograph_model(yaml, "test.yaml");
    REQUIRE_FALSE(f.ok());
    return f.error();
}

}  // namespace

TEST_CASE("topograph nvl72.yaml: 4 NVLink domains of 18 hosts under leaves and spines") {
    Fabric f = model("nvl72.yaml");
    CHECK(f.format == "topograph-model");
    CHECK(f.hosts().size() == 72);
    CHECK(f.switches().size() == 7);  // core, 2 spines, 4 leaves
    CHECK(f.max_level() == 2);
    REQUIRE(f.nvlink_domains.size() == 4);
    std::set<std::string> seen;
    for (const auto &d : f.nvlink_domains) {
        CHECK(d.hosts.size() == 18);
        CHECK(d.parent.empty());
        CHECK_FALSE(d.degraded);
        for (const auto &n : names(f, d.hosts))
            CHECK(seen.insert(n).second);  // no host in two domains
    }
    auto d = domain(f, "nvl-2-1");
    CHECK(names(f, d.hosts).front() == "node2101");
    CHECK(names(f, d.hosts).back() == "node2118");
    // Each domain's hosts hang off the one leaf its block names.
    const int leaf = f.find("leaf-2-1");
    REQUIRE(leaf >= 0);
    CHECK(f.nodes[static_cast<std::size_t>(leaf)].level == 0);
    for (int h : d.hosts) {
        bool linked = false;
        for (int li : f.links_of[static_cast<std::size_t>(h)])
            linked |= f.links[static_cast<std::size_t>(li)].a == leaf ||
                      f.links[static_cast<std::size_t>(li)].b == leaf;
        CHECK(linked);
    }
    // Links carry the assumed default rate, marked as such.
    for (const auto &l : f.links) {
        CHECK(l.rate.assumed);
        CHECK(l.rate.gbps == 100.0);
    }

    nlohmann::json j = f;
    REQUIRE(j["nvlink_domains"].size() == 4);
    for (const auto &dj : j["nvlink_domains"]) {
        CHECK(dj["size"] == 18);
        CHECK(dj["nodes"].size() == 18);
    }
}

TEST_CASE("topograph medium.yaml and large.yaml: one domain per leaf block") {
    Fabric medium = model("medium.yaml");
    CHECK(medium.hosts().size() == 8);
    CHECK(medium.nvlink_domains.size() == 4);
    // "[1101-1102]": a hostlist with no prefix
    CHECK(names(medium, domain(medium, "nvl1").hosts) == std::vector<std::string>{"1101", "1102"});

    Fabric large = model("large.yaml");
    CHECK(large.hosts().size() == 96);
    CHECK(large.switches().size() == 19);
    CHECK(large.nvlink_domains.size() == 12);
    CHECK(large.blocks.size() == 12);
    CHECK(large.blocks[5].name == "nvl-3-2");
    CHECK(large.blocks[5].domain == "nvl-3-2");
    CHECK(names(large, large.blocks[5].hosts).front() == "srv3201");
}

TEST_CASE("topograph dual-xclr models: two-level domains, racks inside outer domains") {
    Fabric regular = model("dual-xclr-regular.yaml");
    CHECK(regular.hosts().size() == 96);
    REQUIRE(regular.nvlink_domains.size() == 14);  // 2 outer + 12 racks
    CHECK(domain(regular, "nvl-1").hosts.size() == 48);
    CHECK(domain(regular, "nvl-2").hosts.size() == 48);
    int racks = 0;
    for (const auto &d : regular.nvlink_domains) {
        if (d.parent.empty())
            continue;
        ++racks;
        CHECK(d.hosts.size() == 8);
        // every rack's hosts are inside its parent's
        const auto &outer = domain(regular, d.parent);
        std::set<int> members(outer.hosts.begin(), outer.hosts.end());
        for (int h : d.hosts)
            CHECK(members.count(h) == 1);
    }
    CHECK(racks == 12);

    // Empty racks, a 5-node rack and holes in node ranges (README's description).
    Fabric irregular = model("dual-xclr-irregular.yaml");
    CHECK(irregular.hosts().size() == 255);
    CHECK(irregular.blocks.size() == 29);
    CHECK(domain(irregular, "rack-2-15").hosts.size() == 5);
    std::size_t in_outer =
        domain(irregular, "domain-01").hosts.size() + domain(irregular, "domain-02").hosts.size();
    CHECK(in_outer == 255);
    CHECK(irregular.find("rack-1-03") >= 0);  // a switch with no block: listed, no hosts
}

TEST_CASE("ai-topo's conversions of large.yaml equal the configs topograph generates") {
    Fabric large = model("large.yaml");
    TopologyConfStyle tree;
    tree.header = false;
    tree.level_names = true;
    CHECK(write_topology_conf(large, tree) == text_of(kDir + "expected.slinky-oci-sim-tree.conf"));

    BlockConfStyle block;
    block.header = false;
    block.name_pattern = "^srv([0-9]{2})";
    block.name_format = "rack${1}";
    block.sizes = {8, 16, 32};
    auto written = write_block_conf(large, block);
    REQUIRE(written.ok());
    CHECK(written.value() == text_of(kDir + "expected.slinky-dra-block.conf"));
}

TEST_CASE("block topology.conf: read, and written back the same") {
    const std::string path = kDir + "expected.slinky-dra-block.conf";
    auto kind = detect_topology_file(text_of(path), path);
    REQUIRE(kind.ok());
    CHECK(kind.value() == TopologyFileKind::kTopologyConf);
    auto f = load_topology_conf(path);
    REQUIRE(f.ok());
    CHECK(f->blocks.size() == 12);
    CHECK(f->block_sizes == std::vector<int>{8, 16, 32});
    CHECK(f->hosts().size() == 96);
    // One leaf per block, under one root: the engine sees a tree.
    CHECK(f->switches().size() == 13);
    CHECK(f->max_level() == 1);
    CHECK(f->find("block-root") >= 0);
    CHECK(f->blocks[0].name == "rack11");
    CHECK(names(*f, f->blocks[0].hosts).size() == 8);

    BlockConfStyle same;
    same.header = false;
    auto back = write_block_conf(*f, same);
    REQUIRE(back.ok());
    // The comments ("# rack11=nvl-1-1") are not in the model; everything else is.
    std::string expected;
    for (const auto &line : {std::string("BlockName=rack11 Nodes=srv[1101-1108]\n")})
        expected += line;
    CHECK(back->find(expected) == 0);
    CHECK(back->find("BlockSizes=8,16,32\n") != std::string::npos);
    auto again = parse_topology_conf(back.value(), "again");
    REQUIRE(again.ok());
    CHECK(again->blocks.size() == 12);
}

TEST_CASE("block topology.conf: errors name the line, the key and the value") {
    auto err = [](const std::string &text) {
        auto f = parse_topology_conf(text, "topology.conf");
        REQUIRE_FALSE(f.ok());
        return f.error();
    };
    auto e = err("BlockName=b1 Nodes=n[1-4]\nBlockName=b1 Nodes=n[5-8]\n");
    CHECK(e.field == "BlockName");
    CHECK(e.value == "b1");
    CHECK(e.line == 2);
    e = err("BlockName=b1 Nodes=n[1-4]\nBlockName=b2 Nodes=n[4-8]\n");
    CHECK(e.field == "Nodes");
    CHECK(e.value == "n4");
    e = err("BlockName=b1 Nodes=n[1-4]\nBlockSizes=4,x\n");
    CHECK(e.field == "BlockSizes");
    CHECK(e.value == "4,x");
    CHECK(e.line == 2);
    e = err("BlockName=b1 Nodes=n1 LinkSpeed=10\n");
    CHECK(e.field == "LinkSpeed");
    e = err("BlockSizes=4 Nodes=n1\n");
    CHECK(e.field == "Nodes");
    // A file with both forms: the tree is the switches'; blocks add no switch.
    auto both = parse_topology_conf("SwitchName=s1 Nodes=n[1-4]\nBlockName=b1 Nodes=n[1-4]\n", "x");
    REQUIRE(both.ok());
    CHECK(both->switches().size() == 1);
    CHECK(both->blocks.size() == 1);
    CHECK(both->hosts().size() == 4);
}

TEST_CASE("topograph model: bad input is refused with the field, the value and the line") {
    auto e = model_error("switches:\n  core:\n    switches: [a, core]\n");
    CHECK(e.field == "switches.core.switches");
    CHECK(e.value == "core");
    CHECK(e.line == 3);
    e = model_error("switches:\n  s1:\n    switches: [leaf]\n  s2:\n    switches: [leaf]\n");
    CHECK(e.value == "leaf");
    CHECK(e.line == 5);
    e = model_error("blocks:\n- switch: l1\n  nodes: [\"n[1-4]\"]\n- switch: l2\n  nodes: [n4]\n");
    CHECK(e.field == "blocks[1].nodes");
    CHECK(e.value == "n4");
    e = model_error("blocks:\n- nodes: [n1]\n");
    CHECK(e.field == "blocks[0].switch");
    e = model_error("blocks:\n- switch: l1\n  nodes: [\"n[1-\"]\n");
    CHECK(e.line == 3);
    e = model_error("switches: [a, b]\n");
    CHECK(e.field == "switches");
    e = model_error("switches:\n  a: {switches: [b]}\n  b: {switches: [a]}\n");
    CHECK(e.expected.find("tree") != std::string::npos);
    e = model_error("switches:\n  core:\n    switches: [a\n");
    CHECK(e.field == "yaml");
    CHECK(e.line >= 3);
    // Unknown keys are left alone: the format grows.
    Fabric f = model_text(
        "version: 2\nswitches:\n  core:\n    color: red\n    switches: [l1]\n"
        "blocks:\n- switch: l1\n  nodes: [n1, n2]\n  extra: 1\n");
    CHECK(f.hosts().size() == 2);
    CHECK(f.nvlink_domains.empty());
    CHECK(f.blocks.size() == 1);
    CHECK(f.blocks[0].name == "l1");
}

TEST_CASE("block topology.conf from NVLink domains or leaves, and bad name patterns") {
    Fabric f = model("dual-xclr-regular.yaml");
    f.blocks.clear();  // from the domains: the racks, not the outer domains
    auto out = write_block_conf(f, BlockConfStyle{});
    REQUIRE(out.ok());
    CHECK(out->find("BlockName=rack01 ") != std::string::npos);
    CHECK(out->find("BlockName=nvl-1 ") == std::string::npos);

    auto tree = parse_topology_conf(
        "SwitchName=l1 Nodes=a[1-2]\nSwitchName=l2 Nodes=b[1-2]\n"
        "SwitchName=top Switches=l[1-2]\n",
        "t");
    REQUIRE(tree.ok());
    auto leaves = write_block_conf(*tree, BlockConfStyle{false, "", "", {2, 4}});
    REQUIRE(leaves.ok());
    CHECK(leaves.value() ==
          "BlockName=l1 Nodes=a[1-2]\nBlockName=l2 Nodes=b[1-2]\nBlockSizes=2,4\n");

    auto bad = write_block_conf(*tree, BlockConfStyle{false, "([a-z]", "x", {}});
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().field == "block name pattern");
    CHECK(bad.error().value == "([a-z]");
    auto bad_name = write_block_conf(*tree, BlockConfStyle{false, "^(a)", "r,$1", {}});
    REQUIRE_FALSE(bad_name.ok());
    CHECK(bad_name.error().value == "r,a");
}
