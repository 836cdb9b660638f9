// Internal to the topology library: ClusterGraph's tables (cluster_graph.cpp builds them
// and answers the fabric's queries, cluster_routes.cpp the ports, rails, NVLink domains
// and routes of GPUs).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <boost/graph/adjacency_list.hpp>

#include "slurm_ai/topology/cluster_graph.hpp"

namespace slurm_ai::detail {

enum class VertexKind { kSwitch, kHost, kGpu, kNvSwitch };
struct VertexProps {
    VertexKind kind = VertexKind::kSwitch;
    int index = -1;  // fabric node index (switch, host) or GPU index within its host
    int host = -1;   // owning host for GPUs and NVSwitch domains
};

struct EdgeProps {
    double bandwidth_gbs = 0;  // all cables of the edge together
    double cable_gbs = 0;      // one cable: what a single flow can get
    double latency_us = 0;
    int cables = 1;
};

using Graph =
    boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, VertexProps, EdgeProps>;
using SwitchGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS,
                                          boost::no_property, EdgeProps>;

inline constexpr double kGbitToGB = 1.0 / 8.0;

inline double intra_latency(const LatencyModel &lat, PathType p) {
    switch (p) {
        case PathType::kSelf:
            return 0;
        case PathType::kNVLink:
        case PathType::kNVSwitch:
            return lat.nvlink_us;
        case PathType::kPCIeSwitch:
        case PathType::kPCIeBridges:
        case PathType::kHostBridge:
            return lat.pcie_us;
        case PathType::kInterSocket:
            return lat.pcie_us + lat.inter_socket_us;
    }
    return lat.pcie_us;
}

}  // namespace slurm_ai::detail

namespace slurm_ai {

using detail::EdgeProps;
using detail::Graph;
using detail::intra_latency;
using detail::kGbitToGB;
using detail::SwitchGraph;
using detail::VertexKind;
using detail::VertexProps;

struct ClusterGraph::Impl {
    Fabric fabric;
    LatencyModel latency;
    std::vector<int> host_nodes;  // host -> fabric node
    std::unordered_map<std::string, int> host_by_name;
    std::vector<const NodeTopology *> host_topology;  // host -> topology (owned below)
    std::vector<std::unique_ptr<NodeTopology>> topologies;
    // Each topology's GPU-NIC pairing, computed once; read by host through host_gpu_nic.
    std::unordered_map<const NodeTopology *, std::vector<int>> nic_of_gpu;
    std::vector<const std::vector<int> *> host_gpu_nic;  // host -> its topology's pairing
    int gpus = 0;

    // Switch tables, indexed by switch number s (0..S-1).
    std::vector<int> switch_nodes;    // s -> fabric node
    std::vector<int> switch_of_node;  // fabric node -> s, or -1
    std::vector<int> switch_level;
    std::vector<std::uint16_t> hops;              // S x S, UINT16_MAX when unreachable
    std::vector<float> widest;                    // S x S, GB/s of one flow along a shortest path
    std::vector<double> uplink_gbs;               // s -> capacity towards higher levels
    std::vector<std::vector<int>> leaves_below;   // s -> leaf switches in its subtree
    std::vector<std::vector<int>> hosts_at_leaf;  // s -> hosts attached (leaf switches)

    // Host attachment.
    std::vector<int> host_switch;                // host -> s of its first port, or -1
    std::vector<double> host_link_gbs;           // host -> one cable, GB/s
    std::vector<std::vector<HostPort>> ports;    // host -> its cables to switches
    std::vector<std::vector<int>> nic_port;      // host -> per NodeTopology NIC: port, or -1
    std::vector<std::vector<int>> gpu_port;      // host -> per GPU: port, or -1
    std::vector<int> domain_of;                  // host -> outermost NVLink domain, or -1
    std::vector<std::vector<int>> domain_hosts;  // per Fabric::nvlink_domains entry

    Graph graph;

    std::size_t S() const { return switch_nodes.size(); }

    // Between two switches with a cable of each end's rate at the ends.
    PathMetrics leaf_path(int sa, int sb, double gbs_a, double gbs_b) const {
        PathMetrics m;
        if (sa < 0 || sb < 0 || hops[sa * S() + sb] == UINT16_MAX) {
            m.fabric_hops = -1;  // not connected
            return m;
        }
        int d = hops[sa * S() + sb];
        m.fabric_hops = d + 2;
        m.bandwidth_gbs = std::min({gbs_a, gbs_b, static_cast<double>(widest[sa * S() + sb])});
        m.latency_us = 2 * latency.nic_us + (d + 1) * latency.switch_us;
        return m;
    }

    // Every host's ports (its cables to switches, in rail order), the NIC and GPU each
    // port serves, hosts_at_leaf (a host under the leaf of its first port) and the
    // NVLink domains (cluster_routes.cpp).
    void attach_ports();
    // Each host's GPUs as vertices: an edge to the host (its PCIe path to the NIC), direct
    // NVLink pairs, and an NVSwitch vertex where they share switches (cluster_graph.cpp).
    void add_gpus(const std::vector<int> &node_vertex);
    // hops and widest between every pair of switches of `sg` (cluster_graph.cpp).
    void switch_paths(const SwitchGraph &sg);
    // leaves_below of every switch, from the neighbours of lower level (cluster_graph.cpp).
    void find_leaves_below(const std::vector<std::vector<int>> &lower);

    int port_switch(int host, int port) const {
        return port < 0 ? -1 : switch_of_node[ports[host][port].leaf];
    }

    PathMetrics host_path(int a, int b) const {
        PathMetrics m;
        if (a == b) {
            m.bandwidth_gbs = host_link_gbs[a];
            return m;
        }
        if (ports[a].empty() || ports[b].empty()) {
            m.fabric_hops = -1;
            return m;
        }
        // The pair of ports with the fewest hops (one rail), the first such pair on a tie.
        int best_a = 0, best_b = 0, best_hops = std::numeric_limits<int>::max();
        for (std::size_t i = 0; i < ports[a].size(); ++i)
            for (std::size_t j = 0; j < ports[b].size(); ++j) {
                int h = hops[port_switch(a, static_cast<int>(i)) * S() +
                             port_switch(b, static_cast<int>(j))];
                if (h < best_hops) {
                    best_hops = h;
                    best_a = static_cast<int>(i);
                    best_b = static_cast<int>(j);
                }
            }
        return leaf_path(port_switch(a, best_a), port_switch(b, best_b), host_link_gbs[a],
                         host_link_gbs[b]);
    }
};

}  // namespace slurm_ai
