// gres.conf from the real node files of shared/data: Links= from their NVLink figures,
// Cores= from their cores (as Slurm numbers them), and the errors for bad options.
#include "slurm_ai/topology/gres_conf.hpp"

#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "slurm_ai/topology/node_topology.hpp"

using namespace slurm_ai;

namespace {

const std::string kData = SLURM_AI_DATA_DIR;

NodeTopology node(const std::string &file) {
    auto t = load_node_topology(kData + "/" + file);
    REQUIRE(t.ok());
    return std::move(t).value();
}

// The lines that are not comments.
std::vector<std::string> gres_lines(const std::string &conf) {
    std::vector<std::string> out;
    std::istringstream in(conf);
    for (std::string line; std::getline(in, line);)
        if (!line.empty() && line[0] != '#')
            out.push_back(line);
    return out;
}

// The value of KEY= in a gres.conf line ("" when absent).
std::string field(const std::string &line, const std::string &key) {
    auto at = line.find(" " + key + "=");
    if (at == std::string::npos && line.starts_with(key + "="))
        at = 0;
    else if (at == std::string::npos)
        return "";
    else
        ++at;
    auto start = at + key.size() + 1;
    return line.substr(start, line.find(' ', start) - start);
}

std::string write(const NodeTopology &t, const GresConfOptions &opt = {}) {
    auto conf = write_gres_conf(t, opt);
    REQUIRE(conf.ok());
    return *conf;
}

}  // namespace

// power8gpudistances.xml: GPUs 0+1 and 2+3 are NVLink pairs at 40 GB/s (two 20 GB/s
// NVLink 1 links); GPUs 0-1 sit under Package 0, whose cores have OS indexes 8, 16, 32,
// 40 and PUs 0-1, 8-9, 16-17, 24-25: Slurm counts them as cores 0-3, not by those numbers.
TEST_CASE("gres.conf of the POWER8 node: NVLink pairs and per-socket cores", "[gres_conf]") {
    auto t = node("hwloc/power8gpudistances.xml");
    auto conf = write(t);
    auto lines = gres_lines(conf);
    REQUIRE(lines.size() == 4);
    const std::vector<std::string> links{"-1,2,0,0", "2,-1,0,0", "0,0,-1,2", "0,0,2,-1"};
    for (std::size_t g = 0; g < 4; ++g) {
        INFO(lines[g]);
        CHECK(field(lines[g], "NodeName") == "drac-12");  // the short hostname
        CHECK(field(lines[g], "Name") == "gpu");
        CHECK(field(lines[g], "Type") == "tesla_p100-sxm2-16gb");
        CHECK(field(lines[g], "File") == "/dev/nvidia" + std::to_string(g));
        CHECK(field(lines[g], "Cores") == (g < 2 ? "0-3" : "4-7"));
        CHECK(field(lines[g], "Links") == links[g]);
    }
    CHECK_THAT(conf, Catch::Contains(
                         "# slurm.conf: NodeName=drac-12 ... Gres=gpu:tesla_p100-sxm2-16gb:4"));

    // At NVLink 1's 20 GB/s per link the pairs still have 2 links; the count follows the
    // bandwidth given.
    GresConfOptions nv1;
    nv1.nvlink_gbs = 20;
    CHECK(field(gres_lines(write(t, nv1))[0], "Links") == "-1,2,0,0");
    GresConfOptions nv5;
    nv5.nvlink_gbs = 50;
    CHECK(field(gres_lines(write(t, nv5))[0], "Links") == "-1,1,0,0");
}

// nvidiaDGX2.xml: every GPU has 6 x 25 GB/s into the NVSwitches; GPUs 0-7 are near
// Package 0 (cores 0-1 of this trimmed export), GPUs 8-15 near Package 1 (cores 2-3).
TEST_CASE("gres.conf of the DGX-2: NVSwitch peers count the links into the switches",
          "[gres_conf]") {
    auto t = node("hwloc/nvidiaDGX2.xml");
    GresConfOptions opt;
    opt.nodes = "dgx[01-04],dgx05";
    auto lines = gres_lines(write(t, opt));
    REQUIRE(lines.size() == 16);
    for (std::size_t g = 0; g < 16; ++g) {
        INFO(lines[g]);
        CHECK(field(lines[g], "NodeName") == "dgx[01-05]");  // compressed as Slurm writes it
        CHECK(field(lines[g], "Cores") == (g < 8 ? "0-1" : "2-3"));
        std::string expected;
        for (std::size_t o = 0; o < 16; ++o)
            expected += (o ? "," : "") + std::string(o == g ? "-1" : "6");
        CHECK(field(lines[g], "Links") == expected);
    }
}

// 32em64t-2n8c2t-pci-normalio.xml: no NVLink at all; 2 threads per core, so the PUs
// 0-7,16-23 of socket 0 are cores 0-7; three GPU models on one node.
TEST_CASE("gres.conf of a PCIe-only node with mixed GPUs", "[gres_conf]") {
    auto t = node("hwloc/32em64t-2n8c2t-pci-normalio.xml");
    auto conf = write(t);
    auto lines = gres_lines(conf);
    REQUIRE(lines.size() == 4);
    CHECK(field(lines[0], "Cores") == "0-7");
    CHECK(field(lines[2], "Cores") == "8-15");
    CHECK(field(lines[2], "Type") == "tesla_k40m");
    CHECK(field(lines[3], "Type") == "amd_radeon_r9_200___hd_7900_series");
    CHECK(field(lines[1], "Links") == "0,-1,0,0");
    CHECK_THAT(conf, Catch::Contains("Gres=gpu:amd_radeon_r9_200___hd_7900_series:1,"
                                     "gpu:tesla_k40m:1,"
                                     "gpu:tesla_m2075_dual-slot_computing_processor_module:2"));

    GresConfOptions opt;
    opt.type = "gpu_a";
    opt.file_pattern = "/dev/dri/card%d";
    lines = gres_lines(write(t, opt));
    CHECK(field(lines[3], "Type") == "gpu_a");
    CHECK(field(lines[3], "File") == "/dev/dri/card3");
}

// NCCL topology files name no host, no model and no cores: the lines have no NodeName,
// Type or Cores, and Links still come from <nvlink> (the mini-cluster's node file pairs
// GPUs 0+1 and 2+3).
TEST_CASE("gres.conf of an NCCL topology file leaves out what it does not know", "[gres_conf]") {
    auto t = load_node_topology(std::string(SLURM_AI_TEST_INPUTS) + "/minicluster-node.xml");
    REQUIRE(t.ok());
    auto conf = write(*t);
    auto lines = gres_lines(conf);
    REQUIRE(lines.size() == 4);
    CHECK(lines[0] == "Name=gpu File=/dev/nvidia0 Links=-1,2,0,0");
    CHECK(lines[3] == "Name=gpu File=/dev/nvidia3 Links=0,0,2,-1");
    CHECK_THAT(conf, Catch::Contains("not in this input"));
}

TEST_CASE("gres.conf options are checked, naming the option", "[gres_conf]") {
    auto t = node("hwloc/power8gpudistances.xml");
    auto error_of = [&](GresConfOptions opt) {
        auto conf = write_gres_conf(t, opt);
        REQUIRE_FALSE(conf.ok());
        return conf.error();
    };
    GresConfOptions o;
    o.file_pattern = "/dev/nvidia";
    CHECK(error_of(o).field == "--file");
    o.file_pattern = "nvidia%d";
    CHECK(error_of(o).field == "--file");
    o.file_pattern = "/dev/nvidia%d%d";
    CHECK(error_of(o).field == "--file");
    o = {};
    o.nodes = "n[1-";
    CHECK(error_of(o).field == "--nodes");
    o.nodes = "n1 n2";
    CHECK(error_of(o).field == "--nodes");
    o = {};
    o.type = "v100:sxm";
    CHECK(error_of(o).field == "--type");
    o = {};
    o.nvlink_gbs = 0;
    CHECK(error_of(o).field == "--nvlink-gbs");

    NodeTopology no_gpus = node("hwloc/power8gpudistances.xml");
    no_gpus.gpus.clear();
    auto e = write_gres_conf(no_gpus, {});
    REQUIRE_FALSE(e.ok());
    CHECK(e.error().field == "GPUs");
    CHECK_THAT(e.error().message(), Catch::Contains("power8gpudistances.xml"));
}

TEST_CASE("GPU models become GRES types as Slurm's autodetection names them", "[gres_conf]") {
    CHECK(gres_type_name("Tesla V100-SXM2-16GB") == "tesla_v100-sxm2-16gb");
    CHECK(gres_type_name("NVIDIA A100-SXM4-80GB") == "nvidia_a100-sxm4-80gb");
    CHECK(gres_type_name("a:b,c=d") == "a_b_c_d");
    CHECK(gres_type_name("") == "");
}
