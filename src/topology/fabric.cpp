// Queries on the fabric model: lookups, switch levels, per-switch bandwidth and JSON.
#include <algorithm>
#include <string>
#include <vector>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/visitors.hpp>
#include <boost/pending/queue.hpp>
#include <boost/property_map/property_map.hpp>
#include <nlohmann/json.hpp>

#include "slurm_ai/common/hostlist.hpp"
#include "slurm_ai/common/text_scan.hpp"
#include "slurm_ai/topology/fabric.hpp"

namespace slurm_ai {
namespace {

using text::printable;

bool valid_link(const Fabric &f, const FabricLink &l) {
    auto n = static_cast<int>(f.nodes.size());
    return l.a >= 0 && l.a < n && l.b >= 0 && l.b < n;
}

std::string rate_name(const LinkRate &rate) {
    if (rate.speed.empty())
        return {};
    return std::to_string(rate.width) + "x" + rate.speed;
}

}  // namespace

int Fabric::find(std::string_view name) const {
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        if (nodes[i].name == name)
            return static_cast<int>(i);
    }
    return -1;
}

std::vector<int> Fabric::switches() const {
    std::vector<int> out;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        if (nodes[i].is_switch)
            out.push_back(static_cast<int>(i));
    }
    return out;
}

std::vector<int> Fabric::hosts() const {
    std::vector<int> out;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        if (!nodes[i].is_switch)
            out.push_back(static_cast<int>(i));
    }
    return out;
}

std::optional<CaDescription> parse_ca_description(std::string_view description) {
    std::string_view d = text::trim(description);
    std::size_t space = d.find_first_of(" \t");
    if (space == std::string_view::npos)
        return std::nullopt;
    std::string_view host = d.substr(0, space), device = text::trim(d.substr(space));
    if (device.empty() || device.find_first_of(" \t") != std::string_view::npos ||
        !is_host_name(host) || host.size() > 64)
        return std::nullopt;
    return CaDescription{host, device};
}

void Fabric::index_links() {
    links_of.assign(nodes.size(), {});
    for (std::size_t i = 0; i < links.size(); ++i) {
        const auto &l = links[i];
        if (!valid_link(*this, l))
            continue;
        links_of[static_cast<std::size_t>(l.a)].push_back(static_cast<int>(i));
        if (l.b != l.a)
            links_of[static_cast<std::size_t>(l.b)].push_back(static_cast<int>(i));
    }
}

void Fabric::infer_levels() {
    using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS>;
    using Vertex = Graph::vertex_descriptor;

    // Only switch-to-switch links carry the BFS; the leaves (switches with a host) are its
    // sources, so a switch's level is its hop count from the nearest leaf.
    Graph graph(nodes.size());
    std::vector<char> is_leaf(nodes.size(), 0);
    for (const auto &l : links) {
        if (!valid_link(*this, l) || l.a == l.b)
            continue;
        auto a = static_cast<std::size_t>(l.a), b = static_cast<std::size_t>(l.b);
        bool sa = nodes[a].is_switch, sb = nodes[b].is_switch;
        if (sa && sb)
            boost::add_edge(a, b, graph);
        else if (sa)
            is_leaf[a] = 1;
        else if (sb)
            is_leaf[b] = 1;
    }

    std::vector<Vertex> leaves;
    std::vector<int> distance(nodes.size(), -1);
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        if (is_leaf[i]) {
            leaves.push_back(i);
            distance[i] = 0;
        }
    }
    std::vector<boost::default_color_type> color(nodes.size());
    auto index = boost::get(boost::vertex_index, graph);
    auto distance_map = boost::make_iterator_property_map(distance.begin(), index);
    auto color_map = boost::make_iterator_property_map(color.begin(), index);
    boost::queue<Vertex> queue;
    boost::breadth_first_search(
        graph, leaves.begin(), leaves.end(), queue,
        boost::make_bfs_visitor(boost::record_distances(distance_map, boost::on_tree_edge())),
        color_map);

    for (std::size_t i = 0; i < nodes.size(); ++i)
        nodes[i].level = nodes[i].is_switch ? distance[i] : -1;
}

SwitchStats Fabric::switch_stats(int sw) const {
    SwitchStats stats;
    if (sw < 0 || static_cast<std::size_t>(sw) >= nodes.size() ||
        !nodes[static_cast<std::size_t>(sw)].is_switch)
        return stats;
    const int own_level = nodes[static_cast<std::size_t>(sw)].level;

    // Links to a switch of the same level (or of unknown level) are neither towards the
    // hosts nor away from them, so they count in neither direction.
    auto count = [&](const FabricLink &l) {
        if (!valid_link(*this, l) || (l.a != sw && l.b != sw))
            return;
        const auto &other = nodes[static_cast<std::size_t>(l.a == sw ? l.b : l.a)];
        if (!other.is_switch) {
            stats.down_gbps += l.rate.gbps;
        } else if (own_level >= 0 && other.level >= 0) {
            if (other.level < own_level)
                stats.down_gbps += l.rate.gbps;
            else if (other.level > own_level)
                stats.up_gbps += l.rate.gbps;
        }
    };
    if (links_of.size() == nodes.size()) {
        for (int i : links_of[static_cast<std::size_t>(sw)])
            count(links[static_cast<std::size_t>(i)]);
    } else {
        for (const auto &l : links)
            count(l);
    }
    if (stats.up_gbps > 0)
        stats.oversubscription = stats.down_gbps / stats.up_gbps;
    return stats;
}

int Fabric::max_level() const {
    int level = -1;
    for (const auto &n : nodes) {
        if (n.is_switch)
            level = std::max(level, n.level);
    }
    return level;
}

void to_json(nlohmann::json &j, const Fabric &f) {
    auto node_json = [](const FabricNode &n) {
        nlohmann::json o{{"name", printable(n.name)}};
        if (!n.guid.empty())
            o["guid"] = printable(n.guid);
        if (!n.description.empty())
            o["description"] = printable(n.description);
        if (n.ports > 0)
            o["ports"] = n.ports;
        return o;
    };

    nlohmann::json switches = nlohmann::json::array();
    nlohmann::json hosts = nlohmann::json::array();
    for (std::size_t i = 0; i < f.nodes.size(); ++i) {
        const auto &n = f.nodes[i];
        auto o = node_json(n);
        if (n.is_switch) {
            auto stats = f.switch_stats(static_cast<int>(i));
            o["level"] = n.level;
            o["down_gbps"] = stats.down_gbps;
            o["up_gbps"] = stats.up_gbps;
            o["oversubscription"] = stats.oversubscription;
            switches.push_back(std::move(o));
        } else {
            hosts.push_back(std::move(o));
        }
    }

    nlohmann::json links = nlohmann::json::array();
    for (const auto &l : f.links) {
        if (!valid_link(f, l))
            continue;
        nlohmann::json o{{"a", printable(f.nodes[static_cast<std::size_t>(l.a)].name)},
                         {"b", printable(f.nodes[static_cast<std::size_t>(l.b)].name)},
                         {"gbps", l.rate.gbps}};
        if (l.port_a > 0)
            o["port_a"] = l.port_a;
        if (l.port_b > 0)
            o["port_b"] = l.port_b;
        if (auto rate = rate_name(l.rate); !rate.empty())
            o["rate"] = printable(rate);
        if (!l.device.empty())
            o["device"] = printable(l.device);
        if (l.rail >= 0)
            o["rail"] = l.rail;
        links.push_back(std::move(o));
    }

    j = nlohmann::json{{"source", printable(f.source)}, {"format", printable(f.format)},
                       {"max_level", f.max_level()},    {"switches", std::move(switches)},
                       {"hosts", std::move(hosts)},     {"links", std::move(links)}};

    auto names = [&](const std::vector<int> &hosts_of) {
        nlohmann::json out = nlohmann::json::array();
        for (int h : hosts_of)
            if (h >= 0 && h < static_cast<int>(f.nodes.size()))
                out.push_back(printable(f.nodes[static_cast<std::size_t>(h)].name));
        return out;
    };
    if (!f.nvlink_domains.empty()) {
        nlohmann::json domains = nlohmann::json::array();
        for (const auto &d : f.nvlink_domains) {
            nlohmann::json o{
                {"name", printable(d.name)}, {"nodes", names(d.hosts)}, {"size", d.hosts.size()}};
            if (!d.parent.empty())
                o["parent"] = printable(d.parent);
            if (d.gpu_gbps > 0)
                o["gpu_gbps"] = d.gpu_gbps;
            if (d.degraded)
                o["degraded"] = true;
            domains.push_back(std::move(o));
        }
        j["nvlink_domains"] = std::move(domains);
    }
    if (!f.blocks.empty()) {
        nlohmann::json blocks = nlohmann::json::array();
        for (const auto &b : f.blocks) {
            nlohmann::json o{
                {"name", printable(b.name)}, {"nodes", names(b.hosts)}, {"size", b.hosts.size()}};
            if (!b.domain.empty())
                o["domain"] = printable(b.domain);
            blocks.push_back(std::move(o));
        }
        j["blocks"] = std::move(blocks);
    }
    if (!f.block_sizes.empty())
        j["block_sizes"] = f.block_sizes;
    // Always there for a fabric: 0 says "not rail-optimized" (or no host with two NICs).
    j["rails"] = f.rails.size();
    if (!f.rails.empty()) {
        nlohmann::json leaves = nlohmann::json::array();
        for (const auto &rail : f.rails)
            leaves.push_back(names(rail));
        j["rail_leaves"] = std::move(leaves);
    }
}

}  // namespace slurm_ai
