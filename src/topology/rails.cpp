// Rails of a rail-optimized fabric (DGX SuperPOD and its copies): NIC k of every host of a
// scalable unit is cabled to leaf k of that unit, so the leaves fall into rails. Inferred
// from the cabling alone, since no fabric file names them.
#include <algorithm>
#include <cstddef>
#include <map>
#include <string_view>
#include <vector>

#include "slurm_ai/common/text_scan.hpp"
#include "slurm_ai/topology/fabric.hpp"

namespace slurm_ai {
namespace {

struct HostNic {
    std::string_view device;  // "" when unknown
    int leaf = -1;
    bool unique_name = false;  // no other NIC of its host has this device name
};

// The key with the most votes, the lowest on a tie.
int most_voted(const std::map<int, int> &votes) {
    int best = -1, most = 0;
    for (const auto &[key, n] : votes)
        if (n > most) {
            best = key;
            most = n;
        }
    return best;
}

}  // namespace

void Fabric::infer_rails() {
    rails.clear();
    for (auto &l : links)
        l.rail = -1;
    if (links_of.size() != nodes.size())
        index_links();
    auto is_leaf = [&](int n) {
        const auto &node = nodes[static_cast<std::size_t>(n)];
        return node.is_switch && node.level == 0;
    };

    // The hosts with NICs on two or more leaves, each host's NICs in natural order.
    std::vector<std::vector<HostNic>> hosts;
    for (std::size_t h = 0; h < nodes.size(); ++h) {
        if (nodes[h].is_switch)
            continue;
        std::vector<HostNic> nics;
        for (int li : links_of[h]) {
            const auto &l = links[static_cast<std::size_t>(li)];
            const int other = l.a == static_cast<int>(h) ? l.b : l.a;
            if (is_leaf(other))
                nics.push_back({l.device, other, false});
        }
        std::sort(nics.begin(), nics.end(), [](const HostNic &x, const HostNic &y) {
            if (text::natural_less(x.device, y.device) != text::natural_less(y.device, x.device))
                return text::natural_less(x.device, y.device);
            return x.leaf < y.leaf;
        });
        bool two_leaves = false;
        for (std::size_t i = 0; i < nics.size(); ++i) {
            two_leaves = two_leaves || nics[i].leaf != nics[0].leaf;
            nics[i].unique_name = !nics[i].device.empty();
            for (std::size_t j = 0; j < nics.size(); ++j)
                if (j != i && nics[j].device == nics[i].device)
                    nics[i].unique_name = false;
        }
        if (two_leaves)
            hosts.push_back(std::move(nics));
    }
    if (hosts.empty())
        return;

    // First guess: a leaf's rail is the position k its hosts' NICs on it have most.
    std::map<int, int> rail_of;  // leaf -> rail key
    {
        std::map<int, std::map<int, int>> votes;
        for (const auto &nics : hosts)
            for (std::size_t k = 0; k < nics.size(); ++k)
                ++votes[nics[k].leaf][static_cast<int>(k)];
        for (const auto &[leaf, v] : votes)
            rail_of[leaf] = most_voted(v);
    }
    // A host that lacks a NIC shifts the positions of the ones after it. A device name
    // (mlx5_4, HCA-5) is one rail on most hosts: each name takes the rail most of its
    // leaves have, and the leaves vote again by their NICs' names, until nothing moves.
    for (int round = 0; round < 8; ++round) {
        std::map<std::string_view, std::map<int, int>> by_name;
        for (const auto &nics : hosts)
            for (const auto &n : nics)
                if (n.unique_name)
                    ++by_name[n.device][rail_of[n.leaf]];
        std::map<int, std::map<int, int>> votes;
        for (const auto &nics : hosts)
            for (const auto &n : nics)
                ++votes[n.leaf][n.unique_name ? most_voted(by_name[n.device]) : rail_of[n.leaf]];
        bool moved = false;
        for (const auto &[leaf, v] : votes) {
            const int r = most_voted(v);
            moved = moved || r != rail_of[leaf];
            rail_of[leaf] = r;
        }
        if (!moved)
            break;
    }

    // The keys in use, numbered 0.. in order, are the rails.
    std::map<int, int> rail_index;
    for (const auto &[leaf, key] : rail_of)
        rail_index.emplace(key, 0);
    int next = 0;
    for (auto &[key, r] : rail_index)
        r = next++;
    rails.assign(rail_index.size(), {});
    for (const auto &[leaf, key] : rail_of)  // std::map: leaves in node order
        rails[static_cast<std::size_t>(rail_index[key])].push_back(leaf);
    for (auto &l : links) {
        const int leaf = is_leaf(l.a) && !nodes[static_cast<std::size_t>(l.b)].is_switch   ? l.a
                         : is_leaf(l.b) && !nodes[static_cast<std::size_t>(l.a)].is_switch ? l.b
                                                                                           : -1;
        if (auto it = rail_of.find(leaf); leaf >= 0 && it != rail_of.end())
            l.rail = rail_index[it->second];
    }
}

int Fabric::rail_of_leaf(int leaf) const {
    for (std::size_t r = 0; r < rails.size(); ++r)
        if (std::binary_search(rails[r].begin(), rails[r].end(), leaf))
            return static_cast<int>(r);
    return -1;
}

}  // namespace slurm_ai
