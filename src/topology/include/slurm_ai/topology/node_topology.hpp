// One node's GPUs, NICs, NUMA nodes and cores, and how they are connected: from hwloc
// (live, or an XML export of any host) or from an NCCL topology file (NCCL_TOPO_FILE
// format). Every loader returns Parsed<NodeTopology>; none throws on bad input.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "slurm_ai/common/input_error.hpp"

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
// Whether a path between two GPUs is NVLink, direct or through NVSwitches.
inline bool over_nvlink(PathType p) {
    return p == PathType::kNVLink || p == PathType::kNVSwitch;
}

// Bandwidths used where the input gives none, in GB/s per direction.
inline constexpr double kDefaultPcieGBs = 16.0;        // PCIe 3.0 x16, roughly
inline constexpr double kInterSocketGBs = 10.0;        // what P2P across sockets achieves
inline constexpr double kDefaultNvlinkLinkGBs = 25.0;  // one NVLink 2 link

struct Gpu {
    std::string pci_busid;                // "0000:34:00.0", lowercase
    std::string model;                    // e.g. "Tesla V100-SXM3-32GB"; may be empty
    std::vector<std::string> os_devices;  // "cuda0", "nvml0", "rsmi0", ...
    int numa_node = -1;                   // OS index of the nearest NUMA node, -1 unknown
    std::vector<int> cpus;                // OS indexes of the PUs near the GPU
    std::vector<int> cores;               // the same place as core indexes, counted as Slurm
                                          // counts them (hwloc's logical order: socket by
                                          // socket); empty where the input has no cores
    double nvlink_gbs = 0;                // total NVLink bandwidth out of the GPU
};

struct Nic {
    std::string name;       // verbs device ("mlx5_0"), else net device ("ib0"), else bus id
    std::string pci_busid;  // lowercase
    std::string kind;       // "ib", "roce" (verbs on Ethernet), "efa", "ethernet" or "unknown"
    int numa_node = -1;
    double pcie_gbs = 0;  // PCIe link bandwidth, 0 when unknown

    // A NIC of the compute fabric (InfiniBand, RoCE, EFA), not a management port.
    bool fabric() const { return kind == "ib" || kind == "roce" || kind == "efa"; }
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
    int packages = 0, cores = 0, pus = 0;  // 0 where the input does not say (NCCL files
                                           // give PUs only)
    std::vector<NumaNode> numa_nodes;
    std::vector<Gpu> gpus;  // in PCI bus id order (CUDA_DEVICE_ORDER=PCI_BUS_ID)
    std::vector<Nic> nics;  // in PCI bus id order
    int nvswitches = 0;

    // gpus.size() x gpus.size(), row-major: peer-to-peer bandwidth (GB/s, one direction)
    // and path type between two GPUs. NVLink bandwidth comes from hwloc's NVLinkBandwidth
    // distances (the sum of direct links; through NVSwitches, the smaller of the two
    // GPUs' total bandwidth into the switch fabric, which is taken as non-blocking);
    // otherwise the PCIe path's slowest link, capped by kInterSocketGBs across sockets.
    // The diagonal is kSelf with bandwidth 0: a GPU is no peer of itself.
    std::vector<double> gpu_bandwidth;
    std::vector<PathType> gpu_path;
    // gpus.size() x nics.size(), row-major: path type and PCIe bandwidth GPU -> NIC.
    std::vector<PathType> gpu_nic_path;
    std::vector<double> gpu_nic_bandwidth;

    double bandwidth(int a, int b) const { return gpu_bandwidth[a * gpus.size() + b]; }
    PathType path(int a, int b) const { return gpu_path[a * gpus.size() + b]; }
    PathType nic_path(int g, int n) const { return gpu_nic_path[g * nics.size() + n]; }

    // The NIC each GPU should use (index into nics, -1 without NICs): among the fabric
    // NICs (all NICs where the host has none), the nearest by path type; among equally
    // near ones, the one fewest lower-numbered GPUs already use, then the lowest index, so
    // that two GPUs and two NICs under one PCIe switch get one each. A management Ethernet
    // port beside the GPU never wins over an InfiniBand NIC across the sockets.
    std::vector<int> gpu_nic_pairing() const;
};

// hwloc XML (v1, v2 or v3 format), through libhwloc with I/O discovery of PCI and OS
// devices. hwloc 3's v3 files, which libhwloc 2 refuses, are translated to v2 first. The
// attributes libhwloc would ignore or trust when malformed (bus ids, PCI types and link
// speeds, bitmaps, os_index, set pairs, OS device and bridge types) are checked, and
// errors name them with their line; what libhwloc still refuses is an error on field
// "topology". GPU models come from the OS devices' GPUModel, else the PCI device name.
Parsed<NodeTopology> load_hwloc_xml(const std::string &path);
Parsed<NodeTopology> parse_hwloc_xml(std::string_view xml, std::string_view source);
// This host, through hwloc (with the NVML/CUDA/RSMI backends where hwloc has them): the
// whole node, including CPUs and NUMA nodes the calling process may not use.
Parsed<NodeTopology> discover_local_node();

// NCCL topology XML (<system><cpu><pci>...<gpu/><nic><net/></nic></pci></cpu></system>).
// GPUs are PCI devices of class 0x03xxxx, NICs of class 0x02xxxx or <nic> elements.
// Link speeds ("16 GT/s", "32.0 GT/s PCIe") times link_width give GB/s per direction at
// 0.25/0.5/0.985/1.969/3.938/7.563 GB/s per lane for 2.5/5/8/16/32/64 GT/s. <nvlink
// count> links are worth 20 GB/s (sm 6x), 25 GB/s (sm 7x-9x), 50 GB/s (sm 10x and up) or
// kDefaultNvlinkLinkGBs without sm. These files give no model, OS devices, hostname,
// packages, cores or memory; NUMA nodes and PUs come from <cpu numaid affinity>.
Parsed<NodeTopology> load_nccl_topo(const std::string &path);
Parsed<NodeTopology> parse_nccl_topo(std::string_view xml, std::string_view source);

// Either format, told apart by the root element (<topology> for hwloc, <system> for NCCL).
Parsed<NodeTopology> load_node_topology(const std::string &path);

// The topology as an NCCL topology file (for NCCL_TOPO_FILE). PIX and PXB both come out as
// one PCIe switch; NUMA nodes, NVLink/NVSwitch links and GPU-NIC closeness are kept.
std::string write_nccl_topo(const NodeTopology &t);

void to_json(nlohmann::json &j, const NodeTopology &t);

// A PCI bus id "domain:bus:device.function" (hex; domain of 1 to 8 digits, device up to
// 1f, function up to 7), normalized to lowercase with the domain's value in at least 4
// digits, as hwloc and Linux write it: "00000000:3B:00.0" (nvidia-smi) is "0000:3b:00.0".
// Errors name `field`.
Parsed<std::string> parse_pci_busid(std::string_view text, std::string_view field = "busid");

// CPU ids in the Linux/Slurm cpu list form: sorted, runs joined, "0-23,48-71".
std::string to_cpu_list(std::vector<int> cpus);

}  // namespace slurm_ai
