#include "slurm_ai/topology/cluster_graph.hpp"

#include "slurm_ai/common/hostlist.hpp"

#include <algorithm>
#include <charconv>
#include <limits>
#include <numeric>
#include <unordered_map>

#include <boost/graph/breadth_first_search.hpp>

#include "cluster_graph_impl.hpp"

namespace slurm_ai {

ClusterGraph::ClusterGraph(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ClusterGraph::ClusterGraph(ClusterGraph &&) noexcept = default;
ClusterGraph &ClusterGraph::operator=(ClusterGraph &&) noexcept = default;
ClusterGraph::~ClusterGraph() = default;

void ClusterGraph::Impl::add_gpus(const std::vector<int> &node_vertex) {
    Impl &g = *this;
    const std::size_t H = g.host_nodes.size();
    for (std::size_t h = 0; h < H; ++h) {
        const NodeTopology &t = *g.host_topology[h];
        const auto &nic = *g.host_gpu_nic[h];
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

}

// A BFS from each switch, then one pass in BFS order. A single flow follows one shortest
// path (ECMP), so it gets the best bottleneck among them, one cable wide.
void ClusterGraph::Impl::switch_paths(const SwitchGraph &sg) {
    Impl &g = *this;
    const std::size_t S = g.S();
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

}

void ClusterGraph::Impl::find_leaves_below(const std::vector<std::vector<int>> &lower) {
    Impl &g = *this;
    const std::size_t S = g.S();
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
}

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
    for (const NodeTopology *t : g.host_topology)
        g.host_gpu_nic.push_back(&g.nic_of_gpu.at(t));

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

    g.add_gpus(node_vertex);
    g.switch_paths(sg);
    g.find_leaves_below(lower);
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
