#include "flow_model.hpp"

#include <algorithm>
#include <limits>
#include <set>

namespace slurm_ai::detail {

FlowModel::FlowModel(const ClusterGraph &graph, const CostConstants &c, std::vector<GpuRef> ranks,
                     const ClusterState *state)
    : graph_(&graph), c_(c), ranks_(std::move(ranks)), state_(state) {
    std::unordered_map<int, int> slot;
    for (int r = 0; r < static_cast<int>(ranks_.size()); ++r) {
        int h = ranks_[r].host;
        auto [it, fresh] = slot.try_emplace(h, static_cast<int>(hosts_.size()));
        if (fresh) {
            hosts_.push_back(h);
            by_host_.emplace_back();
        }
        by_host_[it->second].push_back(r);
    }
    even_ = by_host_.empty() ? 0 : static_cast<int>(by_host_.front().size());
    for (const auto &h : by_host_)
        if (static_cast<int>(h.size()) != even_)
            even_ = 0;
    // A host's NIC capacity for the job: one host link per distinct NIC its GPUs use.
    for (std::size_t i = 0; i < hosts_.size(); ++i) {
        int h = hosts_[i];
        const NodeTopology &t = graph.node(h);
        auto [pit, fresh] = pairing_.try_emplace(&t);
        if (fresh)
            pit->second = t.gpu_nic_pairing();
        std::set<int> nics;
        for (int r : by_host_[i])
            if (ranks_[r].gpu >= 0 && pit->second[ranks_[r].gpu] >= 0)
                nics.insert(pit->second[ranks_[r].gpu]);
        double link = graph.host_link_gbs(h);
        nic_gbs_[h] = link * std::max<std::size_t>(nics.size(), 1) * c_.inter_efficiency;
    }
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

double FlowModel::inter_cap_gbs(int src, int dst) const {
    return graph_->gpu_path(ranks_[src], ranks_[dst]).bandwidth_gbs * c_.inter_efficiency;
}

double FlowModel::alpha(int src, int dst) const {
    const auto &a = ranks_[src], &b = ranks_[dst];
    double path_s = graph_->gpu_path(a, b).latency_us * 1e-6;
    return (a.host == b.host ? c_.alpha_intra_s : c_.alpha_inter_s) + path_s;
}

double FlowModel::pair_time(int src, int dst, double bytes) const {
    Flow f{src, dst, bytes};
    return phase_time({&f, 1});
}

std::vector<double> FlowModel::flow_times(std::span<const Flow> flows) const {
    // Count the flows crossing each shared resource: NIC out/in per host, uplink out/in
    // per leaf switch. Keys: 4 * index + {0 NIC out, 1 NIC in, 2 uplink out, 3 uplink in}.
    std::unordered_map<long, int> count;
    auto key = [](int index, int kind) { return 4L * index + kind; };
    for (const auto &f : flows) {
        int ha = ranks_[f.src].host, hb = ranks_[f.dst].host;
        if (ha == hb || f.bytes <= 0)
            continue;
        ++count[key(ha, 0)];
        ++count[key(hb, 1)];
        int la = graph_->host_leaf(ha), lb = graph_->host_leaf(hb);
        if (la != lb && la >= 0 && lb >= 0) {
            ++count[key(la, 2)];
            ++count[key(lb, 3)];
        }
    }
    std::vector<double> times(flows.size(), 0.0);
    for (std::size_t i = 0; i < flows.size(); ++i) {
        const Flow &f = flows[i];
        if (f.bytes <= 0 || f.src == f.dst)
            continue;
        int ha = ranks_[f.src].host, hb = ranks_[f.dst].host;
        double rate;
        if (ha == hb) {
            rate = intra_gbs(f.src, f.dst);
        } else {
            rate = inter_cap_gbs(f.src, f.dst);
            rate = std::min(rate, nic_gbs(ha) / count[key(ha, 0)]);
            rate = std::min(rate, nic_gbs(hb) / count[key(hb, 1)]);
            int la = graph_->host_leaf(ha), lb = graph_->host_leaf(hb);
            // A leaf without uplinks is a root: nothing above it to share.
            if (la != lb && la >= 0 && lb >= 0) {
                if (graph_->uplink_gbs(la) > 0)
                    rate = std::min(rate, uplink_gbs(la) / count[key(la, 2)]);
                if (graph_->uplink_gbs(lb) > 0)
                    rate = std::min(rate, uplink_gbs(lb) / count[key(lb, 3)]);
            }
        }
        times[i] = alpha(f.src, f.dst) +
                   (rate > 0 ? f.bytes / (rate * 1e9) : std::numeric_limits<double>::infinity());
    }
    return times;
}

double FlowModel::phase_time(std::span<const Flow> flows) const {
    auto times = flow_times(flows);
    return times.empty() ? 0.0 : *std::max_element(times.begin(), times.end());
}

}  // namespace slurm_ai::detail
