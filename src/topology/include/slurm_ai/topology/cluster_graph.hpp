// The whole cluster as one graph: every host's GPUs and NICs (from its node topology) and
// the fabric's switches and links, with bandwidth (GB/s) and latency on every edge. Built
// once per topology change; the queries the scheduler makes are answered from tables
// precomputed at build time:
//   - bandwidth, fabric hops and latency between any two GPUs (or hosts) of the cluster;
//   - the smallest subtree of the fabric holding N of a given set of free hosts;
//   - the bottleneck of the fabric for a set of hosts.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "slurm_ai/common/input_error.hpp"
#include "slurm_ai/topology/fabric.hpp"
#include "slurm_ai/topology/node_topology.hpp"

namespace slurm_ai {

// One cable from a host to a switch: a NIC's port (several on a rail-optimized fabric).
struct HostPort {
    int leaf = -1;         // the switch, as a Fabric::nodes index
    double gbs = 0;        // the cable's rate, GB/s per direction
    int rail = -1;         // its rail (Fabric::infer_rails), or -1
    std::string device{};  // the NIC's device name where the fabric gives it
};

// How a flow between two GPUs of different hosts travels.
struct Route {
    bool nvlink = false;  // inside one multi-node NVLink domain: NVLink, no NIC or switch
    int src_port = -1;    // the port (HostPort index) that sends, on the source host
    int dst_port = -1;    // the port that receives, on the destination host
    int proxy_gpu = -1;   // PXN: the source host's GPU on the destination's rail, which the
                          // data reaches over NVLink first and whose NIC sends; -1: none
    int src_nic = -1;     // NodeTopology::nics index that sends (the proxy's NIC with PXN)
    int dst_nic = -1;     // and receives; -1 where the topology names no NIC
};

// NVLink bandwidth of a GPU towards other hosts of its domain where neither the domain nor
// the GPU says (GB200 NVL72: NVLink 5, 18 links of 50 GB/s per direction).
inline constexpr double kDefaultDomainGpuGBs = 900.0;

// Latencies used for paths (microseconds). Defaults are typical published figures; the
// placement engine's fitted constants may replace them.
struct LatencyModel {
    double nic_us = 1.0;           // one NIC crossing (send or receive side)
    double switch_us = 0.13;       // one switch traversal
    double nvlink_us = 1.0;        // GPU to GPU over NVLink or NVSwitch
    double pcie_us = 2.0;          // GPU to GPU or NIC under one PCIe switch / host bridge
    double inter_socket_us = 3.0;  // extra for crossing sockets
};

struct PathMetrics {
    double bandwidth_gbs = 0;  // bottleneck bandwidth, GB/s per direction
    int fabric_hops = 0;       // links of the fabric traversed (0 inside one host)
    double latency_us = 0;
    PathType intra = PathType::kSelf;  // inside one host: the path type; else the worse
                                       // of the two GPU-to-NIC paths
};

// A GPU of the cluster: host index and GPU index in that host's NodeTopology.
struct GpuRef {
    int host = -1;
    int gpu = -1;
};

struct Subtree {
    int switch_node = -1;  // index into Fabric::nodes of the subtree's root switch
    int level = 0;
    int free_hosts = 0;      // free hosts in the subtree
    std::vector<int> hosts;  // the n hosts chosen (host indexes), fewest leaves first
};

// The fabric cut that limits traffic among a set of hosts the most: either one host's
// link, or the uplinks of a switch's subtree.
struct Bottleneck {
    std::string where;         // "link of HOST" or "uplinks of SWITCH"
    int switch_node = -1;      // the switch whose uplinks these are, or -1 for a host link
    double bandwidth_gbs = 0;  // capacity of the cut, GB/s per direction
    int hosts_below = 0;       // hosts of the set on the inner side of the cut
    int hosts_above = 0;       // hosts of the set on the other side
    double per_host_gbs = 0;   // bandwidth_gbs / min(hosts_below, hosts_above)
};

class ClusterGraph {
  public:
    // hosts: the fabric's hosts. Each host's node topology is nodes[name] when given,
    // else default_node (when given), else a host without GPUs or NICs.
    static Parsed<ClusterGraph> build(Fabric fabric, std::map<std::string, NodeTopology> nodes = {},
                                      std::optional<NodeTopology> default_node = {},
                                      LatencyModel latency = {});

    ClusterGraph(ClusterGraph &&) noexcept;
    ClusterGraph &operator=(ClusterGraph &&) noexcept;
    ~ClusterGraph();

    const Fabric &fabric() const;
    int host_count() const;
    const std::string &host_name(int host) const;
    int host_index(std::string_view name) const;  // -1 when unknown
    int host_node(int host) const;                // index into Fabric::nodes
    const NodeTopology &node(int host) const;
    int gpu_count() const;  // over all hosts

    // Vertices and edges of the underlying Boost graph (for drawing and tests).
    std::size_t vertex_count() const;
    std::size_t edge_count() const;

    // Hosts: through the pair of their ports with the fewest switch hops. GPUs: as route()
    // sends them.
    PathMetrics host_path(int a, int b) const;
    PathMetrics gpu_path(GpuRef a, GpuRef b) const;
    PathMetrics gpu_path(GpuRef a, GpuRef b, const Route &r) const;

    // Rails and NVLink domains. A host's ports are in rail order (then device name); a GPU
    // sends through the port of the NIC it is paired with (NodeTopology::gpu_nic_pairing),
    // matched to the fabric by device name, else by order (the k-th fabric NIC on the k-th
    // port; with more NICs than ports, consecutive NICs share one); a host with one port
    // sends everything through it.
    const std::vector<HostPort> &ports(int host) const;
    int gpu_port(GpuRef g) const;  // -1 for a host without ports; port 0 for a host rank
    int gpu_rail(GpuRef g) const;  // the rail of gpu_port, or -1
    int nic_port(int host, int nic) const;
    // The NIC a GPU is paired with (NodeTopology::gpu_nic_pairing, computed once per
    // distinct topology), or -1 (no NIC, or a host rank).
    int gpu_nic(GpuRef g) const;
    // Between different hosts: inside one NVLink domain over NVLink; else from the GPU's
    // port to the destination GPU's port, except that where they sit on different leaves
    // and the source host has a port on the destination's leaf, the data first crosses
    // NVLink to a GPU on that port (NCCL's PXN), when one is NVLink-connected.
    Route route(GpuRef a, GpuRef b) const;
    // The multi-node NVLink domain of a host (Fabric::nvlink_domains index of the outermost
    // domain holding it), or -1; its hosts, in host order.
    int nvlink_domain(int host) const;
    const std::vector<int> &domain_hosts(int domain) const;
    // A GPU's NVLink bandwidth to GPUs of other hosts in its domain, GB/s per direction:
    // the domain's gpu_gbps, else the GPU's own NVLink total, else kDefaultDomainGpuGBs.
    double domain_gpu_gbs(GpuRef g) const;

    // The lowest switch whose subtree holds at least n of free_hosts; among switches of
    // one level the one with the fewest free hosts (best fit, keeping large free blocks
    // whole). Hosts are taken from as few leaves as possible. nullopt if none fits.
    std::optional<Subtree> smallest_subtree(std::span<const int> free_hosts, int n) const;

    // nullopt for fewer than two hosts.
    std::optional<Bottleneck> bottleneck(std::span<const int> hosts) const;

    // Fabric structure the placement engine walks (switches as Fabric::nodes indexes).
    int host_leaf(int host) const;             // the switch the host is cabled to, or -1
    double host_link_gbs(int host) const;      // one cable of the host, GB/s
    double uplink_gbs(int switch_node) const;  // capacity towards higher levels, GB/s
    int switch_level(int switch_node) const;
    int switch_hops(int switch_a, int switch_b) const;  // -1 when not connected
    // Leaf switches below a switch (itself, for a leaf), in fabric order.
    std::vector<int> leaves_below(int switch_node) const;
    // Hosts cabled to a leaf switch, in host order.
    const std::vector<int> &hosts_at_leaf(int switch_node) const;
    // Switches in fabric order.
    std::vector<int> switch_nodes() const;

    // Host indexes of a Slurm hostlist; an error names `field` and the first unknown host.
    Parsed<std::vector<int>> parse_hosts(std::string_view hostlist, std::string_view field) const;

    // Parses "host" or "host:gpuN" / "host:N" into a GpuRef (gpu -1 for a bare host).
    Parsed<GpuRef> parse_endpoint(std::string_view text) const;

  private:
    struct Impl;
    explicit ClusterGraph(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

}  // namespace slurm_ai
