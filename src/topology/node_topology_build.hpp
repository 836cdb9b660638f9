// Private to the topology library: what the hwloc and NCCL loaders share once each has
// read its input. Both reduce the node's I/O to one tree (IoNode) and its NVLink to a few
// figures (NvlinkFigures); path types and bandwidths are then derived here, once, so that
// the two formats classify the same machine the same way.
#pragma once

#include <cstddef>
#include <functional>
#include <string_view>
#include <vector>

#include "slurm_ai/topology/node_topology.hpp"

namespace slurm_ai::detail {

// A node with more GPUs or NICs than this is no node but a malformed (or hostile) file:
// the path matrices grow with their squares.
inline constexpr std::size_t kMaxGpus = 1024, kMaxNics = 1024;

// One vertex of a node's I/O tree. Parents come before their children in the vector.
struct IoNode {
    enum class Kind {
        kHost,        // CPU side (machine, package, NUMA node, NCCL <cpu>): not PCIe
        kHostBridge,  // PCIe root complex
        kBridge,      // PCIe bridge or switch port (an NCCL <pci> switch element)
        kDevice,      // PCIe endpoint (GPU, NIC, NVSwitch, ...)
    };
    Kind kind = Kind::kHost;
    int parent = -1;
    double link_gbs = 0;  // PCIe link to the parent, GB/s per direction; 0 when unknown
    int numa_nodes = 1;   // kHost: NUMA nodes it spans (more than one: crossing sockets)
};

struct PcieRoute {
    PathType type = PathType::kSelf;
    double gbs = 0;
};

// Path type and bottleneck bandwidth between two devices of the tree. The lowest common
// vertex decides the type: a bridge gives PIX when neither device is more than
// `switch_levels` bridges below it (one PCIe switch), else PXB; a host bridge gives PHB;
// a host vertex PHB when it spans one NUMA node, else SYS. Bandwidth is the slowest known
// link on the path (kDefaultPcieGBs when none is known), capped by kInterSocketGBs for SYS.
PcieRoute pcie_route(const std::vector<IoNode> &tree, int a, int b, int switch_levels);

// NVLink between the GPUs of a node, GB/s per direction, in the loaders' GPU order.
struct NvlinkFigures {
    std::vector<double> direct;  // gpus x gpus, row-major: sum of direct links a -> b
    std::vector<double> fabric;  // per GPU: its links into NVSwitches
};

// Fills gpu_bandwidth, gpu_path, gpu_nic_path and gpu_nic_bandwidth of t. A direct NVLink
// gives NVL (direct bandwidth, plus the fabric share when both GPUs also reach the
// NVSwitches); both GPUs on NVSwitches give NVS with the smaller fabric bandwidth (the
// switches are taken as one non-blocking fabric); anything else is the PCIe route.
// The diagonal is kSelf with bandwidth 0.
void fill_link_matrices(NodeTopology &t, const NvlinkFigures &nvlink,
                        const std::function<PcieRoute(int gpu_a, int gpu_b)> &gpu_gpu,
                        const std::function<PcieRoute(int gpu, int nic)> &gpu_nic);

// Order of normalized bus ids (parse_pci_busid's form); empty ids sort last.
bool busid_less(std::string_view a, std::string_view b);

}  // namespace slurm_ai::detail
