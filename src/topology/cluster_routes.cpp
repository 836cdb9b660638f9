// A host's ports, the NIC and GPU behind each, NVLink domains, and the route of a flow
// between two GPUs (by rail, with PXN, or over NVLink inside a multi-node domain).
#include <algorithm>
#include <limits>

#include "cluster_graph_impl.hpp"
#include "slurm_ai/common/text_scan.hpp"

namespace slurm_ai {

void ClusterGraph::Impl::attach_ports() {
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
            if (text::natural_less(x.device, y.device) != text::natural_less(y.device, x.device))
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
            bool any_fabric =
                std::any_of(t.nics.begin(), t.nics.end(), [](const Nic &n) { return n.fabric(); });
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
        const auto &pair = *host_gpu_nic[h];
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
    return g.gpu < 0 ? 0 : i.gpu_port[g.host].at(static_cast<std::size_t>(g.gpu));
}
int ClusterGraph::gpu_rail(GpuRef g) const {
    int p = gpu_port(g);
    return p < 0 ? -1 : impl_->ports[g.host][p].rail;
}
int ClusterGraph::nic_port(int host, int nic) const {
    return nic < 0 ? -1 : impl_->nic_port[host][nic];
}
int ClusterGraph::gpu_nic(GpuRef g) const {
    const Impl &i = *impl_;
    return g.gpu < 0 ? -1 : (*i.host_gpu_nic[g.host])[g.gpu];
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
    r.src_port = gpu_port(a);
    r.dst_port = gpu_port(b);
    r.src_nic = gpu_nic(a);
    r.dst_nic = gpu_nic(b);
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
        if (g.gpu_port[a.host][i] != q || !over_nvlink(p))
            continue;
        if (t.bandwidth(a.gpu, gi) > best) {
            best = t.bandwidth(a.gpu, gi);
            r.proxy_gpu = gi;
        }
    }
    if (r.proxy_gpu >= 0) {
        r.src_port = q;
        r.src_nic = gpu_nic({a.host, r.proxy_gpu});
    }
    return r;
}

}  // namespace slurm_ai
