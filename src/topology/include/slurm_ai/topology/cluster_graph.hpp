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

    PathMetrics host_path(int a, int b) const;
    PathMetrics gpu_path(GpuRef a, GpuRef b) const;

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
