// NVLink domains from the GPUs' fabric info: every capture of ../shared/data/gpu-fabric
// read as its README describes it, and a cluster assembled from those captures with the
// (cluster UUID, clique id) pairs this test gives each host.
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "slurm_ai/common/file_io.hpp"
#include "slurm_ai/config/plugin_config.hpp"
#include "slurm_ai/topology/cluster_files.hpp"
#include "slurm_ai/topology/fabric.hpp"
#include "slurm_ai/topology/gpu_fabric.hpp"
#include "scratch_dir.hpp"

using namespace slurm_ai;

namespace {

const std::string kDir = std::string(SLURM_AI_DATA_DIR) + "/gpu-fabric/";
// The cluster UUID upstream's scrubbing gave the GB200 and GB300 captures (README).
const std::string kScrubbedUuid = "00000001-0000-0000-0000-000000000001";

NodeGpuFabric capture(const std::string &name) {
    auto n = load_gpu_fabric(kDir + name);
    INFO((n ? "" : n.error().message()));
    REQUIRE(n.ok());
    return std::move(n).value();
}

std::string text_of(const std::string &path) {
    auto t = read_text_file(path);
    REQUIRE(t.ok());
    return t.value();
}

}  // namespace

TEST_CASE("gpu fabric: GB200 and GB300 trays are in a domain, every GPU agreeing", "[gpu_fabric]") {
    const auto gb200 = capture("nvidia-smi-qx-gb200.xml");
    CHECK(gb200.format == "nvidia-smi-xml");
    CHECK(gb200.driver == "580.173.02");
    REQUIRE(gb200.gpus.size() == 4);
    for (const auto &g : gb200.gpus) {
        CHECK(g.product == "NVIDIA GB200");
        CHECK(g.health == "Healthy");
        CHECK(g.bandwidth == "Full");
        REQUIRE(g.domain());
        CHECK(*g.domain() == NvlinkCliqueId{kScrubbedUuid, 2});
    }
    CHECK(gb200.gpus[0].bus_id == "00000000:29:00.0");
    REQUIRE(gb200.domain);
    CHECK(gb200.domain->label() == kScrubbedUuid + ".2");
    CHECK(gb200.problem.empty());

    const auto gb300 = capture("nvidia-smi-qx-gb300.xml");
    REQUIRE(gb300.gpus.size() == 4);
    REQUIRE(gb300.domain);
    CHECK(gb300.domain->clique_id == 32766);
    // Same scrubbed UUID, another clique: another domain (never the clique id alone).
    CHECK(*gb300.domain != *gb200.domain);
}

TEST_CASE("gpu fabric: HGX nodes and machines without a fabric are in no domain", "[gpu_fabric]") {
    // NVSwitch inside the node: Completed/Success but a zero UUID and clique 0.
    for (const char *name : {"nvidia-smi-qx-h100.xml", "nvidia-smi-qx-b200.xml"}) {
        const auto n = capture(name);
        REQUIRE(n.gpus.size() == 8);
        for (const auto &g : n.gpus) {
            CHECK(g.state == "Completed");
            CHECK(g.status == "Success");
            CHECK(g.clique_id == 0u);
            CHECK_FALSE(g.domain());
        }
        CHECK_FALSE(n.domain);
        CHECK(n.problem.empty());
    }
    // One-GPU boards: every fabric field N/A.
    for (const char *name : {"nvidia-smi-qx-a100.xml", "nvidia-smi-qx-l40s.xml",
                             "nvidia-smi-qx-t4.xml"}) {
        const auto n = capture(name);
        REQUIRE(n.gpus.size() == 1);
        CHECK(n.gpus[0].state.empty());
        CHECK(n.gpus[0].cluster_uuid.empty());
        CHECK_FALSE(n.gpus[0].clique_id);
        CHECK_FALSE(n.domain);
        CHECK(n.problem.empty());
    }
}

TEST_CASE("gpu fabric: text reports of drivers that print no clique fields", "[gpu_fabric]") {
    // Driver 535: the Fabric block has State and Status only.
    const auto h100 = capture("nvidia-smi-q-h100-535.txt");
    CHECK(h100.format == "nvidia-smi-text");
    CHECK(h100.driver == "535.161.08");
    REQUIRE(h100.gpus.size() == 8);
    CHECK(h100.gpus[0].product == "NVIDIA H100 80GB HBM3");
    CHECK(h100.gpus[1].bus_id == "00000000:3B:00.0");
    for (const auto &g : h100.gpus) {
        CHECK(g.state == "Completed");
        CHECK(g.status == "Success");
        CHECK_FALSE(g.clique_id);
        CHECK_FALSE(g.domain());
    }
    CHECK_FALSE(h100.domain);
    const auto a10 = capture("nvidia-smi-q-a10-535.txt");
    REQUIRE(a10.gpus.size() == 1);
    CHECK(a10.gpus[0].state.empty());  // N/A
    CHECK_FALSE(a10.domain);
}

TEST_CASE("gpu fabric: the text form with clique fields and health, at 580's columns",
          "[gpu_fabric]") {
    // One GPU's section as driver 580 prints it (the colon at column 56).
    auto gpu = [](const std::string &bus, const std::string &summary, const std::string &bw) {
        auto field = [](int indent, const std::string &key, const std::string &value) {
            std::string f(static_cast<std::size_t>(indent), ' ');
            f += key;
            f.resize(55, ' ');
            return f + ": " + value + "\n";
        };
        return "GPU " + bus + "\n" + field(4, "Product Name", "NVIDIA GB200") + "    Fabric\n" +
               field(8, "State", "Completed") + field(8, "Status", "Success") +
               field(8, "CliqueId", "7") +
               field(8, "ClusterUUID", "1f0a2b3c-0000-4000-8000-00000000abcd") +
               "        Health\n" + field(12, "Summary", summary) + field(12, "Bandwidth", bw) +
               field(4, "Processes", "None");
    };
    const std::string report = "==============NVSMI LOG==============\n\n"
                               "Driver Version                                         : "
                               "580.173.02\n" +
                               gpu("00000009:01:00.0", "Healthy", "Full") +
                               gpu("00000019:01:00.0", "Unhealthy", "Degraded");
    auto n = parse_gpu_fabric(report, "tray.txt");
    REQUIRE(n.ok());
    REQUIRE(n->gpus.size() == 2);
    CHECK(n->gpus[1].health == "Unhealthy");
    REQUIRE(n->gpus[0].domain());
    CHECK(n->gpus[0].domain()->clique_id == 7);
    // An unhealthy GPU keeps the tray out of its domain, with the reason.
    CHECK_FALSE(n->domain);
    CHECK(n->problem.find("GPU 1 (00000019:01:00.0)") != std::string::npos);
    CHECK(n->problem.find("'Unhealthy'") != std::string::npos);
}

TEST_CASE("gpu fabric: CSV as topograph reads it, and bad input named", "[gpu_fabric]") {
    auto csv = parse_gpu_fabric(
        "00000001-0000-0000-0000-000000000001, 2\n00000001-0000-0000-0000-000000000001, 2\n",
        "q.csv");
    REQUIRE(csv.ok());
    CHECK(csv->format == "nvidia-smi-csv");
    REQUIRE(csv->domain);
    CHECK(csv->domain->clique_id == 2);
    // A header names the columns; GPUs that disagree keep the node out.
    auto split = parse_gpu_fabric(
        "pci.bus_id, fabric.state, fabric.status, fabric.clusterUuid, fabric.cliqueId\n"
        "00000009:01:00.0, Completed, Success, 00000002-0000-0000-0000-000000000002, 4\n"
        "00000019:01:00.0, Completed, Success, 00000002-0000-0000-0000-000000000002, 5\n",
        "split.csv");
    REQUIRE(split.ok());
    CHECK_FALSE(split->domain);
    CHECK(split->problem.find("disagree") != std::string::npos);
    // Not registered yet: no domain, and the reason names the GPU that is behind.
    auto pending = parse_gpu_fabric(
        "pci.bus_id, fabric.state, fabric.status, fabric.clusterUuid, fabric.cliqueId\n"
        "00000009:01:00.0, Completed, Success, 00000002-0000-0000-0000-000000000002, 4\n"
        "00000019:01:00.0, In Progress, N/A, N/A, N/A\n",
        "pending.csv");
    REQUIRE(pending.ok());
    CHECK_FALSE(pending->domain);
    CHECK(pending->problem.find("fabric state 'In Progress'") != std::string::npos);

    auto bad = parse_gpu_fabric("00000001-0000-0000-0000-000000000001, two\n", "bad.csv");
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().field == "fabric.cliqueId");
    CHECK(bad.error().value == "two");
    CHECK(bad.error().line == 1);
    std::string xml = text_of(kDir + "nvidia-smi-qx-gb200.xml");
    xml = std::regex_replace(xml, std::regex("<cliqueId>2</cliqueId>"), "<cliqueId>x2</cliqueId>",
                             std::regex_constants::format_first_only);
    auto bad_xml = parse_gpu_fabric(xml, "gb200.xml");
    REQUIRE_FALSE(bad_xml.ok());
    CHECK(bad_xml.error().field == "cliqueId");
    CHECK(bad_xml.error().line == 301);
    CHECK_FALSE(parse_gpu_fabric("SwitchName=s1 Nodes=a\n", "t.conf").ok());
}

namespace {

// The captures of one file given other hosts' domains, as no public capture holds two
// trays of one domain (README): the GB200 tray's clusterUuid and cliqueId replaced.
std::string tray(const std::string &uuid, int clique) {
    std::string xml = text_of(kDir + "nvidia-smi-qx-gb200.xml");
    xml = std::regex_replace(xml, std::regex(kScrubbedUuid), uuid);
    return std::regex_replace(xml, std::regex("<cliqueId>2</cliqueId>"),
                              "<cliqueId>" + std::to_string(clique) + "</cliqueId>");
}

void write(const std::filesystem::path &p, const std::string &text) {
    std::ofstream out(p);
    out << text;
    REQUIRE(out.good());
}

}  // namespace

TEST_CASE("gpu fabric: a cluster of trays becomes NVLink domains for every consumer",
          "[gpu_fabric]") {
    namespace fs = std::filesystem;
    const test::ScratchDir scratch("gpu-fabric");
    const fs::path &dir = scratch.path;
    // The pairs this test gives each host:
    //   gb-01 .. gb-18  cluster aaaaaaaa-..., clique 2   (rack A)
    //   gb-19 .. gb-36  cluster bbbbbbbb-..., clique 2   (rack B: the same clique id)
    //   gb-37           the GB300 capture as it is (clique 32766)
    //   gb-38           rack A's pair, but one GPU's clique id changed to 3 (disagrees)
    //   gb-39           rack A's pair, one GPU's health summary Unhealthy
    //   hgx-01          the H100 capture (NVSwitch inside the node, no domain)
    const std::string a = "aaaaaaaa-0000-4000-8000-000000000001";
    const std::string b = "bbbbbbbb-0000-4000-8000-000000000002";
    for (int i = 1; i <= 36; ++i)
        write(dir / ((i < 10 ? "gb-0" : "gb-") + std::to_string(i) + ".xml"),
              tray(i <= 18 ? a : b, 2));
    write(dir / "gb-37.xml", text_of(kDir + "nvidia-smi-qx-gb300.xml"));
    std::string split = tray(a, 2);
    split.replace(split.rfind("<cliqueId>2</cliqueId>"), 22, "<cliqueId>3</cliqueId>");
    write(dir / "gb-38.xml", split);
    std::string sick = tray(a, 2);
    sick.replace(sick.find("<summary>Healthy</summary>"), 26, "<summary>Unhealthy</summary>");
    write(dir / "gb-39.xml", sick);
    write(dir / "hgx-01.nvidia-smi.xml", text_of(kDir + "nvidia-smi-qx-h100.xml"));

    auto hosts = load_host_gpu_fabrics(dir.string());
    INFO((hosts ? "" : hosts.error().message()));
    REQUIRE(hosts.ok());
    REQUIRE(hosts->size() == 40);
    auto fabric = fabric_from_gpu_fabrics(hosts.value(), dir.string());
    REQUIRE(fabric.ok());
    REQUIRE(fabric->nvlink_domains.size() == 3);
    CHECK(fabric->nvlink_domains[0].hosts.size() == 18);
    CHECK(fabric->nodes[fabric->nvlink_domains[0].hosts.front()].name == "gb-01");
    CHECK(fabric->nodes[fabric->nvlink_domains[1].hosts.front()].name == "gb-19");
    CHECK(fabric->nvlink_domains[2].hosts.size() == 1);
    CHECK(fabric->block_sizes == std::vector<int>{18});

    // ai_select.conf: the lines parse and each names its rack.
    const std::string select = write_nvlink_domain_lines(fabric.value(), hosts.value());
    CHECK(select.find("NvlinkDomain=gb-[01-18]\n") != std::string::npos);
    CHECK(select.find("NvlinkDomain=gb-[19-36]\n") != std::string::npos);
    CHECK(select.find("# left out: gb-38: its GPUs disagree") != std::string::npos);
    CHECK(select.find("# left out: gb-39: GPU 0 (00000000:29:00.0) is in NVLink domain") !=
          std::string::npos);
    auto config = parse_plugin_config(select, "ai_select.conf", "topology.conf");
    INFO((config ? "" : config.error().message()));
    REQUIRE(config.ok());
    CHECK(config->cluster.nvlink_domains ==
          std::vector<std::string>{"gb-[01-18]", "gb-[19-36]", "gb-37"});

    // topology.conf for topology/block: 18-tray blocks, BlockSizes=18, read back.
    auto block = write_block_conf(fabric.value(), {});
    REQUIRE(block.ok());
    CHECK(block->find("BlockName=nvl1 Nodes=gb-[01-18]") != std::string::npos);
    CHECK(block->find("BlockSizes=18") != std::string::npos);
    auto back = parse_topology_conf(block.value(), "topology.conf");
    REQUIRE(back.ok());
    REQUIRE(back->blocks.size() == 3);
    CHECK(back->blocks[1].hosts.size() == 18);
    // ...and the consumer's NVLink domains on it, from the ai_select.conf lines.
    Fabric with_domains = back.value();
    REQUIRE_FALSE(add_nvlink_domains(with_domains, config->cluster.nvlink_domains, 0));
    CHECK(with_domains.nvlink_domains.size() == 3);

    // topology.yaml's block section.
    TopologyYamlStyle style;
    auto yaml = write_topology_yaml(fabric.value(), style);
    REQUIRE(yaml.ok());
    CHECK(yaml->find("block_sizes") != std::string::npos);
    CHECK(yaml->find("gb-[19-36]") != std::string::npos);

    // JSON of one tray: each GPU's domain, and the node's.
    const nlohmann::json j = capture("nvidia-smi-qx-gb300.xml");
    CHECK(j["nvlink_domain"]["clique_id"] == 32766);
    CHECK(j["gpus"][3]["nvlink_domain"]["cluster_uuid"] == kScrubbedUuid);
    const nlohmann::json none = capture("nvidia-smi-qx-t4.xml");
    CHECK(none["gpus"][0]["nvlink_domain"].is_null());
    CHECK(none["nvlink_domain"].is_null());
}

TEST_CASE("gpu fabric: host lines, and what they refuse", "[gpu_fabric]") {
    namespace fs = std::filesystem;
    const test::ScratchDir scratch("gpu-fabric-hosts");
    const fs::path file = scratch.path / "hosts.txt";
    write(file,
          "# host cluster_uuid clique_id\n"
          "gb-01 aaaaaaaa-0000-4000-8000-000000000001 2\n"
          "gb-02 AAAAAAAA-0000-4000-8000-000000000001 2\n"
          "gb-03\t-\n");
    auto hosts = load_host_gpu_fabrics(file.string());
    REQUIRE(hosts.ok());
    auto fabric = fabric_from_gpu_fabrics(hosts.value(), file.string());
    REQUIRE(fabric.ok());
    REQUIRE(fabric->nvlink_domains.size() == 1);
    CHECK(fabric->nvlink_domains[0].hosts.size() == 2);  // the UUID's case does not matter
    CHECK(fabric->nodes.size() == 3);

    write(file, "gb-01 aaaaaaaa-0000-4000-8000-000000000001 -2\n");
    auto bad = load_host_gpu_fabrics(file.string());
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().field == "clique_id");
    CHECK(bad.error().value == "-2");
    // nvidia-smi's forms of "in no domain" are read as such.
    write(file, "hgx-01 00000000-0000-0000-0000-000000000000 0\nl40-01 N/A N/A\n");
    auto outside = load_host_gpu_fabrics(file.string());
    REQUIRE(outside.ok());
    REQUIRE(outside->size() == 2);
    CHECK_FALSE(outside.value()[0].domain);
    CHECK_FALSE(outside.value()[1].domain);
    write(file, "gb-01 aaaaaaaa-0000-4000-8000-00000000000g 0\n");
    bad = load_host_gpu_fabrics(file.string());
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().field == "cluster_uuid");
    write(file, "gb-01 - \ngb-01 -\n");
    auto twice = load_host_gpu_fabrics(file.string());
    REQUIRE(twice.ok());
    auto refused = fabric_from_gpu_fabrics(twice.value(), file.string());
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().value == "gb-01");
}

TEST_CASE("gpu fabric: the inputs the fuzzer once crashed on are read cleanly", "[gpu_fabric][fuzz]") {
    namespace fs = std::filesystem;
    const fs::path dir =
        fs::path(SLURM_AI_TEST_INPUTS).parent_path() / "fuzz" / "regressions" / "gpu_fabric";
    int replayed = 0;
    for (const auto &entry : fs::directory_iterator(dir)) {
        INFO(entry.path().string());
        const std::string text = text_of(entry.path().string());
        auto node = parse_gpu_fabric(text, "fuzz");
        if (node.ok())  // bytes that are not UTF-8 never reach the JSON
            CHECK_NOTHROW(nlohmann::json(node.value()).dump());
        else
            CHECK_FALSE(node.error().message().empty());
        ++replayed;
    }
    CHECK(replayed >= 2);
}
