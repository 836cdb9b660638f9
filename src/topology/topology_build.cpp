// The one builder of the fabric model from what topology.conf and topology.yaml declare.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "topology_decls.hpp"

namespace slurm_ai {
namespace {

// The switch that joins the leaf switches a block file's blocks become.
constexpr const char *kBlockRoot = "block-root";

class TopologyBuilder {
  public:
    TopologyBuilder(TopologyDecls decls, std::string_view source, std::string_view format,
                    double default_gbps)
        : d_(std::move(decls)), source_(source), format_(format), default_gbps_(default_gbps) {}

    Parsed<Fabric> build() {
        if (auto err = check_unique())
            return *err;
        Fabric fabric;
        fabric.source = source_;
        fabric.format = std::string(format_);
        const int switch_count = static_cast<int>(d_.switches.size());
        std::size_t host_refs = 0, child_refs = 0;
        for (const auto &d : d_.switches) {
            host_refs += d.nodes.size();
            child_refs += d.children.size();
        }
        // Keyed by views into d_, which stays put while the fabric is built; switches
        // take the first indexes, so an index tells a switch from a host.
        std::unordered_map<std::string_view, int> node_index;
        node_index.reserve(d_.switches.size() + host_refs);
        fabric.nodes.reserve(d_.switches.size() + host_refs);
        fabric.links.reserve(host_refs + child_refs);
        for (const auto &d : d_.switches) {
            FabricNode n;
            n.name = d.name;
            n.is_switch = true;
            node_index.emplace(d.name, static_cast<int>(fabric.nodes.size()));
            fabric.nodes.push_back(std::move(n));
        }

        std::unordered_set<std::uint64_t> linked;
        linked.reserve(host_refs + child_refs);
        auto link_once = [&](int a, int b) {
            auto lo = static_cast<std::uint32_t>(std::min(a, b));
            auto hi = static_cast<std::uint32_t>(std::max(a, b));
            return linked.insert(std::uint64_t{lo} << 32 | hi).second;
        };
        for (int sw = 0; sw < switch_count; ++sw) {
            const auto &d = d_.switches[static_cast<std::size_t>(sw)];
            LinkRate rate;
            rate.width = 0;
            rate.gbps = d.link_speed > 0 ? d.link_speed : default_gbps_;
            rate.assumed = d.link_speed == 0;  // written back without a LinkSpeed

            for (const auto &child : d.children) {
                auto it = node_index.find(child);
                if (it == node_index.end() || it->second >= switch_count) {
                    return error("Switches", child,
                                 "the name of a switch defined on a SwitchName= line", d.line);
                }
                if (it->second == sw)
                    return error("Switches", child, "switches other than itself", d.line);
                // A pair that lists each other (X5.topology.conf does) is one adjacency.
                if (link_once(sw, it->second))
                    fabric.links.push_back({sw, it->second, 0, 0, rate});
            }
            for (const auto &host : d.nodes) {
                auto [it, added] = node_index.emplace(host, static_cast<int>(fabric.nodes.size()));
                if (it->second < switch_count)
                    return error("Nodes", host, "node names, not the name of a switch", d.line);
                if (added) {
                    FabricNode n;
                    n.name = host;
                    fabric.nodes.push_back(std::move(n));
                }
                if (link_once(sw, it->second))
                    fabric.links.push_back({sw, it->second, 0, 0, rate});
            }
        }
        if (auto err = build_blocks(fabric, node_index, link_once))
            return *err;
        fabric.block_sizes = d_.block_sizes;
        fabric.index_links();
        fabric.infer_levels();
        return fabric;
    }

  private:
    // Blocks become leaf switches under one root, unless the file has a tree already.
    template <typename LinkOnce>
    std::optional<InputError> build_blocks(Fabric &fabric,
                                           std::unordered_map<std::string_view, int> &node_index,
                                           LinkOnce &link_once) const {
        const bool as_tree = d_.switches.empty() && !d_.blocks.empty();
        LinkRate rate;
        rate.width = 0;
        rate.gbps = default_gbps_;
        rate.assumed = true;
        // Names are views into d_.blocks (or the constant): node_index keeps them.
        auto add_switch = [&](std::string_view name) -> std::optional<int> {
            auto [it, added] = node_index.emplace(name, static_cast<int>(fabric.nodes.size()));
            if (!added)
                return std::nullopt;
            FabricNode n;
            n.name = std::string(name);
            n.is_switch = true;
            fabric.nodes.push_back(std::move(n));
            return it->second;
        };
        std::optional<int> root;
        if (as_tree && d_.blocks.size() > 1) {
            root = add_switch(std::string_view(kBlockRoot));
            if (!root)
                return error("BlockName", kBlockRoot,
                             "a name other than " + std::string(kBlockRoot), 0);
        }
        std::unordered_set<std::string_view> in_block;
        for (const auto &b : d_.blocks) {
            std::optional<int> sw;
            if (as_tree) {
                sw = add_switch(b.name);
                if (!sw)
                    return error("BlockName", b.name, "a name no host or switch has", b.line);
                if (root)
                    fabric.links.push_back({*root, *sw, 0, 0, rate});
            }
            FabricBlock block;
            block.name = b.name;
            for (const auto &host : b.nodes) {
                if (!in_block.insert(host).second)
                    return error("Nodes", host, "each node in one block", b.line);
                auto [it, added] = node_index.emplace(host, static_cast<int>(fabric.nodes.size()));
                if (!added && fabric.nodes[static_cast<std::size_t>(it->second)].is_switch)
                    return error("Nodes", host, "node names, not the name of a switch", b.line);
                if (added) {
                    FabricNode n;
                    n.name = host;
                    fabric.nodes.push_back(std::move(n));
                }
                if (sw && link_once(*sw, it->second))
                    fabric.links.push_back({*sw, it->second, 0, 0, rate});
                block.hosts.push_back(it->second);
            }
            fabric.blocks.push_back(std::move(block));
        }
        return std::nullopt;
    }

    InputError error(std::string field, std::string_view value, std::string expected,
                     int line) const {
        return InputError{std::move(field), std::string(value), std::move(expected),
                          std::string(source_), line};
    }

    std::optional<InputError> check_unique() const {
        std::unordered_map<std::string_view, int> first;
        for (const auto &s : d_.switches)
            if (auto [it, fresh] = first.emplace(s.name, s.line); !fresh)
                return error(
                    "SwitchName", s.name,
                    "each switch defined once (first at line " + std::to_string(it->second) + ")",
                    s.line);
        first.clear();
        for (const auto &b : d_.blocks)
            if (auto [it, fresh] = first.emplace(b.name, b.line); !fresh)
                return error(
                    "BlockName", b.name,
                    "each block defined once (first at line " + std::to_string(it->second) + ")",
                    b.line);
        return std::nullopt;
    }

    TopologyDecls d_;
    std::string source_;
    std::string format_;
    double default_gbps_;
};

}  // namespace

Parsed<Fabric> build_topology(TopologyDecls decls, std::string_view source, std::string_view format,
                              double default_gbps) {
    return TopologyBuilder(std::move(decls), source, format, default_gbps).build();
}

}  // namespace slurm_ai
