// Slurm 25.05's topology.yaml: read (the default tree and block topologies, or one by
// name), written from any fabric (topograph's large.yaml gives the same tree and blocks as
// the configs topograph generates), and refused with the field, the value and the line.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "slurm_ai/common/file_io.hpp"
#include "slurm_ai/topology/fabric.hpp"
#include "slurm_ai/topology/topology_file.hpp"

using namespace slurm_ai;

namespace {

const std::string kDir = std::string(SLURM_AI_DATA_DIR) + "/fabric/topograph/";

// Three topologies as a site running both plugins would keep them: the tree is the
// default, a block topology beside it, and a flat one for a test partition.
const char *kSite = R"(# site topologies
- topology: fat-tree
  cluster_default: true
  tree:
    switches:
      - switch: core
        children: leaf[1-2]
      - switch: leaf1
        nodes: gpu[01-04]
      - switch: leaf2
        nodes:
          - gpu[05-07]
          - gpu08
- topology: racks
  cluster_default: false
  block:
    block_sizes: [4, 8]
    blocks:
      - block: rack1
        nodes: gpu[01-04]
      - block: rack2
        nodes: gpu[05-08]
- topology: flat-test
  flat: true
)";

// Slurm 26.05's other kinds beside them: a ring, a 3-D torus and flat with options. They
// are other partitions' topologies: the model is the same tree and blocks.
const char *kKinds2605 = R"(- topology: fat-tree
  cluster_default: true
  tree:
    switches:
      - switch: leaf1
        nodes: gpu[01-04]
- topology: racks
  block:
    block_sizes: [2]
    blocks:
      - block: rack1
        nodes: gpu[01-02]
- topology: loop
  ring:
    rings:
      - ring: r0
        nodes: gpu[01-04]
- topology: cube
  torus3d:
    toruses:
      - name: pod
        dims: {x: 2, y: 2, z: 1}
        nodes: gpu[01-04]
- topology: plain
  flat:
    alpha_step_rank: true
)";

std::vector<std::string> host_names(const Fabric &f, const std::vector<int> &hosts) {
    std::vector<std::string> out;
    for (int h : hosts)
        out.push_back(f.nodes[static_cast<std::size_t>(h)].name);
    return out;
}

std::string without_comments(const std::string &text) {
    std::string out;
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t end = text.find('\n', pos);
        std::string line = text.substr(pos, end == std::string::npos ? end : end - pos + 1);
        if (!line.starts_with("#"))
            out += line;
        pos = end == std::string::npos ? text.size() : end + 1;
    }
    return out;
}

}  // namespace

TEST_CASE("topology.yaml: the default tree and the block topology, read together",
          "[topology][yaml]") {
    auto f = parse_topology_yaml(kSite, "site.yaml");
    INFO((f ? "" : f.error().message()));
    REQUIRE(f.ok());
    CHECK(f->format == "topology.yaml");
    CHECK(f->switches().size() == 3);
    CHECK(f->hosts().size() == 8);
    CHECK(f->max_level() == 1);
    CHECK(f->nodes[static_cast<std::size_t>(f->find("core"))].level == 1);
    REQUIRE(f->blocks.size() == 2);
    CHECK(f->blocks[1].name == "rack2");
    CHECK(host_names(*f, f->blocks[1].hosts) ==
          std::vector<std::string>{"gpu05", "gpu06", "gpu07", "gpu08"});
    CHECK(f->block_sizes == std::vector<int>{4, 8});

    // One topology by its name: the blocks alone become leaves under block-root.
    auto racks = parse_topology_yaml(kSite, "site.yaml", 100.0, "racks");
    REQUIRE(racks.ok());
    CHECK(racks->find("core") < 0);
    CHECK(racks->find("block-root") >= 0);
    CHECK(racks->blocks.size() == 2);
    auto flat = parse_topology_yaml(kSite, "site.yaml", 100.0, "flat-test");
    REQUIRE(flat.ok());
    CHECK(flat->nodes.empty());

    // The file is told apart from the other topology files by its content.
    auto kind = detect_topology_file(kSite, "site.yaml");
    REQUIRE(kind.ok());
    CHECK(kind.value() == TopologyFileKind::kTopologyYaml);
}

TEST_CASE("topology.yaml written from large.yaml reads back as topograph's configs",
          "[topology][yaml]") {
    auto model = load_topograph_model(kDir + "large.yaml");
    REQUIRE(model.ok());
    TopologyYamlStyle style;
    style.level_names = true;
    style.blocks.name_pattern = "^srv([0-9]{2})";
    style.blocks.name_format = "rack${1}";
    style.blocks.sizes = {8, 16, 32};
    auto yaml = write_topology_yaml(model.value(), style);
    REQUIRE(yaml.ok());
    CHECK_THAT(yaml.value(), Catch::Contains("- topology: tree\n  cluster_default: true\n"));
    CHECK_THAT(yaml.value(), Catch::Contains("      # switch.1.1=leaf-1-1\n"));

    auto back = parse_topology_yaml(yaml.value(), "written.yaml");
    INFO((back ? "" : back.error().message()));
    REQUIRE(back.ok());
    TopologyConfStyle bare;
    bare.header = false;
    auto tree = read_text_file(kDir + "expected.slinky-oci-sim-tree.conf");
    REQUIRE(tree.ok());
    CHECK(write_topology_conf(back.value(), bare) == without_comments(tree.value()));
    BlockConfStyle blocks;
    blocks.header = false;
    auto block = read_text_file(kDir + "expected.slinky-dra-block.conf");
    REQUIRE(block.ok());
    auto written = write_block_conf(back.value(), blocks);
    REQUIRE(written.ok());
    CHECK(written.value() == without_comments(block.value()));

    // nvl72.yaml's NVLink domains are its blocks; a fabric with neither is flat.
    auto nvl = load_topograph_model(kDir + "nvl72.yaml");
    REQUIRE(nvl.ok());
    auto nvl_yaml = write_topology_yaml(nvl.value(), TopologyYamlStyle{});
    REQUIRE(nvl_yaml.ok());
    auto nvl_back = parse_topology_yaml(nvl_yaml.value(), "nvl.yaml");
    REQUIRE(nvl_back.ok());
    REQUIRE(nvl_back->blocks.size() == 4);
    for (const auto &b : nvl_back->blocks)
        CHECK(b.hosts.size() == 18);
    auto empty = write_topology_yaml(Fabric{}, TopologyYamlStyle{});
    REQUIRE(empty.ok());
    CHECK_THAT(empty.value(), Catch::Contains("flat: true"));
}

TEST_CASE("topology.yaml quotes names YAML would read as something else", "[topology][yaml]") {
    auto conf = parse_topology_conf("SwitchName=s1 Nodes=yes,null,n1,&x,1e3\n", "odd.conf");
    REQUIRE(conf.ok());
    TopologyYamlStyle style;
    style.header = false;
    auto yaml = write_topology_yaml(conf.value(), style);
    REQUIRE(yaml.ok());
    auto back = parse_topology_yaml(yaml.value(), "odd.yaml");
    INFO(yaml.value());
    REQUIRE(back.ok());
    for (const char *name : {"yes", "null", "n1", "&x", "1e3"})
        CHECK(back->find(name) >= 0);
}

TEST_CASE("topology.yaml: Slurm 26.05's ring and torus3d topologies are taken, not refused",
          "[topology][yaml]") {
    auto f = parse_topology_yaml(kKinds2605, "26.05.yaml");
    INFO((f ? "" : f.error().message()));
    REQUIRE(f.ok());
    CHECK(f->switches().size() == 1);
    CHECK(f->hosts().size() == 4);
    REQUIRE(f->blocks.size() == 1);
    CHECK(f->blocks[0].name == "rack1");
    auto ring = parse_topology_yaml(kKinds2605, "26.05.yaml", 100.0, "loop");
    REQUIRE(ring.ok());
    CHECK(ring->nodes.empty());
}

TEST_CASE("topology.yaml: bad input is refused with the field, the value and the line",
          "[topology][yaml]") {
    struct Case {
        std::string text, field, value;
        int line;
    };
    const std::string head = "- topology: t\n  tree:\n    switches:\n";
    for (const auto &c : {
             Case{"topology: t\n", "file", "", 1},
             Case{"- tree: {}\n", "topology", "", 1},
             Case{"- topology: t\n  cluster_default: maybe\n  flat: true\n", "t.cluster_default",
                  "maybe", 2},
             Case{"- topology: t\n  flat: true\n  tree: {}\n", "t", "tree", 1},
             Case{"- topology: t\n", "t", "", 1},
             Case{"- topology: t\n  torus: true\n", "t.torus", "true", 2},
             Case{head + "      - switch: a\n        speed: 100\n", "t.tree.speed", "100", 5},
             Case{head + "      - nodes: n1\n", "t.tree.switch", "", 4},
             Case{head + "      - switch: a b\n", "t.tree.switch", "a b", 4},
             Case{head + "      - switch: a\n        nodes: n[1-\n", "t.tree.nodes", "n[1-", 5},
             Case{head + "      - switch: a\n        children: b\n", "Switches", "b", 4},
             Case{head + "      - switch: a\n      - switch: a\n", "SwitchName", "a", 5},
             Case{"- topology: b\n  block:\n    block_sizes: [8, x]\n", "b.block.block_sizes", "x",
                  3},
             Case{"- topology: b\n  block:\n    blocks:\n      - block: r1\n        nodes: n1\n"
                  "      - block: r2\n        nodes: n1\n",
                  "Nodes", "n1", 6},
             Case{"- topology: t\n  flat: [\n", "yaml", "", 0},
         }) {
        INFO(c.text);
        auto r = parse_topology_yaml(c.text, "bad.yaml");
        REQUIRE_FALSE(r.ok());
        CHECK(r.error().field == c.field);
        if (c.field != "yaml")
            CHECK(r.error().value == c.value);
        if (c.line > 0)
            CHECK(r.error().line == c.line);
        CHECK(r.error().source == "bad.yaml");
    }
    auto missing = parse_topology_yaml(kSite, "site.yaml", 100.0, "torus");
    REQUIRE_FALSE(missing.ok());
    CHECK(missing.error().field == "topology");
    CHECK(missing.error().value == "torus");
}
