#include "flow_model.hpp"

#include <algorithm>
#include <limits>

namespace slurm_ai::detail {

LedgerScope::LedgerScope(UplinkLedger *ledger, std::string algorithm) : ledger_(ledger) {
    if (ledger_) {
        previous_ = std::move(ledger_->algorithm);
        ledger_->algorithm = std::move(algorithm);
    }
}

LedgerScope::~LedgerScope() {
    if (ledger_)
        ledger_->algorithm = std::move(previous_);
}

FlowModel::FlowModel(const ClusterGraph &graph, const CostConstants &c, std::vector<GpuRef> ranks,
                     const ClusterState *state, UplinkLedger *ledger)
    : graph_(&graph), c_(c), ranks_(std::move(ranks)), state_(state), ledger_(ledger) {
    std::unordered_map<int, int> slot;  // host -> its index in hosts_
    leaf_.reserve(ranks_.size());
    for (int r = 0; r < static_cast<int>(ranks_.size()); ++r) {
        const int h = ranks_[r].host;
        // A host's ranks usually follow each other: the map is asked once per host.
        int at = static_cast<int>(hosts_.size()) - 1;
        if (hosts_.empty() || hosts_.back() != h) {
            auto [it, fresh] = slot.try_emplace(h, static_cast<int>(hosts_.size()));
            if (fresh) {
                hosts_.push_back(h);
                by_host_.emplace_back();
            }
            at = it->second;
        }
        by_host_[at].push_back(r);
        int port = graph.gpu_port(ranks_[r]);
        leaf_.push_back(port < 0 ? -1 : graph.ports(h)[port].leaf);
    }
    even_ = by_host_.empty() ? 0 : static_cast<int>(by_host_.front().size());
    for (const auto &h : by_host_)
        if (static_cast<int>(h.size()) != even_)
            even_ = 0;
    // A host's NIC capacity for the job: each distinct NIC its ranks use, at its cable's
    // rate (one host link where the topology names no NIC).
    for (std::size_t i = 0; i < hosts_.size(); ++i) {
        int h = hosts_[i];
        std::vector<int> nics;
        for (int r : by_host_[i])
            nics.push_back(graph.gpu_nic(ranks_[r]));
        std::sort(nics.begin(), nics.end());
        nics.erase(std::unique(nics.begin(), nics.end()), nics.end());
        double sum = 0;
        for (int n : nics)
            sum += nic_cap_gbs(h, n);
        nic_gbs_[h] = sum;
    }
}

double FlowModel::nic_cap_gbs(int host, int nic) const {
    int port = graph_->nic_port(host, nic);
    double link = port < 0 ? graph_->host_link_gbs(host) : graph_->ports(host)[port].gbs;
    return link * c_.inter_efficiency;
}

double FlowModel::nic_gbs(int host) const {
    return nic_gbs_.at(host);
}

double FlowModel::uplink_gbs(int leaf) const {
    double load = state_ ? state_->uplink_load[leaf] : 0.0;
    return graph_->uplink_gbs(leaf) * std::max(0.0, 1.0 - load) * c_.inter_efficiency;
}

double FlowModel::intra_gbs(int src, int dst) const {
    const auto &a = ranks_[src], &b = ranks_[dst];
    if (a.gpu < 0 || b.gpu < 0)
        return std::numeric_limits<double>::infinity();  // host ranks: memory copies
    return graph_->node(a.host).bandwidth(a.gpu, b.gpu) * c_.intra_efficiency;
}

int FlowModel::domain_of(int rank) const {
    return ranks_[rank].gpu < 0 ? -1 : graph_->nvlink_domain(ranks_[rank].host);
}

double FlowModel::domain_gbs(int rank) const {
    return graph_->domain_gpu_gbs(ranks_[rank]) * c_.intra_efficiency;
}

bool FlowModel::pxn(int rank) const {
    const auto &g = ranks_[rank];
    if (g.gpu < 0)
        return true;  // a host's own traffic leaves by any port
    const NodeTopology &t = graph_->node(g.host);
    for (std::size_t i = 0; i < t.gpus.size(); ++i)
        if (over_nvlink(t.path(g.gpu, static_cast<int>(i))))
            return true;
    return false;
}

double FlowModel::alpha(int src, int dst) const {
    const auto &a = ranks_[src], &b = ranks_[dst];
    return alpha(a, b, graph_->gpu_path(a, b));
}

double FlowModel::alpha(const GpuRef &a, const GpuRef &b, const PathMetrics &path) const {
    return (a.host == b.host ? c_.alpha_intra_s : c_.alpha_inter_s) + path.latency_us * 1e-6;
}

double FlowModel::pair_time(int src, int dst, double bytes) const {
    Flow f{src, dst, bytes};
    return phase_time({&f, 1});
}

std::vector<double> FlowModel::flow_times(std::span<const Flow> flows) const {
    // Shared resources, each keyed by kind, an index (host or leaf) and a sub-index (NIC
    // or GPU): the sending and receiving NIC, the uplinks out of and into a leaf, and a
    // GPU's NVLink out and in towards other hosts of its domain.
    enum Kind : long { kNicOut, kNicIn, kUpOut, kUpIn, kNvlOut, kNvlIn };
    auto key = [](Kind kind, int index, int sub) {
        return ((static_cast<long>(kind) << 32) + index) * 65536 + (sub + 1);
    };
    struct Use {
        Route r;
        int leaf_a = -1, leaf_b = -1;  // the two ends' leaves (fabric node), -1 none
        PathMetrics path;
    };
    // Every use of a resource, sorted: its count is the length of its run (a phase has a
    // few hundred flows at most; this is several times faster than a hash map here).
    std::vector<long> used;
    used.reserve(4 * flows.size());
    std::vector<Use> uses(flows.size());
    for (std::size_t i = 0; i < flows.size(); ++i) {
        const Flow &f = flows[i];
        const GpuRef &a = ranks_[f.src], &b = ranks_[f.dst];
        if (a.host == b.host || f.bytes <= 0)
            continue;
        Use &u = uses[i];
        u.r = graph_->route(a, b);
        u.path = graph_->gpu_path(a, b, u.r);
        if (u.r.nvlink) {
            used.push_back(key(kNvlOut, a.host, a.gpu));
            used.push_back(key(kNvlIn, b.host, b.gpu));
            continue;
        }
        used.push_back(key(kNicOut, a.host, u.r.src_nic));
        used.push_back(key(kNicIn, b.host, u.r.dst_nic));
        if (u.r.src_port >= 0 && u.r.dst_port >= 0) {
            u.leaf_a = graph_->ports(a.host)[u.r.src_port].leaf;
            u.leaf_b = graph_->ports(b.host)[u.r.dst_port].leaf;
        }
        if (u.leaf_a != u.leaf_b && u.leaf_a >= 0 && u.leaf_b >= 0) {
            used.push_back(key(kUpOut, u.leaf_a, 0));
            used.push_back(key(kUpIn, u.leaf_b, 0));
        }
    }
    std::sort(used.begin(), used.end());
    auto count = [&](long k) {
        const auto run = std::equal_range(used.begin(), used.end(), k);
        return static_cast<double>(run.second - run.first);
    };
    std::vector<double> times(flows.size(), 0.0);
    for (std::size_t i = 0; i < flows.size(); ++i) {
        const Flow &f = flows[i];
        if (f.bytes <= 0 || f.src == f.dst)
            continue;
        const GpuRef &a = ranks_[f.src], &b = ranks_[f.dst];
        double rate, alpha_s;
        if (a.host == b.host) {
            rate = intra_gbs(f.src, f.dst);
            alpha_s = alpha(f.src, f.dst);
        } else {
            const Use &u = uses[i];
            alpha_s = alpha(a, b, u.path);
            if (u.r.nvlink) {
                rate = u.path.bandwidth_gbs * c_.intra_efficiency;
                rate = std::min(rate, domain_gbs(f.src) / count(key(kNvlOut, a.host, a.gpu)));
                rate = std::min(rate, domain_gbs(f.dst) / count(key(kNvlIn, b.host, b.gpu)));
            } else {
                rate = u.path.bandwidth_gbs * c_.inter_efficiency;
                rate = std::min(rate, nic_cap_gbs(a.host, u.r.src_nic) /
                                          count(key(kNicOut, a.host, u.r.src_nic)));
                rate = std::min(rate, nic_cap_gbs(b.host, u.r.dst_nic) /
                                          count(key(kNicIn, b.host, u.r.dst_nic)));
                // A leaf without uplinks is a root: nothing above it to share.
                if (u.leaf_a != u.leaf_b && u.leaf_a >= 0 && u.leaf_b >= 0) {
                    if (graph_->uplink_gbs(u.leaf_a) > 0)
                        rate =
                            std::min(rate, uplink_gbs(u.leaf_a) / count(key(kUpOut, u.leaf_a, 0)));
                    if (graph_->uplink_gbs(u.leaf_b) > 0)
                        rate =
                            std::min(rate, uplink_gbs(u.leaf_b) / count(key(kUpIn, u.leaf_b, 0)));
                }
            }
        }
        times[i] =
            alpha_s + (rate > 0 ? f.bytes / (rate * 1e9) : std::numeric_limits<double>::infinity());
    }
    return times;
}

void FlowModel::record(std::span<const Flow> flows, double times) const {
    if (!ledger_ || ledger_->algorithm.empty())
        return;
    for (const Flow &f : flows) {
        const GpuRef &a = ranks_[f.src], &b = ranks_[f.dst];
        if (a.host == b.host || f.bytes <= 0)
            continue;
        Route r = graph_->route(a, b);
        if (r.nvlink || r.src_port < 0 || r.dst_port < 0)
            continue;
        int leaf_a = graph_->ports(a.host)[r.src_port].leaf;
        int leaf_b = graph_->ports(b.host)[r.dst_port].leaf;
        if (leaf_a != leaf_b && leaf_a >= 0 && leaf_b >= 0) {
            record_uplink(leaf_a, f.bytes * times, 0);
            record_uplink(leaf_b, 0, f.bytes * times);
        }
    }
}

void FlowModel::record_uplink(int leaf, double up_bytes, double down_bytes) const {
    if (!ledger_ || ledger_->algorithm.empty() || graph_->uplink_gbs(leaf) <= 0)
        return;
    auto &at = ledger_->bytes[ledger_->algorithm][leaf];
    at.first += up_bytes;
    at.second += down_bytes;
}

double FlowModel::phase_time(std::span<const Flow> flows) const {
    auto times = flow_times(flows);
    return times.empty() ? 0.0 : *std::max_element(times.begin(), times.end());
}

}  // namespace slurm_ai::detail
