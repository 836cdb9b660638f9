// Slurm's topology.yaml (25.05+): several named topologies in one file, each a tree, a
// block topology or flat. Read into the same declarations as topology.conf
// (topology_decls.hpp), so both files build one model; written from it.
#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <vector>

#include "slurm_ai/common/file_io.hpp"
#include "slurm_ai/common/hostlist.hpp"
#include "slurm_ai/common/text_scan.hpp"
#include "slurm_ai/topology/fabric.hpp"
#include "topology_decls.hpp"
#include "yaml_document.hpp"

namespace slurm_ai {
namespace {

// The kinds of topology Slurm knows (26.05 adds ring and torus3d). The model takes the
// tree and the blocks; a flat, ring or torus3d topology (another partition's) adds nothing.
constexpr std::string_view kKinds = "tree, block, flat, ring, torus3d";
bool is_kind(std::string_view key) {
    return key == "tree" || key == "block" || key == "flat" || key == "ring" || key == "torus3d";
}

class YamlReader {
  public:
    YamlReader(std::string_view source, std::string_view wanted)
        : source_(source), wanted_(wanted) {}

    Parsed<TopologyDecls> read(const yaml::Node &root) {
        if (root.kind() == yaml::Node::Kind::kEmpty)
            return error("file", "", "a list of topologies (- topology: NAME ...)", 1);
        if (!root.is_sequence())
            return error("file", root.scalar(), "a list of topologies (- topology: NAME ...)",
                         root.line());
        std::optional<yaml::Node> tree, block;
        std::string tree_name, block_name;
        bool tree_default = false, block_default = false, found = false;
        for (const auto &t : root.items()) {
            if (!t.is_mapping())
                return error("topology", t.scalar(), "a mapping (topology:, tree:|block:|flat:)",
                             t.line());
            auto name = t.get("topology");
            if (!name || !name->is_scalar() || name->scalar().empty())
                return error("topology", "", "a name on every topology (topology: NAME)", t.line());
            bool is_default = false;
            int kinds = 0;
            std::optional<yaml::Node> body;
            std::string kind;
            for (const auto &[key, value] : t.pairs()) {
                if (key == "topology")
                    continue;
                if (key == "cluster_default") {
                    auto v = boolean(value);
                    if (!v)
                        return error(name->scalar() + ".cluster_default", value.scalar(),
                                     "true or false", value.line());
                    is_default = *v;
                } else if (is_kind(key)) {
                    ++kinds;
                    kind = key;
                    body = value;
                } else {
                    return error(name->scalar() + "." + key, value.scalar(),
                                 "the keys topology, cluster_default and one of " +
                                     std::string(kKinds),
                                 value.line());
                }
            }
            if (kinds != 1)
                return error(name->scalar(), kind,
                             "exactly one of " + std::string(kKinds) + " in a topology",
                             t.line());
            if (!wanted_.empty() && name->scalar() != wanted_)
                continue;
            found = true;
            // Slurm's default for a partition without one: the first cluster_default
            // topology; of each kind this reader takes that one, else the first.
            auto pick = [&](std::optional<yaml::Node> &slot, std::string &slot_name,
                            bool &slot_default) {
                if (!slot || (is_default && !slot_default)) {
                    slot = body;
                    slot_name = name->scalar();
                    slot_default = is_default;
                }
            };
            if (kind == "tree")
                pick(tree, tree_name, tree_default);
            else if (kind == "block")
                pick(block, block_name, block_default);
        }
        if (!wanted_.empty() && !found)
            return error("topology", wanted_, "the name of a topology in the file", 0);
        TopologyDecls decls;
        if (tree)
            if (auto err = read_tree(*tree, tree_name, decls))
                return *err;
        if (block)
            if (auto err = read_block(*block, block_name, decls))
                return *err;
        return decls;
    }

  private:
    InputError error(std::string field, std::string_view value, std::string expected,
                     int line) const {
        return InputError{std::move(field), std::string(value), std::move(expected),
                          std::string(source_), line};
    }

    static std::optional<bool> boolean(const yaml::Node &n) {
        const std::string v = text::lower(n.scalar());
        if (n.is_scalar() && (v == "true" || v == "yes" || v == "on"))
            return true;
        if (n.is_scalar() && (v == "false" || v == "no" || v == "off"))
            return false;
        return std::nullopt;
    }

    // A name: a scalar Slurm would take, 1 to 64 characters.
    std::optional<InputError> name_of(const yaml::Node &n, const std::string &field,
                                      std::string &out) const {
        out = n.scalar();
        if (!n.is_scalar() || !is_host_name(out) || out.size() > kSlurmNameMax)
            return error(field, out, name_rule("a name"), n.line());
        return std::nullopt;
    }

    // nodes: / children: a hostlist, or a list of hostlists.
    std::optional<InputError> names_in(const yaml::Node &n, const std::string &field,
                                       std::vector<std::string> &out) {
        std::vector<yaml::Node> items = n.is_sequence() ? n.items() : std::vector<yaml::Node>{n};
        for (const auto &item : items) {
            if (!item.is_scalar())
                return error(field, "", "a hostlist such as node[01-04], or a list of them",
                             item.line());
            auto names = expand_hostlist(item.scalar(), field, kMaxHostNames);
            if (!names) {
                InputError err = names.error();
                err.source = source_;
                err.line = item.line();
                return err;
            }
            total_ += names->size();
            if (total_ > kMaxHostNames)
                return error(field, item.scalar(),
                             "at most " + std::to_string(kMaxHostNames) + " names in one file",
                             item.line());
            out.insert(out.end(), names->begin(), names->end());
        }
        return std::nullopt;
    }

    std::optional<InputError> read_tree(const yaml::Node &tree, const std::string &topo,
                                        TopologyDecls &decls) {
        const std::string where = topo + ".tree";
        if (!tree.is_mapping())
            return error(where, tree.scalar(), "a mapping with switches:", tree.line());
        auto switches = tree.get("switches");
        if (!switches || !switches->is_sequence())
            return error(where + ".switches", "", "a list of switches (- switch: NAME ...)",
                         tree.line());
        for (const auto &sw : switches->items()) {
            if (!sw.is_mapping())
                return error(where + ".switches", sw.scalar(),
                             "a mapping (switch:, children:, nodes:)", sw.line());
            SwitchDecl d;
            d.line = sw.line();
            bool named = false;
            for (const auto &[key, value] : sw.pairs()) {
                if (key == "switch") {
                    if (auto err = name_of(value, where + ".switch", d.name))
                        return err;
                    named = true;
                } else if (key == "children" || key == "nodes") {
                    if (auto err = names_in(value, where + "." + key,
                                            key == "nodes" ? d.nodes : d.children))
                        return err;
                } else {
                    return error(where + "." + key, value.scalar(),
                                 "the keys switch, children and nodes", value.line());
                }
            }
            if (!named)
                return error(where + ".switch", "", "a name on every switch (switch: NAME)",
                             sw.line());
            decls.switches.push_back(std::move(d));
        }
        return std::nullopt;
    }

    std::optional<InputError> read_block(const yaml::Node &block, const std::string &topo,
                                         TopologyDecls &decls) {
        const std::string where = topo + ".block";
        if (!block.is_mapping())
            return error(where, block.scalar(),
                         "a mapping with block_sizes: and blocks:", block.line());
        for (const auto &[key, value] : block.pairs()) {
            if (key == "block_sizes") {
                std::vector<yaml::Node> items =
                    value.is_sequence() ? value.items() : std::vector<yaml::Node>{value};
                for (const auto &item : items) {
                    const std::string v = item.scalar();
                    int n = 0;
                    bool ok = item.is_scalar() && !v.empty() && v.size() <= 7;
                    for (char c : v) {
                        ok = ok && c >= '0' && c <= '9';
                        if (ok)
                            n = n * 10 + (c - '0');
                    }
                    if (!ok || n < 1)
                        return error(where + ".block_sizes", v,
                                     "a list of block sizes in nodes, e.g. [8, 16, 32]",
                                     item.line());
                    decls.block_sizes.push_back(n);
                }
            } else if (key == "blocks") {
                if (!value.is_sequence())
                    return error(where + ".blocks", value.scalar(),
                                 "a list of blocks (- block: NAME ...)", value.line());
                for (const auto &b : value.items()) {
                    if (!b.is_mapping())
                        return error(where + ".blocks", b.scalar(), "a mapping (block:, nodes:)",
                                     b.line());
                    BlockDecl d;
                    d.line = b.line();
                    bool named = false;
                    for (const auto &[k, v] : b.pairs()) {
                        if (k == "block") {
                            if (auto err = name_of(v, where + ".block", d.name))
                                return err;
                            named = true;
                        } else if (k == "nodes") {
                            if (auto err = names_in(v, where + ".nodes", d.nodes))
                                return err;
                        } else {
                            return error(where + "." + k, v.scalar(), "the keys block and nodes",
                                         v.line());
                        }
                    }
                    if (!named)
                        return error(where + ".block", "", "a name on every block (block: NAME)",
                                     b.line());
                    decls.blocks.push_back(std::move(d));
                }
            } else {
                return error(where + "." + key, value.scalar(), "the keys block_sizes and blocks",
                             value.line());
            }
        }
        return std::nullopt;
    }

    std::string source_;
    std::string wanted_;
    std::size_t total_ = 0;
};

// A scalar as YAML reads it back as the same string: plain where that is safe, else in
// double quotes.
std::string scalar(std::string_view s) {
    static constexpr std::string_view kWords[] = {"true", "false", "yes", "no", "on",
                                                  "off",  "null",  "~",   "y",  "n"};
    bool plain = !s.empty() && (std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_');
    for (char c : s)
        plain = plain && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' ||
                          c == '.' || c == '[' || c == ']' || c == ',');
    const std::string low = text::lower(s);
    plain = plain && std::find(std::begin(kWords), std::end(kWords), low) == std::end(kWords);
    return plain ? std::string(s) : text::quoted(s);
}

}  // namespace

Parsed<Fabric> parse_topology_yaml(std::string_view text, std::string_view source,
                                   double default_gbps, std::string_view topology) {
    auto doc = yaml::Document::parse(text, source);
    if (!doc)
        return doc.error();
    auto decls = YamlReader(source, topology).read(doc->root());
    if (!decls)
        return decls.error();
    return build_topology(std::move(decls).value(), source, "topology.yaml", default_gbps);
}

Parsed<Fabric> load_topology_yaml(const std::string &path, double default_gbps,
                                  std::string_view topology) {
    auto text = read_text_file(path);
    if (!text)
        return text.error();
    return parse_topology_yaml(*text, path, default_gbps, topology);
}

Parsed<std::string> write_topology_yaml(const Fabric &fabric, const TopologyYamlStyle &style) {
    auto declared = declare_blocks(fabric, style.blocks);
    if (!declared)
        return declared.error();
    std::vector<BlockDecl> blocks = std::move(declared).value();
    auto tree = declare_tree(fabric, style.level_names);
    // Blocks only from the fabric's own blocks or NVLink domains, not from its leaves: a
    // tree alone is a tree.
    if (fabric.blocks.empty() && fabric.nvlink_domains.empty())
        blocks.clear();

    std::string out;
    if (style.header)
        out = "# topology.yaml for Slurm 25.05+, written by slurm_ai from " +
              text::printable(fabric.source) + " (" + text::printable(fabric.format) + ")\n";
    if (!tree.empty()) {
        out += "- topology: tree\n  cluster_default: true\n  tree:\n    switches:\n";
        for (auto &d : tree) {
            if (!d.was.empty())
                out += "      # " + d.name + "=" + text::printable(d.was) + "\n";
            out += "      - switch: " + scalar(d.name) + "\n";
            if (!d.children.empty())
                out +=
                    "        children: " + scalar(compress_hostlist(std::move(d.children))) + "\n";
            if (!d.nodes.empty())
                out += "        nodes: " + scalar(compress_hostlist(std::move(d.nodes))) + "\n";
        }
    }
    if (!blocks.empty()) {
        out += "- topology: block\n  cluster_default: ";
        out += tree.empty() ? "true\n" : "false\n";
        out += "  block:\n";
        const auto &sizes = style.blocks.sizes.empty() ? fabric.block_sizes : style.blocks.sizes;
        if (!sizes.empty()) {
            out += "    block_sizes:\n";
            for (int n : sizes)
                out += "      - " + std::to_string(n) + "\n";
        }
        out += "    blocks:\n";
        for (auto &b : blocks) {
            if (!b.domain.empty())
                out += "      # " + b.name + "=" + text::printable(b.domain) + "\n";
            out += "      - block: " + scalar(b.name) + "\n";
            out += "        nodes: " + scalar(compress_hostlist(std::move(b.nodes))) + "\n";
        }
    }
    if (tree.empty() && blocks.empty())
        out += "- topology: flat\n  cluster_default: true\n  flat: true\n";
    return out;
}

}  // namespace slurm_ai
