#include "slurm_ai/placement/cluster_state.hpp"

#include <algorithm>
#include <tuple>

#include "slurm_ai/placement/job_demand.hpp"
#include "slurm_ai/placement/placement.hpp"

namespace slurm_ai {

GpuMask all_gpus(int count) {
    return count >= 64 ? ~GpuMask{0} : (GpuMask{1} << count) - 1;
}

ClusterState::ClusterState(const ClusterGraph &g)
    : graph(&g),
      free_gpus(g.host_count()),
      usable(g.host_count(), 1),
      weight(g.host_count(), 1.0),
      failures(g.host_count(), 0.0),
      uplink_load(g.fabric().nodes.size(), 0.0),
      down(g.host_count(), 0) {
    for (int h = 0; h < g.host_count(); ++h)
        free_gpus[h] = all_gpus(static_cast<int>(g.node(h).gpus.size()));
}

ClusterState::WantedSize ClusterState::size_of(int gpus, const JobDemand &d) {
    if (d.gpus_per_node == 0)
        return {gpus, 1};
    return {gpus, 1, static_cast<int>(d.gpus_per_node),
            static_cast<int>(std::max(1u, d.min_nodes))};
}

void ClusterState::count_size(std::vector<WantedSize> &sizes, const WantedSize &size) {
    auto key = [](const WantedSize &w) { return std::tie(w.gpus, w.per_host, w.hosts); };
    auto it = std::lower_bound(
        sizes.begin(), sizes.end(), size,
        [&](const WantedSize &a, const WantedSize &b) { return key(a) < key(b); });
    if (it != sizes.end() && it->same_size(size))
        it->weight += size.weight;
    else
        sizes.insert(it, size);
}

bool ClusterState::domain_degraded(int domain) const {
    if (domain < 0)
        return false;
    if (graph->fabric().nvlink_domains[domain].degraded)
        return true;
    for (int h : graph->domain_hosts(domain))
        if (down[h])
            return true;
    return false;
}

namespace {

// Set bits of a mask, in registers: x86-64's baseline has no POPCNT instruction, and there
// std::popcount calls libgcc's byte-table loop, 5% of the engine's decision time.
int set_bits(GpuMask m) {
    m = m - ((m >> 1) & 0x5555555555555555ull);
    m = (m & 0x3333333333333333ull) + ((m >> 2) & 0x3333333333333333ull);
    m = (m + (m >> 4)) & 0x0f0f0f0f0f0f0f0full;
    return static_cast<int>((m * 0x0101010101010101ull) >> 56);
}

}  // namespace

int ClusterState::free_gpu_count(int host) const {
    return set_bits(free_gpus[host]);
}

bool ClusterState::host_free(int host) const {
    return usable[host] &&
           free_gpus[host] == all_gpus(static_cast<int>(graph->node(host).gpus.size()));
}

void ClusterState::allocate(const Placement &p) {
    for (std::size_t i = 0; i < p.hosts.size(); ++i) {
        int h = p.hosts[i];
        if (i < p.gpus.size() && !p.gpus[i].empty()) {
            for (int g : p.gpus[i])
                free_gpus[h] &= ~(GpuMask{1} << g);
        } else {
            usable[h] = 0;  // a job without GPUs takes the host
        }
    }
}

void ClusterState::release(const Placement &p) {
    for (std::size_t i = 0; i < p.hosts.size(); ++i) {
        int h = p.hosts[i];
        if (i < p.gpus.size() && !p.gpus[i].empty()) {
            for (int g : p.gpus[i])
                free_gpus[h] |= GpuMask{1} << g;
        } else {
            usable[h] = 1;
        }
    }
}

}  // namespace slurm_ai
