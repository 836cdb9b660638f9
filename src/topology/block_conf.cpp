// Slurm's topology.conf in the form of the topology/block plugin, written from the fabric
// model: its blocks, else its NVLink domains, else its leaf switches.
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "slurm_ai/common/hostlist.hpp"
#include "slurm_ai/common/text_scan.hpp"
#include "slurm_ai/topology/fabric.hpp"
#include "topology_decls.hpp"

namespace slurm_ai {
namespace {

// ECMAScript's $1 and $& work in std::regex's format; ${1} (topograph's spelling) does not.
std::string ecmascript_format(std::string_view format) {
    std::string out;
    for (std::size_t i = 0; i < format.size(); ++i) {
        if (format[i] == '$' && i + 1 < format.size() && format[i + 1] == '{') {
            auto close = format.find('}', i + 2);
            if (close != std::string_view::npos) {
                out += '$';
                out += format.substr(i + 2, close - i - 2);
                i = close;
                continue;
            }
        }
        out += format[i];
    }
    return out;
}

// The blocks the fabric stands for.
std::vector<FabricBlock> blocks_of(Fabric f) {
    if (!f.blocks.empty())
        return f.blocks;
    std::vector<FabricBlock> out;
    std::set<std::string> parents;
    for (const auto &d : f.nvlink_domains)
        if (!d.parent.empty())
            parents.insert(d.parent);
    for (const auto &d : f.nvlink_domains)
        if (!parents.count(d.name))  // the innermost domains
            out.push_back(FabricBlock{d.name, d.hosts, d.name});
    if (!out.empty())
        return out;
    f.index_links();
    f.infer_levels();
    for (int sw : f.switches()) {
        if (f.nodes[static_cast<std::size_t>(sw)].level != 0)
            continue;
        FabricBlock b;
        b.name = f.nodes[static_cast<std::size_t>(sw)].name;
        for (int li : f.links_of[static_cast<std::size_t>(sw)]) {
            const auto &l = f.links[static_cast<std::size_t>(li)];
            const int other = l.a == sw ? l.b : l.a;
            if (!f.nodes[static_cast<std::size_t>(other)].is_switch)
                b.hosts.push_back(other);
        }
        out.push_back(std::move(b));
    }
    return out;
}

}  // namespace

Parsed<std::vector<BlockDecl>> declare_blocks(const Fabric &fabric, const BlockConfStyle &style) {
    std::optional<std::regex> pattern;
    if (!style.name_pattern.empty()) {
        try {
            pattern.emplace(style.name_pattern, std::regex::ECMAScript);
        } catch (const std::regex_error &e) {
            return InputError{"block name pattern", style.name_pattern,
                              std::string("an ECMAScript regular expression (") + e.what() + ")",
                              "", 0};
        }
    }
    const std::string format = ecmascript_format(style.name_format);

    std::vector<BlockDecl> out;
    for (const auto &b : blocks_of(fabric)) {
        BlockDecl d;
        for (int h : b.hosts)
            d.nodes.push_back(fabric.nodes[static_cast<std::size_t>(h)].name);
        if (d.nodes.empty())
            continue;  // Slurm refuses a block without nodes
        d.name = b.name;
        std::smatch m;
        try {
            if (pattern && std::regex_search(d.nodes.front(), m, *pattern))
                d.name = m.format(format);
        } catch (const std::regex_error &e) {  // e.g. error_complexity on a pathological one
            return InputError{"block name pattern", style.name_pattern,
                              std::string("a pattern std::regex can match (") + e.what() + ")", "",
                              0};
        }
        if (!is_host_name(d.name) || d.name.size() > 64)
            return InputError{"block name", d.name,
                              name_rule("a name") + " (from the name pattern and format)", "", 0};
        if (b.domain != d.name)
            d.domain = b.domain;
        out.push_back(std::move(d));
    }
    return out;
}

Parsed<std::string> write_block_conf(const Fabric &fabric, const BlockConfStyle &style) {
    auto blocks = declare_blocks(fabric, style);
    if (!blocks)
        return blocks.error();
    std::string out;
    if (style.header)
        out = "# topology.conf for Slurm's topology/block plugin, written by slurm_ai from " +
              text::printable(fabric.source) + " (" + text::printable(fabric.format) + ")\n";
    for (auto &b : *blocks) {
        if (!b.domain.empty())
            out += "# " + text::printable(b.name) + "=" + text::printable(b.domain) + "\n";
        out += "BlockName=" + b.name + " Nodes=" + compress_hostlist(std::move(b.nodes)) + "\n";
    }
    const auto &sizes = style.sizes.empty() ? fabric.block_sizes : style.sizes;
    if (!sizes.empty()) {
        out += "BlockSizes=";
        for (std::size_t i = 0; i < sizes.size(); ++i)
            out += (i ? "," : "") + std::to_string(sizes[i]);
        out += "\n";
    }
    return out;
}

}  // namespace slurm_ai
