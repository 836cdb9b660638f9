// One node's GPUs, NICs, NUMA nodes and cores, and how they are connected: from hwloc
// (live, or an XML export of any host) or from an NCCL topology file (NCCL_TOPO_FILE
// format). Every loader returns Parsed<NodeTopology>; none throws on bad input.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "slurm_ai/input_error.hpp"

namespace slurm_ai {

// How two devices of a node reach each other, best first (NCCL's vocabulary).
enum class PathType {
    kSelf,         // SELF: the same device
    kNVLink,       // NVL: direct NVLink
    kNVSwitch,     // NVS: through NVSwitches
    kPCIeSwitch,   // PIX: under the same PCIe switch (one bridge)
    kPCIeBridges,  // PXB: several PCIe bridges, no host bridge crossed
    kHostBridge,   // PHB: through the CPU's host bridge, same NUMA node
    kInterSocket,  // SYS: across the inter-socket link
};
std::string_view to_string(PathType p);  // "SELF", "NVL", "NVS", "PIX", "PXB", "PHB", "SYS"

// Bandwidths used where the input gives none, in GB/s per direction.
inline constexpr double kDefaultPcieGBs = 16.0;         // PCIe 3.0 x16, roughly
inline constexpr double kInterSocketGBs = 10.0;         // what P2P across sockets achieves
inline constexpr double kDefaultNvlinkLinkGBs = 25.0;   // one NVLink 2 link

struct Gpu {
    std::string pci_busid;                // "0000:34:00.0", lowercase
    std::string model;                    // e.g. "Tesla V100-SXM3-32GB"; may be empty
    std::vector<std::string> os_devices;  // "cuda0", "nvml0", "rsmi0", ...
    int numa_node = -1;                   // OS index of the nearest NUMA node, -1 unknown
    std::vector<int> cpus;                // OS indexes of the PUs near the GPU
    double nvlink_gbs = 0;                // total NVLink bandwidth out of the GPU
};

struct Nic {
    std::string name;       // verbs device ("mlx5_0"), else net device ("ib0"), else bus id
    std::string pci_busid;  // lowercase
    std::string kind;       // "ib", "ethernet", "efa" or "unknown"
    int numa_node = -1;
    double pcie_gbs = 0;    // PCIe link bandwidth, 0 when unknown
};

struct NumaNode {
    int os_index = 0;
    std::vector<int> cpus;  // PU OS indexes
    std::uint64_t memory_bytes = 0;
};

struct NodeTopology {
    std::string hostname;  // from the input (hwloc's HostName info) or the live host
    std::string source;    // file path, or "live"
    std::string format;    // "hwloc-xml", "nccl-xml" or "live"
    int packages = 0, cores = 0, pus = 0;
    std::vector<NumaNode> numa_nodes;
    std::vector<Gpu> gpus;  // in PCI bus id order (CUDA_DEVICE_ORDER=PCI_BUS_ID)
    std::vector<Nic> nics;  // in PCI bus id order
    int nvswitches = 0;

    // gpus.size() x gpus.size(), row-major: peer-to-peer bandwidth (GB/s, one direction)
    // and path type between two GPUs. NVLink bandwidth comes from hwloc's NVLinkBandwidth
    // distances (the sum of direct links; through NVSwitches, the smaller of the two
    // GPUs' total bandwidth into the switch fabric, which is taken as non-blocking);
    // otherwise the PCIe path's slowest link, capped by kInterSocketGBs across sockets.
    std::vector<double> gpu_bandwidth;
    std::vector<PathType> gpu_path;
    // gpus.size() x nics.size(), row-major: path type and PCIe bandwidth GPU -> NIC.
    std::vector<PathType> gpu_nic_path;
    std::vector<double> gpu_nic_bandwidth;

    double bandwidth(int a, int b) const { return gpu_bandwidth[a * gpus.size() + b]; }
    PathType path(int a, int b) const { return gpu_path[a * gpus.size() + b]; }
    PathType nic_path(int g, int n) const { return gpu_nic_path[g * nics.size() + n]; }

    // The NIC each GPU should use (index into nics, -1 without NICs): the nearest by path
    // type; among equally near NICs, the one fewest lower-numbered GPUs already use, then
    // the lowest index, so that two GPUs and two NICs under one PCIe switch get one each.
    std::vector<int> gpu_nic_pairing() const;
};

// hwloc XML (v1 or v2 format), through libhwloc with I/O discovery of PCI and OS devices.
Parsed<NodeTopology> load_hwloc_xml(const std::string &path);
Parsed<NodeTopology> parse_hwloc_xml(std::string_view xml, std::string_view source);
// This host, through hwloc (with the NVML/CUDA/RSMI backends where hwloc has them).
Parsed<NodeTopology> discover_local_node();

// NCCL topology XML (<system><cpu><pci>...<gpu/><nic><net/></nic></pci></cpu></system>).
// GPUs are PCI devices of class 0x03xxxx, NICs of class 0x02xxxx or <nic> elements.
Parsed<NodeTopology> load_nccl_topo(const std::string &path);
Parsed<NodeTopology> parse_nccl_topo(std::string_view xml, std::string_view source);

// Either format, told apart by the root element (<topology> for hwloc, <system> for NCCL).
Parsed<NodeTopology> load_node_topology(const std::string &path);

void to_json(nlohmann::json &j, const NodeTopology &t);

}  // namespace slurm_ai
