#include "gpu_select.hpp"

#include "slurm_ai/placement/placement.hpp"

#include <algorithm>
#include <bit>
#include <set>

namespace slurm_ai {

std::vector<int> gpu_ring_order(const NodeTopology &t, std::vector<int> gpus) {
    if (gpus.size() < 3)
        return gpus;
    std::vector<int> out{gpus.front()};
    gpus.erase(gpus.begin());
    while (!gpus.empty()) {
        int last = out.back();
        auto next = std::max_element(gpus.begin(), gpus.end(), [&](int a, int b) {
            double ba = t.bandwidth(last, a), bb = t.bandwidth(last, b);
            return ba < bb || (ba == bb && a > b);
        });
        out.push_back(*next);
        gpus.erase(next);
    }
    return out;
}

std::vector<int> gpu_rank_order(const NodeTopology &t, std::vector<int> gpus,
                                const std::vector<int> &gpu_rail) {
    auto out = gpu_ring_order(t, std::move(gpus));
    auto rail = [&](int g) {
        return g >= 0 && static_cast<std::size_t>(g) < gpu_rail.size() ? gpu_rail[g] : -1;
    };
    if (std::all_of(out.begin(), out.end(), [&](int g) { return rail(g) >= 0; }))
        std::stable_sort(out.begin(), out.end(), [&](int a, int b) { return rail(a) < rail(b); });
    return out;
}

std::vector<int> host_gpu_rails(const ClusterGraph &graph, int host) {
    std::vector<int> rails;
    if (graph.ports(host).size() < 2)
        return rails;
    for (int g = 0; g < static_cast<int>(graph.node(host).gpus.size()); ++g)
        rails.push_back(graph.gpu_rail({host, g}));
    return rails;
}

}  // namespace slurm_ai

namespace slurm_ai::detail {
namespace {

double average_bandwidth(const NodeTopology &t, const std::vector<int> &gpus) {
    if (gpus.size() < 2)
        return 0;
    double sum = 0;
    for (std::size_t i = 0; i < gpus.size(); ++i)
        for (std::size_t j = i + 1; j < gpus.size(); ++j)
            sum += t.bandwidth(gpus[i], gpus[j]);
    return sum / (gpus.size() * (gpus.size() - 1) / 2.0);
}

struct Score {
    double linked = 0, rails = 0, nics = 0, left = 0;
    bool better_than(const Score &o) const {
        constexpr double eps = 1e-9;
        if (linked > o.linked + eps)
            return true;
        if (linked < o.linked - eps)
            return false;
        if (rails != o.rails)
            return rails > o.rails;
        if (nics > o.nics + eps)
            return true;
        if (nics < o.nics - eps)
            return false;
        return left > o.left + eps;
    }
};

}  // namespace

std::vector<int> lowest_gpus(GpuMask free, int k) {
    std::vector<int> out;
    for (int g = 0; g < 64 && static_cast<int>(out.size()) < k; ++g)
        if (free & (GpuMask{1} << g))
            out.push_back(g);
    if (static_cast<int>(out.size()) < k)
        out.clear();
    return out;
}

std::vector<int> best_linked_gpus(const NodeTopology &t, GpuMask free, int k, bool multi_host,
                                  const RailWish *rails) {
    std::vector<int> avail;
    for (int g = 0; g < static_cast<int>(t.gpus.size()) && g < 64; ++g)
        if (free & (GpuMask{1} << g))
            avail.push_back(g);
    const int n = static_cast<int>(avail.size());
    if (k <= 0 || n < k)
        return {};
    if (n == k)
        return gpu_ring_order(t, avail);
    auto pairing = multi_host && !t.nics.empty() ? t.gpu_nic_pairing() : std::vector<int>{};

    auto score = [&](const std::vector<int> &chosen) {
        Score s;
        s.linked = average_bandwidth(t, chosen);
        if (rails && multi_host) {  // matches of the wanted rails, as multisets
            std::vector<int> want = rails->wanted;
            for (int g : chosen)
                if (auto it = std::find(want.begin(), want.end(), rails->gpu_rail[g]);
                    rails->gpu_rail[g] >= 0 && it != want.end()) {
                    want.erase(it);
                    ++s.rails;
                }
        }
        if (!pairing.empty()) {
            std::set<int> nics;
            for (int g : chosen)
                if (pairing[g] >= 0 && t.nic_path(g, pairing[g]) <= PathType::kPCIeBridges)
                    nics.insert(pairing[g]);
            s.nics = static_cast<double>(nics.size());
        }
        std::vector<int> rest;
        for (int g : avail)
            if (std::find(chosen.begin(), chosen.end(), g) == chosen.end())
                rest.push_back(g);
        s.left = average_bandwidth(t, rest);
        return s;
    };

    // Every k-subset when there are few (8 GPUs: at most 70), greedy growth otherwise.
    std::vector<int> best;
    Score best_score;
    auto binom = [](int a, int b) {
        double c = 1;
        for (int i = 1; i <= b; ++i)
            c = c * (a - b + i) / i;
        return c;
    };
    if (binom(n, k) <= 4096) {
        std::vector<bool> pick(n, false);
        std::fill(pick.begin(), pick.begin() + k, true);
        do {
            std::vector<int> chosen;
            for (int i = 0; i < n; ++i)
                if (pick[i])
                    chosen.push_back(avail[i]);
            Score s = score(chosen);
            if (best.empty() || s.better_than(best_score)) {
                best = chosen;
                best_score = s;
            }
        } while (std::prev_permutation(pick.begin(), pick.end()));
    } else {
        best = {avail[0]};
        while (static_cast<int>(best.size()) < k) {
            int pick = -1;
            double pick_bw = -1;
            for (int g : avail) {
                if (std::find(best.begin(), best.end(), g) != best.end())
                    continue;
                double bw = 0;
                for (int c : best)
                    bw += t.bandwidth(g, c);
                if (bw > pick_bw) {
                    pick = g;
                    pick_bw = bw;
                }
            }
            best.push_back(pick);
        }
    }
    std::sort(best.begin(), best.end());
    return gpu_ring_order(t, best);
}

}  // namespace slurm_ai::detail
