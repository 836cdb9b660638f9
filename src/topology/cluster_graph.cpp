#include "slurm_ai/topology/cluster_graph.hpp"

#include "slurm_ai/common/hostlist.hpp"
#include "slurm_ai/common/text_scan.hpp"

#include <algorithm>
#include <charconv>
#include <limits>
#include <numeric>
#include <unordered_map>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/breadth_first_search.hpp>

namespace slurm_ai {
namespace {

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

constexpr double kGbitToGB = 1.0 / 8.0;

double intra_latency(const LatencyModel &lat, PathType p) {
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

}  // namespace

struct ClusterGraph::Impl {
    Fabric fabric;
    LatencyModel latency;
    std::vector<int> host_nodes;  // host -> fabric node
    std::unordered_map<std::string, int> host_by_name;
    std::vector<const NodeTopology *> host_topology;  // host -> topology (owned below)
    std::vector<std::unique_ptr<NodeTopology>> topologies;
    std::vector<std::vector<int>> pairing;  // per distinct topology, by pointer
    std::unordered_map<const NodeTopology *, std::vector<int>> nic_of_gpu;
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
    // NVLink domains.
    void attach_ports() {
        const std::size_t H = host_nodes.size();
        ports.assign(H, {});
        for (const auto &l : fabric.links) {
            if (l.a < 0 || l.b < 0)
                continue;
            bool sw_a = fabric.nodes[l.a].is_switch, sw_b = fabric.nodes[l.b].is_switch;
            if (sw_a == sw_b)
                continue;
            int h = host_by_name.at(fabric.nodes[sw_a ? l.b : l.a].name);
            ports[h].push_back({sw_a ? l.a : l.b, l.rate.gbps * kGbitToGB, l.rail, l.device});
        }
        for (std::size_t h = 0; h < H; ++h) {
            auto &p = ports[h];
            std::stable_sort(p.begin(), p.end(), [](const HostPort &x, const HostPort &y) {
                if ((x.rail < 0) != (y.rail < 0))
                    return y.rail < 0;
                if (x.rail != y.rail)
                    return x.rail < y.rail;
                if (text::natural_less(x.device, y.device) !=
                    text::natural_less(y.device, x.device))
                    return text::natural_less(x.device, y.device);
                return x.leaf < y.leaf;
            });
            if (!p.empty()) {
                host_switch[h] = switch_of_node[p.front().leaf];
                hosts_at_leaf[host_switch[h]].push_back(static_cast<int>(h));
            }
        }
        nic_port.assign(H, {});
        gpu_port.assign(H, {});
        for (std::size_t h = 0; h < H; ++h) {
            const NodeTopology &t = *host_topology[h];
            const auto &p = ports[h];
            auto &np = nic_port[h];
            np.assign(t.nics.size(), p.empty() ? -1 : 0);
            if (p.size() > 1) {
                // By device name, then the unnamed ports to the fabric NICs left, in order.
                std::fill(np.begin(), np.end(), -1);
                std::vector<bool> taken(p.size(), false);
                for (std::size_t n = 0; n < t.nics.size(); ++n)
                    for (std::size_t k = 0; k < p.size(); ++k)
                        if (!taken[k] && !p[k].device.empty() && p[k].device == t.nics[n].name) {
                            np[n] = static_cast<int>(k);
                            taken[k] = true;
                            break;
                        }
                bool any_fabric = std::any_of(t.nics.begin(), t.nics.end(),
                                              [](const Nic &n) { return n.fabric(); });
                std::vector<int> nics_left, ports_left;
                for (std::size_t n = 0; n < t.nics.size(); ++n)
                    if (np[n] < 0 && (!any_fabric || t.nics[n].fabric()))
                        nics_left.push_back(static_cast<int>(n));
                for (std::size_t k = 0; k < p.size(); ++k)
                    if (!taken[k])
                        ports_left.push_back(static_cast<int>(k));
                // More NICs than ports (AWS p5: 32 EFA NICs, 4 per GPU): consecutive NICs
                // share a port, as NIC groups share a rail.
                const std::size_t m = nics_left.size(), r = ports_left.size();
                for (std::size_t k = 0; k < m && r > 0; ++k)
                    np[nics_left[k]] = ports_left[m <= r ? k : k * r / m];
            }
            const auto &pair = nic_of_gpu.at(&t);
            gpu_port[h].assign(t.gpus.size(), p.empty() ? -1 : 0);
            for (std::size_t i = 0; i < t.gpus.size(); ++i)
                if (pair[i] >= 0 && np[pair[i]] >= 0)
                    gpu_port[h][i] = np[pair[i]];
        }
        // Domains: each host in the outermost one that holds it.
        domain_of.assign(H, -1);
        domain_hosts.assign(fabric.nvlink_domains.size(), {});
        for (int pass = 0; pass < 2; ++pass)
            for (std::size_t d = 0; d < fabric.nvlink_domains.size(); ++d) {
                const auto &dom = fabric.nvlink_domains[d];
                if (dom.parent.empty() != (pass == 0))
                    continue;
                for (int node : dom.hosts) {
                    int h = host_by_name.at(fabric.nodes[node].name);
                    if (domain_of[h] < 0)
                        domain_of[h] = static_cast<int>(d);
                }
            }
        for (std::size_t h = 0; h < H; ++h)
            if (domain_of[h] >= 0)
                domain_hosts[domain_of[h]].push_back(static_cast<int>(h));
    }

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

ClusterGraph::ClusterGraph(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ClusterGraph::ClusterGraph(ClusterGraph &&) noexcept = default;
ClusterGraph &ClusterGraph::operator=(ClusterGraph &&) noexcept = default;
ClusterGraph::~ClusterGraph() = default;

Parsed<ClusterGraph> ClusterGraph::build(Fabric fabric, std::map<std::string, NodeTopology> nodes,
                                         std::optional<NodeTopology> default_node,
                                         LatencyModel latency) {
    auto impl = std::make_unique<Impl>();
    Impl &g = *impl;
    g.latency = latency;
    fabric.index_links();
    fabric.infer_levels();
    fabric.infer_rails();
    g.fabric = std::move(fabric);
    const Fabric &f = g.fabric;

    for (const auto &[name, topo] : nodes)
        if (f.find(name) < 0)
            return InputError{"node topology", name, "a host of the fabric (" + f.source + ")",
                              topo.source, 0};

    // Switch numbering and hosts.
    g.switch_of_node.assign(f.nodes.size(), -1);
    for (int n : f.switches()) {
        g.switch_of_node[n] = static_cast<int>(g.switch_nodes.size());
        g.switch_nodes.push_back(n);
        g.switch_level.push_back(f.nodes[n].level);
    }
    g.host_nodes = f.hosts();
    const std::size_t S = g.S(), H = g.host_nodes.size();

    auto shared_default = std::make_unique<NodeTopology>(default_node.value_or(NodeTopology{}));
    const NodeTopology *dflt = shared_default.get();
    g.topologies.push_back(std::move(shared_default));
    g.host_topology.assign(H, dflt);
    g.host_switch.assign(H, -1);
    g.host_link_gbs.assign(H, 0);
    for (std::size_t h = 0; h < H; ++h) {
        const auto &name = f.nodes[g.host_nodes[h]].name;
        g.host_by_name.emplace(name, static_cast<int>(h));
        if (auto it = nodes.find(name); it != nodes.end()) {
            g.topologies.push_back(std::make_unique<NodeTopology>(std::move(it->second)));
            g.host_topology[h] = g.topologies.back().get();
        }
        g.gpus += static_cast<int>(g.host_topology[h]->gpus.size());
    }
    for (const auto &t : g.topologies)
        g.nic_of_gpu.emplace(t.get(), t->gpu_nic_pairing());

    // Vertices: switches, then hosts, then each host's GPUs (and NVSwitch domain).
    for (std::size_t s = 0; s < S; ++s)
        boost::add_vertex(VertexProps{VertexKind::kSwitch, g.switch_nodes[s], -1}, g.graph);
    std::vector<int> node_vertex(f.nodes.size(), -1);
    for (std::size_t s = 0; s < S; ++s)
        node_vertex[g.switch_nodes[s]] = static_cast<int>(s);
    for (std::size_t h = 0; h < H; ++h)
        node_vertex[g.host_nodes[h]] = static_cast<int>(boost::add_vertex(
            VertexProps{VertexKind::kHost, g.host_nodes[h], static_cast<int>(h)}, g.graph));

    // Fabric edges; parallel cables between two nodes form one edge (a trunk).
    std::map<std::pair<int, int>, EdgeProps> trunks;
    for (const auto &l : f.links) {
        if (l.a < 0 || l.b < 0 || l.a == l.b)
            continue;
        auto key = std::minmax(l.a, l.b);
        double gbs = l.rate.gbps * kGbitToGB;
        auto [it, fresh] = trunks.try_emplace({key.first, key.second});
        auto &e = it->second;
        e.bandwidth_gbs += gbs;
        e.cable_gbs = std::max(e.cable_gbs, gbs);
        e.cables = fresh ? 1 : e.cables + 1;
    }
    SwitchGraph sg(S);
    g.uplink_gbs.assign(S, 0);
    std::vector<std::vector<int>> lower(S);  // s -> neighbouring switches of lower level
    g.hosts_at_leaf.assign(S, {});
    for (auto &[key, e] : trunks) {
        auto [a, b] = key;
        bool sw_a = f.nodes[a].is_switch, sw_b = f.nodes[b].is_switch;
        e.latency_us = sw_a && sw_b ? latency.switch_us : latency.nic_us;
        boost::add_edge(node_vertex[a], node_vertex[b], e, g.graph);
        if (sw_a && sw_b) {
            int sa = g.switch_of_node[a], sb = g.switch_of_node[b];
            boost::add_edge(sa, sb, e, sg);
            int la = g.switch_level[sa], lb = g.switch_level[sb];
            if (la < lb) {
                g.uplink_gbs[sa] += e.bandwidth_gbs;
                lower[sb].push_back(sa);
            } else if (lb < la) {
                g.uplink_gbs[sb] += e.bandwidth_gbs;
                lower[sa].push_back(sb);
            }
        } else if (sw_a != sw_b) {
            int h = g.host_by_name.at(f.nodes[sw_a ? b : a].name);
            // Its fastest cable is what one flow of the host gets.
            g.host_link_gbs[h] = std::max(g.host_link_gbs[h], e.cable_gbs);
        }
    }
    g.attach_ports();

    // GPUs inside each host: an edge to the host (its PCIe path to the NIC), direct
    // NVLink pairs, and one NVSwitch vertex per host whose GPUs share switches.
    for (std::size_t h = 0; h < H; ++h) {
        const NodeTopology &t = *g.host_topology[h];
        const auto &nic = g.nic_of_gpu.at(&t);
        std::vector<int> gv;
        int nvs = -1;
        if (t.nvswitches > 0 && !t.gpus.empty())
            nvs = static_cast<int>(boost::add_vertex(
                VertexProps{VertexKind::kNvSwitch, -1, static_cast<int>(h)}, g.graph));
        for (std::size_t i = 0; i < t.gpus.size(); ++i) {
            int v = static_cast<int>(boost::add_vertex(
                VertexProps{VertexKind::kGpu, static_cast<int>(i), static_cast<int>(h)}, g.graph));
            gv.push_back(v);
            double pcie =
                nic[i] >= 0 ? t.gpu_nic_bandwidth[i * t.nics.size() + nic[i]] : kDefaultPcieGBs;
            EdgeProps e{pcie, pcie, latency.pcie_us, 1};
            boost::add_edge(v, node_vertex[g.host_nodes[h]], e, g.graph);
            if (nvs >= 0 && t.gpus[i].nvlink_gbs > 0) {
                double bw = t.gpus[i].nvlink_gbs;
                boost::add_edge(v, nvs, EdgeProps{bw, bw, latency.nvlink_us, 1}, g.graph);
            }
        }
        for (std::size_t i = 0; i < t.gpus.size(); ++i)
            for (std::size_t j = i + 1; j < t.gpus.size(); ++j)
                if (t.path(static_cast<int>(i), static_cast<int>(j)) == PathType::kNVLink) {
                    double bw = t.bandwidth(static_cast<int>(i), static_cast<int>(j));
                    boost::add_edge(gv[i], gv[j], EdgeProps{bw, bw, latency.nvlink_us, 1}, g.graph);
                }
    }

    // Hops and the widest shortest path between every pair of switches: a BFS from each
    // switch, then one pass in BFS order. A single flow follows one shortest path (ECMP),
    // so it gets the best bottleneck among them, one cable wide.
    g.hops.assign(S * S, UINT16_MAX);
    g.widest.assign(S * S, 0.0f);
    std::vector<std::size_t> order;
    order.reserve(S);
    for (std::size_t s = 0; s < S; ++s) {
        order.clear();
        std::uint16_t *dist = &g.hops[s * S];
        float *wide = &g.widest[s * S];
        dist[s] = 0;
        wide[s] = std::numeric_limits<float>::max();
        auto vis = boost::make_bfs_visitor(std::make_pair(
            boost::record_distances(
                boost::make_iterator_property_map(dist, boost::get(boost::vertex_index, sg)),
                boost::on_tree_edge()),
            boost::write_property(boost::typed_identity_property_map<std::size_t>(),
                                  std::back_inserter(order), boost::on_discover_vertex())));
        boost::breadth_first_search(sg, s, boost::visitor(vis));
        for (std::size_t v : order) {
            if (v == s)
                continue;
            float best = 0;
            for (auto [e, end] = boost::out_edges(v, sg); e != end; ++e) {
                std::size_t u = boost::target(*e, sg);
                if (dist[u] + 1 == dist[v])
                    best = std::max(best, std::min(wide[u], static_cast<float>(sg[*e].cable_gbs)));
            }
            wide[v] = best;
        }
    }

    // The leaves below each switch, following strictly decreasing levels.
    g.leaves_below.assign(S, {});
    std::vector<std::size_t> by_level(S);
    std::iota(by_level.begin(), by_level.end(), 0);
    std::sort(by_level.begin(), by_level.end(),
              [&](auto a, auto b) { return g.switch_level[a] < g.switch_level[b]; });
    for (std::size_t s : by_level) {
        auto &leaves = g.leaves_below[s];
        if (!g.hosts_at_leaf[s].empty())
            leaves.push_back(static_cast<int>(s));
        for (int c : lower[s])
            leaves.insert(leaves.end(), g.leaves_below[c].begin(), g.leaves_below[c].end());
        std::sort(leaves.begin(), leaves.end());
        leaves.erase(std::unique(leaves.begin(), leaves.end()), leaves.end());
    }
    return ClusterGraph(std::move(impl));
}

const Fabric &ClusterGraph::fabric() const {
    return impl_->fabric;
}
int ClusterGraph::host_count() const {
    return static_cast<int>(impl_->host_nodes.size());
}
const std::string &ClusterGraph::host_name(int host) const {
    return impl_->fabric.nodes[impl_->host_nodes[host]].name;
}
int ClusterGraph::host_index(std::string_view name) const {
    auto it = impl_->host_by_name.find(std::string(name));
    return it == impl_->host_by_name.end() ? -1 : it->second;
}
int ClusterGraph::host_node(int host) const {
    return impl_->host_nodes[host];
}
const NodeTopology &ClusterGraph::node(int host) const {
    return *impl_->host_topology[host];
}
int ClusterGraph::gpu_count() const {
    return impl_->gpus;
}
std::size_t ClusterGraph::vertex_count() const {
    return boost::num_vertices(impl_->graph);
}
std::size_t ClusterGraph::edge_count() const {
    return boost::num_edges(impl_->graph);
}

PathMetrics ClusterGraph::host_path(int a, int b) const {
    return impl_->host_path(a, b);
}

PathMetrics ClusterGraph::gpu_path(GpuRef a, GpuRef b) const {
    if (a.gpu < 0 || b.gpu < 0)
        return impl_->host_path(a.host, b.host);
    return gpu_path(a, b, a.host == b.host ? Route{} : route(a, b));
}

PathMetrics ClusterGraph::gpu_path(GpuRef a, GpuRef b, const Route &r) const {
    const Impl &g = *impl_;
    if (a.gpu < 0 || b.gpu < 0)
        return g.host_path(a.host, b.host);
    const NodeTopology &ta = *g.host_topology[a.host];
    PathMetrics m;
    if (a.host == b.host) {
        m.intra = ta.path(a.gpu, b.gpu);
        m.bandwidth_gbs = ta.bandwidth(a.gpu, b.gpu);
        m.latency_us = intra_latency(g.latency, m.intra);
        return m;
    }
    if (r.nvlink) {
        m.intra = PathType::kNVSwitch;
        m.bandwidth_gbs = std::min(domain_gpu_gbs(a), domain_gpu_gbs(b));
        m.latency_us = g.latency.nvlink_us + g.latency.switch_us;
        return m;
    }
    const NodeTopology &tb = *g.host_topology[b.host];
    auto gbs = [&](int host, int port) {
        return port < 0 ? g.host_link_gbs[host] : g.ports[host][port].gbs;
    };
    m = g.leaf_path(g.port_switch(a.host, r.src_port), g.port_switch(b.host, r.dst_port),
                    gbs(a.host, r.src_port), gbs(b.host, r.dst_port));
    auto to_nic = [&](const NodeTopology &t, int gpu, int nic) {
        if (nic < 0)
            return std::make_pair(kDefaultPcieGBs, PathType::kHostBridge);
        return std::make_pair(t.gpu_nic_bandwidth[gpu * t.nics.size() + nic], t.nic_path(gpu, nic));
    };
    int sender = r.proxy_gpu >= 0 ? r.proxy_gpu : a.gpu;
    auto [bw_a, path_a] = to_nic(ta, sender, r.src_nic);
    auto [bw_b, path_b] = to_nic(tb, b.gpu, r.dst_nic);
    m.intra = std::max(path_a, path_b);
    m.bandwidth_gbs = std::min({m.bandwidth_gbs, bw_a, bw_b});
    m.latency_us += intra_latency(g.latency, path_a) + intra_latency(g.latency, path_b);
    if (r.proxy_gpu >= 0) {  // the NVLink hop to the proxy first
        PathType hop = ta.path(a.gpu, r.proxy_gpu);
        m.intra = std::max(m.intra, hop);
        m.bandwidth_gbs = std::min(m.bandwidth_gbs, ta.bandwidth(a.gpu, r.proxy_gpu));
        m.latency_us += intra_latency(g.latency, hop);
    }
    return m;
}

const std::vector<HostPort> &ClusterGraph::ports(int host) const {
    return impl_->ports[host];
}
int ClusterGraph::gpu_port(GpuRef g) const {
    const Impl &i = *impl_;
    if (i.ports[g.host].empty())
        return -1;
    return g.gpu < 0 ? 0 : i.gpu_port[g.host][g.gpu];
}
int ClusterGraph::gpu_rail(GpuRef g) const {
    int p = gpu_port(g);
    return p < 0 ? -1 : impl_->ports[g.host][p].rail;
}
int ClusterGraph::nic_port(int host, int nic) const {
    return nic < 0 ? -1 : impl_->nic_port[host][nic];
}
int ClusterGraph::nvlink_domain(int host) const {
    return impl_->domain_of[host];
}
const std::vector<int> &ClusterGraph::domain_hosts(int domain) const {
    return impl_->domain_hosts[domain];
}
double ClusterGraph::domain_gpu_gbs(GpuRef g) const {
    const Impl &i = *impl_;
    int d = i.domain_of[g.host];
    if (d >= 0 && i.fabric.nvlink_domains[d].gpu_gbps > 0)
        return i.fabric.nvlink_domains[d].gpu_gbps * kGbitToGB;
    const NodeTopology &t = *i.host_topology[g.host];
    if (g.gpu >= 0 && t.gpus[g.gpu].nvlink_gbs > 0)
        return t.gpus[g.gpu].nvlink_gbs;
    return kDefaultDomainGpuGBs;
}

Route ClusterGraph::route(GpuRef a, GpuRef b) const {
    const Impl &g = *impl_;
    Route r;
    if (a.host == b.host)
        return r;
    if (a.gpu >= 0 && b.gpu >= 0 && g.domain_of[a.host] >= 0 &&
        g.domain_of[a.host] == g.domain_of[b.host]) {
        r.nvlink = true;
        return r;
    }
    auto nic = [&](GpuRef x) {
        return x.gpu < 0 ? -1 : g.nic_of_gpu.at(g.host_topology[x.host])[x.gpu];
    };
    r.src_port = gpu_port(a);
    r.dst_port = gpu_port(b);
    r.src_nic = nic(a);
    r.dst_nic = nic(b);
    if (r.src_port < 0 || r.dst_port < 0)
        return r;
    const auto &pa = g.ports[a.host];
    const int dst_leaf = g.ports[b.host][r.dst_port].leaf;
    if (pa[r.src_port].leaf == dst_leaf)
        return r;
    int q = -1;
    for (std::size_t k = 0; k < pa.size() && q < 0; ++k)
        if (pa[k].leaf == dst_leaf)
            q = static_cast<int>(k);
    if (q < 0)
        return r;
    if (a.gpu < 0) {  // a host's own traffic may leave by any of its ports
        r.src_port = q;
        return r;
    }
    // PXN: the best NVLink-connected GPU on port q.
    const NodeTopology &t = *g.host_topology[a.host];
    double best = 0;
    for (std::size_t i = 0; i < t.gpus.size(); ++i) {
        int gi = static_cast<int>(i);
        PathType p = t.path(a.gpu, gi);
        if (g.gpu_port[a.host][i] != q || (p != PathType::kNVLink && p != PathType::kNVSwitch))
            continue;
        if (t.bandwidth(a.gpu, gi) > best) {
            best = t.bandwidth(a.gpu, gi);
            r.proxy_gpu = gi;
        }
    }
    if (r.proxy_gpu >= 0) {
        r.src_port = q;
        r.src_nic = nic({a.host, r.proxy_gpu});
    }
    return r;
}

std::optional<Subtree> ClusterGraph::smallest_subtree(std::span<const int> free_hosts,
                                                      int n) const {
    const Impl &g = *impl_;
    if (n <= 0)
        return std::nullopt;
    const std::size_t S = g.S();
    std::vector<std::vector<int>> free_at(S);  // leaf -> its free hosts
    for (int h : free_hosts)
        if (h >= 0 && h < host_count() && g.host_switch[h] >= 0)
            free_at[g.host_switch[h]].push_back(h);
    int best = -1, best_count = 0;
    for (std::size_t s = 0; s < S; ++s) {
        int count = 0;
        for (int leaf : g.leaves_below[s])
            count += static_cast<int>(free_at[leaf].size());
        if (count < n)
            continue;
        if (best < 0 || g.switch_level[s] < g.switch_level[best] ||
            (g.switch_level[s] == g.switch_level[best] && count < best_count)) {
            best = static_cast<int>(s);
            best_count = count;
        }
    }
    if (best < 0)
        return std::nullopt;

    Subtree out{g.switch_nodes[best], g.switch_level[best], best_count, {}};
    std::vector<int> leaves;
    for (int leaf : g.leaves_below[best])
        if (!free_at[leaf].empty())
            leaves.push_back(leaf);
    int remaining = n;
    while (remaining > 0) {
        // Best fit: the smallest leaf that takes all that remains; else the largest leaf.
        int pick = -1;
        for (int leaf : leaves) {
            int c = static_cast<int>(free_at[leaf].size());
            if (c >= remaining && (pick < 0 || c < static_cast<int>(free_at[pick].size())))
                pick = leaf;
        }
        if (pick < 0)
            pick = *std::max_element(leaves.begin(), leaves.end(), [&](int a, int b) {
                return free_at[a].size() < free_at[b].size();
            });
        auto &hosts = free_at[pick];
        std::sort(hosts.begin(), hosts.end());
        int take = std::min(remaining, static_cast<int>(hosts.size()));
        out.hosts.insert(out.hosts.end(), hosts.begin(), hosts.begin() + take);
        remaining -= take;
        leaves.erase(std::find(leaves.begin(), leaves.end(), pick));
    }
    return out;
}

std::optional<Bottleneck> ClusterGraph::bottleneck(std::span<const int> hosts) const {
    const Impl &g = *impl_;
    const int n = static_cast<int>(hosts.size());
    if (n < 2)
        return std::nullopt;
    std::optional<Bottleneck> best;
    auto consider = [&](Bottleneck b) {
        b.per_host_gbs = b.bandwidth_gbs / std::min(b.hosts_below, b.hosts_above);
        if (!best || b.per_host_gbs < best->per_host_gbs)
            best = std::move(b);
    };
    std::vector<int> at_leaf(g.S(), 0);
    for (int h : hosts) {
        consider({"link of " + host_name(h), -1, g.host_link_gbs[h], 1, n - 1, 0});
        if (g.host_switch[h] >= 0)
            ++at_leaf[g.host_switch[h]];
    }
    for (std::size_t s = 0; s < g.S(); ++s) {
        if (g.uplink_gbs[s] <= 0)
            continue;
        int k = 0;
        for (int leaf : g.leaves_below[s])
            k += at_leaf[leaf];
        if (k == 0 || k == n)
            continue;
        consider({"uplinks of " + g.fabric.nodes[g.switch_nodes[s]].name, g.switch_nodes[s],
                  g.uplink_gbs[s], k, n - k, 0});
    }
    return best;
}

int ClusterGraph::host_leaf(int host) const {
    int s = impl_->host_switch[host];
    return s < 0 ? -1 : impl_->switch_nodes[s];
}
double ClusterGraph::host_link_gbs(int host) const {
    return impl_->host_link_gbs[host];
}
double ClusterGraph::uplink_gbs(int switch_node) const {
    return impl_->uplink_gbs[impl_->switch_of_node[switch_node]];
}
int ClusterGraph::switch_level(int switch_node) const {
    return impl_->switch_level[impl_->switch_of_node[switch_node]];
}
int ClusterGraph::switch_hops(int switch_a, int switch_b) const {
    const Impl &g = *impl_;
    auto h = g.hops[g.switch_of_node[switch_a] * g.S() + g.switch_of_node[switch_b]];
    return h == UINT16_MAX ? -1 : h;
}
std::vector<int> ClusterGraph::leaves_below(int switch_node) const {
    std::vector<int> out;
    for (int s : impl_->leaves_below[impl_->switch_of_node[switch_node]])
        out.push_back(impl_->switch_nodes[s]);
    return out;
}
const std::vector<int> &ClusterGraph::hosts_at_leaf(int switch_node) const {
    return impl_->hosts_at_leaf[impl_->switch_of_node[switch_node]];
}
std::vector<int> ClusterGraph::switch_nodes() const {
    return impl_->switch_nodes;
}

Parsed<std::vector<int>> ClusterGraph::parse_hosts(std::string_view hostlist,
                                                   std::string_view field) const {
    auto names = expand_hostlist(hostlist, field);
    if (!names)
        return names.error();
    std::vector<int> out;
    for (const auto &name : names.value()) {
        int h = host_index(name);
        if (h < 0)
            return InputError{std::string(field), name, "a host of the fabric", {}, 0};
        out.push_back(h);
    }
    return out;
}

Parsed<GpuRef> ClusterGraph::parse_endpoint(std::string_view text) const {
    auto colon = text.rfind(':');
    std::string_view host = text.substr(0, colon);
    int h = host_index(host);
    if (h < 0)
        return InputError{"endpoint",
                          std::string(text),
                          "HOST or HOST:gpuN with HOST a host of "
                          "the fabric",
                          {},
                          0};
    if (colon == std::string_view::npos)
        return GpuRef{h, -1};
    auto gpu = text.substr(colon + 1);
    if (gpu.starts_with("gpu"))
        gpu.remove_prefix(3);
    int idx = -1;
    auto [end, ec] = std::from_chars(gpu.data(), gpu.data() + gpu.size(), idx);
    int count = static_cast<int>(node(h).gpus.size());
    if (ec != std::errc() || end != gpu.data() + gpu.size() || idx < 0 || idx >= count)
        return InputError{"endpoint",
                          std::string(text),
                          "a GPU index from 0 to " + std::to_string(count - 1) + " of " +
                              std::string(host) + " (it has " + std::to_string(count) + " GPUs)",
                          {},
                          0};
    return GpuRef{h, idx};
}

}  // namespace slurm_ai
