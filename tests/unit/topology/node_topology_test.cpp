// Node topology loaders on the real hwloc and NCCL files of shared/data (see its README.md)
// and on bad input. The expected figures are read off the files by hand; each test says
// where they come from.
#include "slurm_ai/topology/node_topology.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include "scratch_dir.hpp"

using namespace slurm_ai;

namespace {

const std::string kData = SLURM_AI_DATA_DIR;

std::string slurp(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

int line_of(const std::string &text, const std::string &needle) {
    auto pos = text.find(needle);
    REQUIRE(pos != std::string::npos);
    return 1 +
           static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(pos), '\n'));
}

std::string replace_once(std::string text, const std::string &from, const std::string &to) {
    auto pos = text.find(from);
    REQUIRE(pos != std::string::npos);
    return text.replace(pos, from.size(), to);
}

int gpu_index(const NodeTopology &t, const std::string &busid) {
    for (std::size_t i = 0; i < t.gpus.size(); ++i)
        if (t.gpus[i].pci_busid == busid)
            return static_cast<int>(i);
    FAIL("no GPU " << busid);
    return -1;
}

int nic_index(const NodeTopology &t, const std::string &busid) {
    for (std::size_t i = 0; i < t.nics.size(); ++i)
        if (t.nics[i].pci_busid == busid)
            return static_cast<int>(i);
    FAIL("no NIC " << busid);
    return -1;
}

// GPU bus id -> bus id of the NIC gpu_nic_pairing() gives it.
std::vector<std::pair<std::string, std::string>> pairs_of(const NodeTopology &t) {
    std::vector<std::pair<std::string, std::string>> out;
    auto pairing = t.gpu_nic_pairing();
    REQUIRE(pairing.size() == t.gpus.size());
    for (std::size_t g = 0; g < t.gpus.size(); ++g) {
        REQUIRE(pairing[g] >= 0);
        out.emplace_back(t.gpus[g].pci_busid,
                         t.nics[static_cast<std::size_t>(pairing[g])].pci_busid);
    }
    return out;
}

void check_matrix_shapes(const NodeTopology &t) {
    const auto G = t.gpus.size(), N = t.nics.size();
    CHECK(t.gpu_bandwidth.size() == G * G);
    CHECK(t.gpu_path.size() == G * G);
    CHECK(t.gpu_nic_path.size() == G * N);
    CHECK(t.gpu_nic_bandwidth.size() == G * N);
    for (std::size_t g = 0; g < G; ++g) {
        CHECK(t.path(static_cast<int>(g), static_cast<int>(g)) == PathType::kSelf);
        CHECK(t.bandwidth(static_cast<int>(g), static_cast<int>(g)) == 0.0);
    }
}

}  // namespace

// nvidiaDGX2.xml: its NVLinkBandwidth matrix (28 x 28: 16 nvml OS devices, 12 NVSwitch
// PCI devices) gives every GPU row six entries of 25000 MB/s, all towards NVSwitches, and
// none towards another GPU: 6 x 25 GB/s = 150 GB/s into the switch fabric per GPU.
TEST_CASE("hwloc DGX-2 export gives 16 V100s on 12 NVSwitches at 150 GB/s", "[topology][hwloc]") {
    auto t = load_hwloc_xml(kData + "/hwloc/nvidiaDGX2.xml");
    REQUIRE(t.ok());
    CHECK(t->format == "hwloc-xml");
    CHECK(t->packages == 2);
    CHECK(t->numa_nodes.size() == 2);
    CHECK(t->nvswitches == 12);
    REQUIRE(t->gpus.size() == 16);
    check_matrix_shapes(*t);
    CHECK(t->gpus[0].pci_busid == "0000:34:00.0");
    CHECK(t->gpus[15].pci_busid == "0000:e7:00.0");
    CHECK(t->gpus[0].os_devices == std::vector<std::string>{"nvml0"});
    for (std::size_t g = 0; g < 16; ++g) {
        CHECK_THAT(t->gpus[g].model, Catch::Contains("V100"));
        CHECK(t->gpus[g].nvlink_gbs == Approx(150.0));
        CHECK(t->gpus[g].numa_node == (g < 8 ? 0 : 1));  // 8 GPUs behind each socket
        CHECK(t->gpus[g].cpus == (g < 8 ? std::vector<int>{0, 1} : std::vector<int>{24, 25}));
    }
    for (int a = 0; a < 16; ++a)
        for (int b = 0; b < 16; ++b)
            if (a != b) {
                CHECK(t->path(a, b) == PathType::kNVSwitch);
                CHECK(t->bandwidth(a, b) == Approx(150.0));
            }
    // Across the two baseboards too: the matrix shows no switch-to-switch trunk, but the
    // switches are taken as one fabric.
    CHECK(t->path(0, 8) == PathType::kNVSwitch);
    CHECK(t->nics.empty());
    CHECK(t->gpu_nic_pairing() == std::vector<int>(16, -1));
}

// power8gpudistances.xml: NVLinkBandwidth rows nvml0..3 read
//   nvml0: - 40000 0 0 | Package0 40000      nvml2: 0 0 - 40000 | Package1 40000
//   nvml1: 40000 - 0 0 | Package0 40000      nvml3: 0 0 40000 - | Package1 40000
// so GPUs 0+1 and 2+3 are NVLink pairs at 40 GB/s, each with 40 GB/s more to its CPU.
TEST_CASE("hwloc POWER8 export gives 4 P100s in two NVLink pairs", "[topology][hwloc]") {
    auto t = load_hwloc_xml(kData + "/hwloc/power8gpudistances.xml");
    REQUIRE(t.ok());
    CHECK(t->hostname == "drac-12.grenoble.grid5000.fr");
    REQUIRE(t->gpus.size() == 4);
    check_matrix_shapes(*t);
    CHECK(t->gpus[0].pci_busid == "0002:01:00.0");
    CHECK(t->gpus[1].pci_busid == "0003:01:00.0");
    CHECK(t->gpus[2].pci_busid == "000a:01:00.0");
    CHECK(t->gpus[3].pci_busid == "000b:01:00.0");
    for (const auto &g : t->gpus) {
        CHECK(g.model == "Tesla P100-SXM2-16GB");
        CHECK(g.nvlink_gbs == Approx(80.0));
    }
    CHECK(t->gpus[0].os_devices == std::vector<std::string>{"cuda0", "opencl0d0", "nvml0"});
    CHECK(t->gpus[0].numa_node == 0);
    CHECK(t->gpus[3].numa_node == 1);
    CHECK(t->nvswitches == 0);

    for (auto [a, b] : {std::pair{0, 1}, std::pair{2, 3}}) {
        CHECK(t->path(a, b) == PathType::kNVLink);
        CHECK(t->path(b, a) == PathType::kNVLink);
        CHECK(t->bandwidth(a, b) == Approx(40.0));
    }
    // Not linked: the PCIe route, across the two sockets; its slowest link is the root
    // ports' 7.88 GB/s, under the 10 GB/s inter-socket cap.
    for (auto [a, b] : {std::pair{0, 2}, std::pair{0, 3}, std::pair{1, 2}, std::pair{1, 3}}) {
        CHECK(t->path(a, b) == PathType::kInterSocket);
        CHECK(t->bandwidth(a, b) == Approx(7.877).epsilon(0.001));
    }
}

// 32em64t-2n8c2t-pci-normalio.xml, as the tree nests it:
//   Package 0: host bridge [00-05] -> root port 00:03.0 -> 03:00.0 (NVIDIA 0302, no OS device)
//   Package 1: host bridge [80-84] -> 80:01.0 -> 81:00.0 eth0, 81:00.1 eth1 (Intel I350)
//                                  -> 80:02.0 -> 83:00.0 (NVIDIA 0302)
//                                  -> 80:03.0 -> 84:00.0 (cuda0, Tesla K40m)
//                                                84:00.1 (AMD 0300, opencl0d1)
//                                                04:00.0 (Mellanox 0207: ib0 + mlx5_0)
// No link speed is known (all 0), so PCIe routes get the 16 GB/s default.
TEST_CASE("hwloc dual Xeon export classifies its PCIe paths", "[topology][hwloc]") {
    auto t = load_hwloc_xml(kData + "/hwloc/32em64t-2n8c2t-pci-normalio.xml");
    REQUIRE(t.ok());
    CHECK(t->hostname == "conan");
    CHECK(t->packages == 2);
    CHECK(t->cores == 16);
    CHECK(t->pus == 32);
    REQUIRE(t->numa_nodes.size() == 2);
    for (const auto &n : t->numa_nodes)
        CHECK(n.cpus.size() == 16);
    CHECK(to_cpu_list(t->numa_nodes[0].cpus) == "0-7,16-23");
    CHECK(t->numa_nodes[0].memory_bytes == 34330173440ull);

    REQUIRE(t->gpus.size() == 4);
    check_matrix_shapes(*t);
    const int m2075a = gpu_index(*t, "0000:03:00.0"), m2075b = gpu_index(*t, "0000:83:00.0");
    const int k40 = gpu_index(*t, "0000:84:00.0"), amd = gpu_index(*t, "0000:84:00.1");
    CHECK(t->gpus[static_cast<std::size_t>(k40)].model == "Tesla K40m");
    CHECK(t->gpus[static_cast<std::size_t>(k40)].os_devices ==
          std::vector<std::string>{"cuda0", "card0"});
    CHECK(t->gpus[static_cast<std::size_t>(amd)].os_devices ==
          std::vector<std::string>{"opencl0d1"});
    CHECK_THAT(t->gpus[static_cast<std::size_t>(m2075a)].model, Catch::Contains("M2075"));
    CHECK(t->gpus[static_cast<std::size_t>(m2075a)].numa_node == 0);
    CHECK(t->gpus[static_cast<std::size_t>(k40)].numa_node == 1);

    REQUIRE(t->nics.size() == 3);  // ib0 is the netdev of mlx5_0, not a NIC of its own
    const int mlx = nic_index(*t, "0000:04:00.0"), eth0 = nic_index(*t, "0000:81:00.0");
    CHECK(t->nics[static_cast<std::size_t>(mlx)].name == "mlx5_0");
    CHECK(t->nics[static_cast<std::size_t>(mlx)].kind == "ib");
    CHECK(t->nics[static_cast<std::size_t>(eth0)].name == "eth0");
    CHECK(t->nics[static_cast<std::size_t>(eth0)].kind == "ethernet");
    CHECK(t->nics[static_cast<std::size_t>(nic_index(*t, "0000:81:00.1"))].kind == "ethernet");

    CHECK(t->path(k40, amd) == PathType::kPCIeSwitch);     // same root port
    CHECK(t->path(m2075b, k40) == PathType::kHostBridge);  // two root ports, one host bridge
    CHECK(t->path(m2075a, m2075b) == PathType::kInterSocket);
    CHECK(t->bandwidth(k40, amd) == Approx(kDefaultPcieGBs));
    CHECK(t->bandwidth(m2075a, m2075b) == Approx(kInterSocketGBs));
    CHECK(t->nic_path(k40, mlx) == PathType::kPCIeSwitch);
    CHECK(t->nic_path(amd, mlx) == PathType::kPCIeSwitch);
    CHECK(t->nic_path(m2075b, mlx) == PathType::kHostBridge);
    CHECK(t->nic_path(m2075b, eth0) == PathType::kHostBridge);
    CHECK(t->nic_path(m2075a, mlx) == PathType::kInterSocket);

    // The host's one fabric NIC is the HCA: every GPU is paired with it, the M2075 of
    // socket 1 too, although the two management ports (I350) are as near to it (PHB) and
    // less used; the M2075 of socket 0 is SYS to all and crosses the sockets to it.
    CHECK(t->nics[static_cast<std::size_t>(mlx)].fabric());
    CHECK_FALSE(t->nics[static_cast<std::size_t>(eth0)].fabric());
    CHECK(t->gpu_nic_pairing() == std::vector<int>(4, mlx));

    // Without the HCA, the Ethernet ports are all there is: GPUs are paired with them, the
    // nearer first, then the less used.
    NodeTopology eth_only = *t;
    const auto N = t->nics.size();
    eth_only.nics.erase(eth_only.nics.begin() + mlx);
    eth_only.gpu_nic_path.clear();
    for (std::size_t g = 0; g < t->gpus.size(); ++g)
        for (std::size_t n = 0; n < N; ++n)
            if (static_cast<int>(n) != mlx)
                eth_only.gpu_nic_path.push_back(t->gpu_nic_path[g * N + n]);
    auto eth_pairing = eth_only.gpu_nic_pairing();
    REQUIRE(eth_pairing.size() == 4);
    for (int p : eth_pairing) {
        REQUIRE(p >= 0);
        CHECK(eth_only.nics[static_cast<std::size_t>(p)].kind == "ethernet");
    }
    CHECK(eth_pairing[static_cast<std::size_t>(k40)] != eth_pairing[static_cast<std::size_t>(amd)]);
}

// ndv4-topo.xml: under each <cpu> one PCIe switch holds two GPUs and two IB NICs
// (numaid 0: GPUs 0003 0004 and NICs 0103 0104; 1: 0001 0002 / 0101 0102;
// 2: 000d 000e / 0107 0108; 3: 000b 000c / 0105 0106), all Gen4 x16.
TEST_CASE("NCCL NDv4 file pairs each GPU with its own NIC under its PCIe switch",
          "[topology][nccl]") {
    auto t = load_nccl_topo(kData + "/nccl-topo/ndv4-topo.xml");
    REQUIRE(t.ok());
    CHECK(t->format == "nccl-xml");
    REQUIRE(t->gpus.size() == 8);
    REQUIRE(t->nics.size() == 8);
    check_matrix_shapes(*t);
    CHECK(t->pus == 96);
    REQUIRE(t->numa_nodes.size() == 4);
    CHECK(to_cpu_list(t->numa_nodes[0].cpus) == "0-23");
    CHECK(to_cpu_list(t->numa_nodes[3].cpus) == "72-95");
    using P = std::pair<std::string, std::string>;
    CHECK(pairs_of(*t) == std::vector<P>{{"0001:00:00.0", "0101:00:00.0"},
                                         {"0002:00:00.0", "0102:00:00.0"},
                                         {"0003:00:00.0", "0103:00:00.0"},
                                         {"0004:00:00.0", "0104:00:00.0"},
                                         {"000b:00:00.0", "0105:00:00.0"},
                                         {"000c:00:00.0", "0106:00:00.0"},
                                         {"000d:00:00.0", "0107:00:00.0"},
                                         {"000e:00:00.0", "0108:00:00.0"}});
    for (const auto &n : t->nics) {
        CHECK(n.kind == "ib");
        CHECK(n.name == n.pci_busid);  // no <net> names in this file
        CHECK(n.pcie_gbs == Approx(16 * 1.969));
    }
    const int g1 = gpu_index(*t, "0001:00:00.0"), g3 = gpu_index(*t, "0003:00:00.0");
    CHECK(t->gpus[static_cast<std::size_t>(g1)].numa_node == 1);
    CHECK(to_cpu_list(t->gpus[static_cast<std::size_t>(g1)].cpus) == "24-47");
    CHECK(t->path(g1, gpu_index(*t, "0002:00:00.0")) == PathType::kPCIeSwitch);
    CHECK(t->bandwidth(g1, gpu_index(*t, "0002:00:00.0")) == Approx(31.504));
    CHECK(t->path(g1, g3) == PathType::kInterSocket);
    CHECK(t->bandwidth(g1, g3) == Approx(kInterSocketGBs));
    CHECK(t->nic_path(g1, nic_index(*t, "0102:00:00.0")) == PathType::kPCIeSwitch);
    CHECK(t->nic_path(g1, nic_index(*t, "0103:00:00.0")) == PathType::kInterSocket);
}

// ndv5-topo.xml: eight PCIe switches, each with one GPU and one NIC (Gen5 x16); switches
// 01-04 under numaid 0, 05-08 under numaid 1.
TEST_CASE("NCCL NDv5 file pairs each GPU with the NIC beside it", "[topology][nccl]") {
    auto t = load_nccl_topo(kData + "/nccl-topo/ndv5-topo.xml");
    REQUIRE(t.ok());
    REQUIRE(t->gpus.size() == 8);
    REQUIRE(t->nics.size() == 8);
    check_matrix_shapes(*t);
    using P = std::pair<std::string, std::string>;
    CHECK(pairs_of(*t) == std::vector<P>{{"0001:00:00.0", "0101:00:00.0"},
                                         {"0002:00:00.0", "0102:00:00.0"},
                                         {"0003:00:00.0", "0103:00:00.0"},
                                         {"0008:00:00.0", "0104:00:00.0"},
                                         {"0009:00:00.0", "0105:00:00.0"},
                                         {"000a:00:00.0", "0106:00:00.0"},
                                         {"000b:00:00.0", "0107:00:00.0"},
                                         {"000c:00:00.0", "0108:00:00.0"}});
    REQUIRE(t->numa_nodes.size() == 2);
    CHECK(to_cpu_list(t->numa_nodes[0].cpus) == "0-47");
    CHECK(to_cpu_list(t->numa_nodes[1].cpus) == "48-95");
    const int g1 = gpu_index(*t, "0001:00:00.0"), g2 = gpu_index(*t, "0002:00:00.0");
    CHECK(t->gpus[static_cast<std::size_t>(g1)].numa_node == 0);
    CHECK(t->gpus[static_cast<std::size_t>(gpu_index(*t, "0009:00:00.0"))].numa_node == 1);
    CHECK(t->path(g1, g2) == PathType::kHostBridge);  // two switches, one CPU
    CHECK(t->nic_path(g1, nic_index(*t, "0101:00:00.0")) == PathType::kPCIeSwitch);
    CHECK(t->nic_path(g1, nic_index(*t, "0102:00:00.0")) == PathType::kHostBridge);
    CHECK(t->nic_path(g1, nic_index(*t, "0105:00:00.0")) == PathType::kInterSocket);
    CHECK(t->gpu_nic_bandwidth[static_cast<std::size_t>(g1) * 8] == Approx(16 * 3.938));
}

// p4d-24xl-topo.xml: four PCIe switches (Gen3 x16), each with GPUs at :1c.0 and :1d.0 and
// an EFA NIC (vendor 0x1d0f, device 0xefa0, class 0x020000) at :1b.0; switches 10 and 20
// under numaid 0, 90 and a0 under numaid 1.
TEST_CASE("NCCL p4d file shares each EFA NIC between two GPUs", "[topology][nccl]") {
    auto t = load_nccl_topo(kData + "/nccl-topo/p4d-24xl-topo.xml");
    REQUIRE(t.ok());
    REQUIRE(t->gpus.size() == 8);
    REQUIRE(t->nics.size() == 4);
    check_matrix_shapes(*t);
    for (const auto &n : t->nics) {
        CHECK(n.kind == "efa");
        CHECK(n.pcie_gbs == Approx(16 * 0.985));
    }
    using P = std::pair<std::string, std::string>;
    CHECK(pairs_of(*t) == std::vector<P>{{"0000:10:1c.0", "0000:10:1b.0"},
                                         {"0000:10:1d.0", "0000:10:1b.0"},
                                         {"0000:20:1c.0", "0000:20:1b.0"},
                                         {"0000:20:1d.0", "0000:20:1b.0"},
                                         {"0000:90:1c.0", "0000:90:1b.0"},
                                         {"0000:90:1d.0", "0000:90:1b.0"},
                                         {"0000:a0:1c.0", "0000:a0:1b.0"},
                                         {"0000:a0:1d.0", "0000:a0:1b.0"}});
    REQUIRE(t->numa_nodes.size() == 2);
    CHECK(to_cpu_list(t->numa_nodes[0].cpus) == "0-23,48-71");
    CHECK(to_cpu_list(t->numa_nodes[1].cpus) == "24-47,72-95");
    const int a = gpu_index(*t, "0000:10:1c.0");
    CHECK(t->gpus[static_cast<std::size_t>(a)].numa_node == 0);
    CHECK(t->gpus[static_cast<std::size_t>(gpu_index(*t, "0000:a0:1d.0"))].numa_node == 1);
    CHECK(t->path(a, gpu_index(*t, "0000:10:1d.0")) == PathType::kPCIeSwitch);
    CHECK(t->bandwidth(a, gpu_index(*t, "0000:10:1d.0")) == Approx(15.76));
    CHECK(t->path(a, gpu_index(*t, "0000:20:1c.0")) == PathType::kHostBridge);
    CHECK(t->path(a, gpu_index(*t, "0000:90:1c.0")) == PathType::kInterSocket);
}

TEST_CASE("NCCL nvlink elements give NVL and NVS paths", "[topology][nccl]") {
    // Two GPUs with two direct links (sm 70: 25 GB/s each) and a third reaching only
    // NVSwitches; the first also has six links to NVSwitches.
    const std::string xml = R"(<system version="1">
  <cpu numaid="0" affinity="0000000f">
    <pci busid="0000:01:00.0" class="0x030200" link_speed="8 GT/s" link_width="16">
      <gpu dev="0" sm="70">
        <nvlink target="0000:02:00.0" count="2" tclass="0x030200"/>
        <nvlink target="fffffff:ffff:ff" count="6" tclass="0x068000"/>
      </gpu>
    </pci>
    <pci busid="0000:02:00.0" class="0x030200" link_speed="8 GT/s" link_width="16">
      <gpu dev="1" sm="70"><nvlink target="0000:01:00.0" count="2"/></gpu>
    </pci>
    <pci busid="0000:03:00.0" class="0x030200" link_speed="8 GT/s" link_width="16">
      <gpu dev="2" sm="70"><nvlink target="0000:c1:00.0" count="4" tclass="0x068000"/></gpu>
    </pci>
  </cpu>
</system>)";
    auto t = parse_nccl_topo(xml, "inline.xml");
    REQUIRE(t.ok());
    REQUIRE(t->gpus.size() == 3);
    check_matrix_shapes(*t);
    CHECK(t->nvswitches == 2);  // the invisible one and 0000:c1:00.0
    CHECK(t->path(0, 1) == PathType::kNVLink);
    CHECK(t->bandwidth(0, 1) == Approx(50.0));
    CHECK(t->path(0, 2) == PathType::kNVSwitch);
    CHECK(t->bandwidth(0, 2) == Approx(100.0));     // min(6, 4) links of 25 GB/s
    CHECK(t->path(1, 2) == PathType::kHostBridge);  // GPU 1 has no switch links
    CHECK(t->gpus[0].nvlink_gbs == Approx(200.0));
    CHECK(t->pus == 4);
}

TEST_CASE("NCCL link speeds convert to GB/s per direction", "[topology][nccl]") {
    auto nic = [](const std::string &speed, const std::string &width) {
        std::string xml =
            "<system><cpu numaid=\"0\" affinity=\"1\"><pci busid=\"0000:01:00.0\" "
            "class=\"0x020000\" link_speed=\"" +
            speed + "\" link_width=\"" + width + "\"/></cpu></system>";
        auto t = parse_nccl_topo(xml, "inline.xml");
        REQUIRE(t.ok());
        REQUIRE(t->nics.size() == 1);
        CHECK(t->nics[0].kind == "ethernet");
        return t->nics[0].pcie_gbs;
    };
    CHECK(nic("2.5 GT/s", "1") == Approx(0.25));
    CHECK(nic("5 GT/s", "4") == Approx(2.0));
    CHECK(nic("8 GT/s", "16") == Approx(15.76));
    CHECK(nic("8.0 GT/s PCIe", "8") == Approx(7.88));
    CHECK(nic("16 GT/s", "16") == Approx(31.504));
    CHECK(nic("32.0 GT/s PCIe", "16") == Approx(63.008));
    CHECK(nic("16 GT/s", "0") == Approx(31.504));  // unknown width: x16, as NCCL assumes
    CHECK(nic("", "16") == 0.0);                   // unknown speed
    // NCCL matches the rate as a prefix: AWS's p5.48xlarge file writes "32 GT/s PCIe/s".
    CHECK(nic("32 GT/s PCIe/s", "16") == Approx(63.008));
    auto no_unit = parse_nccl_topo(
        "<system><cpu numaid=\"0\" affinity=\"1\"><pci busid=\"0000:01:00.0\" "
        "class=\"0x020000\" link_speed=\"PCIe 32\"/></cpu></system>",
        "inline.xml");
    REQUIRE_FALSE(no_unit.ok());
    CHECK(no_unit.error().field == "link_speed");
}

TEST_CASE("NCCL p5.48xlarge file (switches and endpoints, no GPUs listed) is read",
          "[topology][nccl]") {
    auto t = load_node_topology(kData + "/nccl-topo/p5-48xl-topo.xml");
    INFO((t.ok() ? std::string() : t.error().message()));
    REQUIRE(t.ok());
    CHECK(t->numa_nodes.size() == 2);
    CHECK(t->gpus.empty());  // "GPUs are not reported in this file", its header says
}

TEST_CASE("node topology loader picks the format by root element", "[topology]") {
    auto hw = load_node_topology(kData + "/hwloc/power8gpudistances.xml");
    REQUIRE(hw.ok());
    CHECK(hw->format == "hwloc-xml");
    auto nccl = load_node_topology(kData + "/nccl-topo/p4d-24xl-topo.xml");
    REQUIRE(nccl.ok());
    CHECK(nccl->format == "nccl-xml");
    CHECK(nccl->source == kData + "/nccl-topo/p4d-24xl-topo.xml");

    const test::ScratchDir scratch("node-topology");
    const std::string file = scratch / "graph.xml";
    std::ofstream(file) << "<?xml version=\"1.0\"?>\n<graph>\n</graph>\n";
    auto other = load_node_topology(file);
    REQUIRE_FALSE(other.ok());
    CHECK(other.error().field == "root element");
    CHECK(other.error().value == "graph");
    CHECK(other.error().line == 2);
}

TEST_CASE("hwloc loader rejects bad input naming source and field", "[topology][hwloc]") {
    const std::string dgx = slurp(kData + "/hwloc/nvidiaDGX2.xml");

    auto malformed = parse_hwloc_xml(
        "<topology version=\"2.0\">\n<object type=\"Machine\">\n"
        "</topology>\n",
        "bad.xml");
    REQUIRE_FALSE(malformed.ok());
    CHECK(malformed.error().source == "bad.xml");
    CHECK(malformed.error().field == "xml");
    CHECK(malformed.error().line == 3);
    CHECK_THAT(malformed.error().message(), Catch::StartsWith("bad.xml:3: xml="));

    auto wrong_root = parse_hwloc_xml(slurp(kData + "/nccl-topo/ndv4-topo.xml"), "ndv4.xml");
    REQUIRE_FALSE(wrong_root.ok());
    CHECK(wrong_root.error().field == "root element");
    CHECK(wrong_root.error().value == "system");
    CHECK(wrong_root.error().line == 1);

    auto bad_busid = parse_hwloc_xml(
        replace_once(dgx, "pci_busid=\"0000:34:00.0\"", "pci_busid=\"0000:34:zz.0\""), "dgx2.xml");
    REQUIRE_FALSE(bad_busid.ok());
    CHECK(bad_busid.error().field == "pci_busid");
    CHECK(bad_busid.error().value == "0000:34:zz.0");
    CHECK(bad_busid.error().source == "dgx2.xml");
    CHECK(bad_busid.error().line == line_of(dgx, "pci_busid=\"0000:34:00.0\""));

    auto bad_speed = parse_hwloc_xml(
        replace_once(dgx, "pci_link_speed=\"3.938462\"", "pci_link_speed=\"fast\""), "dgx2.xml");
    REQUIRE_FALSE(bad_speed.ok());
    CHECK(bad_speed.error().field == "pci_link_speed");
    CHECK(bad_speed.error().line == line_of(dgx, "pci_link_speed=\"3.938462\""));

    auto bad_version =
        parse_hwloc_xml(replace_once(dgx, "version=\"3.0\"", "version=\"4.0\""), "dgx2.xml");
    REQUIRE_FALSE(bad_version.ok());
    CHECK(bad_version.error().field == "version");
    CHECK(bad_version.error().line == 3);

    auto empty = parse_hwloc_xml("", "empty.xml");
    REQUIRE_FALSE(empty.ok());
    CHECK(empty.error().source == "empty.xml");
    CHECK(empty.error().field == "xml");

    auto missing = load_hwloc_xml(kData + "/hwloc/no-such-file.xml");
    REQUIRE_FALSE(missing.ok());
    CHECK(missing.error().field == "file");
    CHECK(missing.error().source == kData + "/hwloc/no-such-file.xml");

    // Well-formed and checked, but libhwloc refuses it (no root object).
    auto refused = parse_hwloc_xml("<topology version=\"2.0\"></topology>", "hollow.xml");
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().field == "topology");
    CHECK(refused.error().source == "hollow.xml");
}

TEST_CASE("NCCL loader rejects bad input naming source and field", "[topology][nccl]") {
    const std::string p4d = slurp(kData + "/nccl-topo/p4d-24xl-topo.xml");

    auto malformed = parse_nccl_topo("<system>\n<cpu numaid=\"0\">\n</system>", "bad.xml");
    REQUIRE_FALSE(malformed.ok());
    CHECK(malformed.error().field == "xml");
    CHECK(malformed.error().source == "bad.xml");
    CHECK(malformed.error().line == 3);

    auto wrong_root = parse_nccl_topo(slurp(kData + "/hwloc/power8gpudistances.xml"), "p8.xml");
    REQUIRE_FALSE(wrong_root.ok());
    CHECK(wrong_root.error().field == "root element");
    CHECK(wrong_root.error().value == "topology");

    auto bad_busid = parse_nccl_topo(replace_once(p4d, "0000:10:1d.0", "0000:10:1g.0"), "p4d.xml");
    REQUIRE_FALSE(bad_busid.ok());
    CHECK(bad_busid.error().field == "busid");
    CHECK(bad_busid.error().value == "0000:10:1g.0");
    CHECK(bad_busid.error().source == "p4d.xml");
    CHECK(bad_busid.error().line == line_of(p4d, "0000:10:1d.0"));

    auto bad_speed =
        parse_nccl_topo(replace_once(p4d, "link_speed=\"8 GT/s\" link_width=\"16\"/> <!-- GPU 1",
                                     "link_speed=\"9 GT/s\" link_width=\"16\"/> <!-- GPU 1"),
                        "p4d.xml");
    REQUIRE_FALSE(bad_speed.ok());
    CHECK(bad_speed.error().field == "link_speed");
    CHECK(bad_speed.error().value == "9 GT/s");
    CHECK(bad_speed.error().line == line_of(p4d, "<!-- GPU 1"));

    auto bad_affinity =
        parse_nccl_topo(replace_once(p4d, "000000ff,ffff0000,00ffffff", "xyz"), "p4d.xml");
    REQUIRE_FALSE(bad_affinity.ok());
    CHECK(bad_affinity.error().field == "affinity");

    auto duplicate = parse_nccl_topo(replace_once(p4d, "0000:10:1d.0", "0000:10:1c.0"), "p4d.xml");
    REQUIRE_FALSE(duplicate.ok());
    CHECK(duplicate.error().field == "busid");

    auto entity = parse_nccl_topo("<!DOCTYPE system [<!ENTITY a \"x\">]>\n<system/>", "ent.xml");
    REQUIRE_FALSE(entity.ok());
    CHECK(entity.error().value == "<!ENTITY");

    std::string many = "<system><cpu numaid=\"0\">";
    for (int i = 0; i <= 1024; ++i) {
        char busid[32];
        std::snprintf(busid, sizeof busid, "%04x:00:00.0", i);
        many += std::string("<pci busid=\"") + busid + "\" class=\"0x030200\"/>";
    }
    auto too_many = parse_nccl_topo(many + "</cpu></system>", "many.xml");
    REQUIRE_FALSE(too_many.ok());
    CHECK(too_many.error().field == "<gpu>");
    CHECK(too_many.error().value == "0400:00:00.0");

    auto empty = parse_nccl_topo(" \n", "empty.xml");
    REQUIRE_FALSE(empty.ok());
    CHECK(empty.error().source == "empty.xml");
    CHECK(empty.error().field == "xml");

    auto missing = load_nccl_topo("/nonexistent/topo.xml");
    REQUIRE_FALSE(missing.ok());
    CHECK(missing.error().field == "file");
    CHECK(missing.error().source == "/nonexistent/topo.xml");
}

TEST_CASE("hwloc loader refuses what would crash or bloat libhwloc", "[topology][hwloc]") {
    // libhwloc 2.9 trusts these attributes; each case below crashed, aborted or made it
    // allocate hundreds of MiB before the loader checked it (see tests/fuzz/regressions).
    const std::string dgx = slurp(kData + "/hwloc/nvidiaDGX2.xml");
    struct Case {
        const char *from, *to, *field;
    };
    for (auto c :
         {Case{"complete_nodeset=\"0x00000001\" gp_index=\"294\"", "gp_index=\"294\"",
               "complete_nodeset"},
          Case{"cpuset=\"0x00000003\" complete_cpuset", "cpuset=\",x3\" complete_cpuset", "cpuset"},
          Case{"<object type=\"PU\" os_index=\"25\"", "<object type=\"PU\"", "os_index"},
          Case{"<object type=\"PU\" os_index=\"25\"", "<object type=\"PU\" os_index=\"4000000000\"",
               "os_index"},
          Case{"bridge_type=\"1-1\"", "bridge_type=\"1-2\"", "bridge_type"},
          Case{"osdev_type=\"12\"", "osdev_type=\"twelve\"", "osdev_type"},
          Case{"<info name=\"CPUStepping\"", "<bogus name=\"CPUStepping\"", "<object>"},
          Case{"<info name=\"CPUStepping\"", "! <info name=\"CPUStepping\"", "<object>"}}) {
        auto r = parse_hwloc_xml(replace_once(dgx, c.from, c.to), "dgx2.xml");
        REQUIRE_FALSE(r.ok());
        CHECK(r.error().field == c.field);
        CHECK(r.error().line > 0);
    }
}

// POWER numbers cores and packages by hardware ids (POWER9's core ids carry the chip id
// in their high bits), and hwloc v1 exports write 4294967295 for an unknown index: such
// indexes are numbers, not bits of a set, and a real export that has them is read.
TEST_CASE("hwloc loader reads the large core and package indexes POWER gives",
          "[topology][hwloc]") {
    const std::string p8 = slurp(kData + "/hwloc/power8gpudistances.xml");
    std::string big = replace_once(p8, "<object type=\"Core\" os_index=\"8\"",
                                   "<object type=\"Core\" os_index=\"2148532224\"");
    big = replace_once(big, "<object type=\"Package\" os_index=\"1\"",
                       "<object type=\"Package\" os_index=\"4294967295\"");
    auto t = parse_hwloc_xml(big, "power-ids.xml");
    REQUIRE(t.ok());
    auto plain = parse_hwloc_xml(p8, "power8gpudistances.xml");
    REQUIRE(plain.ok());
    CHECK(t->cores == plain->cores);
    CHECK(t->packages == 2);
    CHECK(t->gpus.size() == 4);

    // Beyond 32 bits is no index at all.
    auto over = parse_hwloc_xml(replace_once(p8, "<object type=\"Core\" os_index=\"8\"",
                                             "<object type=\"Core\" os_index=\"4294967296\""),
                                "over.xml");
    REQUIRE_FALSE(over.ok());
    CHECK(over.error().field == "os_index");
    CHECK(over.error().value == "4294967296");
}

TEST_CASE("fuzz regressions are rejected cleanly", "[topology][fuzz]") {
    namespace fs = std::filesystem;
    const fs::path root = fs::path(SLURM_AI_TEST_INPUTS).parent_path() / "fuzz" / "regressions";
    int replayed = 0;
    for (const char *target : {"hwloc_xml", "nccl_topo"}) {
        if (!fs::is_directory(root / target))
            continue;
        for (const auto &entry : fs::directory_iterator(root / target)) {
            INFO(entry.path().string());
            const std::string text = slurp(entry.path().string());
            auto t = std::string(target) == "hwloc_xml" ? parse_hwloc_xml(text, "regression")
                                                        : parse_nccl_topo(text, "regression");
            CHECK_FALSE(t.ok());  // every kept input is malformed
            if (!t.ok())
                CHECK_FALSE(t.error().field.empty());
            ++replayed;
        }
    }
    CHECK(replayed > 0);
}

TEST_CASE("live discovery describes this host", "[topology][live]") {
    auto t = discover_local_node();
    REQUIRE(t.ok());
    CHECK(t->format == "live");
    CHECK(t->source == "live");
    CHECK(t->pus > 0);
    CHECK(t->cores > 0);
    CHECK_FALSE(t->numa_nodes.empty());
    CHECK_FALSE(t->hostname.empty());
    check_matrix_shapes(*t);
    for (const auto &n : t->nics)
        CHECK_FALSE(n.name.empty());
    nlohmann::json j = *t;
    CHECK(j["pus"] == t->pus);
}

TEST_CASE("node topology JSON carries devices matrices and pairing", "[topology]") {
    auto t = load_nccl_topo(kData + "/nccl-topo/p4d-24xl-topo.xml");
    REQUIRE(t.ok());
    nlohmann::json j = *t;
    CHECK(j["format"] == "nccl-xml");
    REQUIRE(j["gpus"].size() == 8);
    CHECK(j["gpus"][0]["busid"] == "0000:10:1c.0");
    CHECK(j["gpus"][0]["cpus"] == "0-23,48-71");
    CHECK(j["gpus"][0]["numa"] == 0);
    CHECK(j["nics"][3]["kind"] == "efa");
    CHECK(j["gpu_path"][0][1] == "PIX");
    CHECK(j["gpu_path"][0][0] == "SELF");
    CHECK(j["gpu_nic_path"][7][3] == "PIX");
    CHECK(j["gpu_bandwidth"][0][1] == 15.76);
    CHECK(j["gpu_nic_pairing"] == std::vector<int>{0, 0, 1, 1, 2, 2, 3, 3});
    CHECK(j["numa_nodes"][1]["cpus"] == "24-47,72-95");

    auto dgx = load_hwloc_xml(kData + "/hwloc/nvidiaDGX2.xml");
    REQUIRE(dgx.ok());
    nlohmann::json d = *dgx;
    CHECK(d["nvswitches"] == 12);
    CHECK(d["gpu_path"][0][15] == "NVS");
    CHECK(d["gpus"][3]["os_devices"] == std::vector<std::string>{"nvml3"});
}

TEST_CASE("path types print as NCCL names", "[topology]") {
    CHECK(to_string(PathType::kSelf) == "SELF");
    CHECK(to_string(PathType::kNVLink) == "NVL");
    CHECK(to_string(PathType::kNVSwitch) == "NVS");
    CHECK(to_string(PathType::kPCIeSwitch) == "PIX");
    CHECK(to_string(PathType::kPCIeBridges) == "PXB");
    CHECK(to_string(PathType::kHostBridge) == "PHB");
    CHECK(to_string(PathType::kInterSocket) == "SYS");
}

TEST_CASE("PCI bus ids are checked and normalized", "[topology]") {
    CHECK(parse_pci_busid("0000:34:00.0").value() == "0000:34:00.0");
    CHECK(parse_pci_busid("00000000:3B:00.0").value() == "0000:3b:00.0");  // nvidia-smi's form
    CHECK(parse_pci_busid("2:01:00.0").value() == "0002:01:00.0");
    CHECK(parse_pci_busid("ffff:ff:1f.7").value() == "ffff:ff:1f.7");
    for (const char *bad : {"", "0000:34:00", "0000:34:00.8", "0000:34:20.0", "0000:3:00.0",
                            "000000000:34:00.0", "0000:34:00.0 ", "0000-34-00.0", "g000:34:00.0"}) {
        auto r = parse_pci_busid(bad, "pci_busid");
        CHECK_FALSE(r.ok());
        if (!r.ok()) {
            CHECK(r.error().field == "pci_busid");
            CHECK(r.error().value == bad);
        }
    }
}

TEST_CASE("cpu lists are compacted into ranges", "[topology]") {
    CHECK(to_cpu_list({}) == "");
    CHECK(to_cpu_list({3}) == "3");
    CHECK(to_cpu_list({5, 0, 1, 2, 3, 7, 8, 3}) == "0-3,5,7-8");
}

TEST_CASE("GPU NIC pairing spreads GPUs over equally near NICs", "[topology]") {
    NodeTopology t;
    t.gpus.resize(3);
    CHECK(t.gpu_nic_pairing() == std::vector<int>{-1, -1, -1});
    t.nics.resize(2);
    // No path matrix (a hand-built topology): every NIC equally far, used in turn.
    CHECK(t.gpu_nic_pairing() == std::vector<int>{0, 1, 0});
    t.gpu_nic_path = {PathType::kInterSocket, PathType::kPCIeSwitch,  //
                      PathType::kPCIeSwitch,  PathType::kPCIeSwitch,  //
                      PathType::kHostBridge,  PathType::kHostBridge};
    CHECK(t.gpu_nic_pairing() == std::vector<int>{1, 0, 0});
}
