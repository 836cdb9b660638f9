// topograph's model YAML: the switch tree, the leaf blocks with their hosts, and the
// accelerator (NVLink) domains that the blocks' annotations name.
#include <map>
#include <set>
#include <string>
#include <unordered_map>

#include "slurm_ai/common/file_io.hpp"
#include "slurm_ai/common/hostlist.hpp"
#include "slurm_ai/topology/fabric.hpp"
#include "yaml_document.hpp"

namespace slurm_ai {
namespace {

constexpr std::size_t kMaxHosts = 1 << 20;

bool ends_with(std::string_view s, std::string_view tail) {
    return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

class ModelReader {
  public:
    ModelReader(std::string_view source, double default_gbps)
        : source_(source), default_gbps_(default_gbps) {
        fabric_.source = source;
        fabric_.format = "topograph-model";
    }

    Parsed<Fabric> read(const yaml::Node &root) {
        if (root.kind() == yaml::Node::Kind::kEmpty)
            return error("file", "", "a topograph model (switches: and blocks:)", 1);
        if (!root.is_mapping())
            return error("file", root.scalar(),
                         "a mapping with switches: and blocks:", root.line());
        if (auto sw = root.get("switches"))
            if (auto err = read_switches(*sw))
                return *err;
        if (auto blocks = root.get("blocks"))
            if (auto err = read_blocks(*blocks))
                return *err;
        if (auto err = check_tree())
            return *err;
        fabric_.index_links();
        fabric_.infer_levels();
        return std::move(fabric_);
    }

  private:
    InputError error(std::string field, std::string_view value, std::string expected,
                     int line) const {
        return InputError{std::move(field), std::string(value), std::move(expected),
                          std::string(source_), line};
    }

    std::optional<InputError> check_name(std::string_view field, const yaml::Node &n) const {
        const std::string name = n.scalar();
        if (!n.is_scalar() || !is_host_name(name) || name.size() > kSlurmNameMax)
            return error(std::string(field), name, name_rule("a switch name"), n.line());
        return std::nullopt;
    }

    int switch_index(const std::string &name) {
        auto [it, added] = index_.emplace(name, static_cast<int>(fabric_.nodes.size()));
        if (added) {
            FabricNode n;
            n.name = name;
            n.is_switch = true;
            fabric_.nodes.push_back(std::move(n));
        }
        return it->second;
    }

    void link(int a, int b) {
        LinkRate rate;
        rate.width = 0;
        rate.gbps = default_gbps_;
        rate.assumed = true;
        fabric_.links.push_back({a, b, 0, 0, rate});
    }

    // switches: {name: {switches: [child, ...], labels: {...}}, ...}; a switch first named
    // as a child takes its place in the order there, so the tree reads top down.
    std::optional<InputError> read_switches(const yaml::Node &sw) {
        if (!sw.is_mapping())
            return error("switches", sw.scalar(), "a mapping of switch names", sw.line());
        for (const auto &[name, body] : sw.pairs()) {
            const int line = body.line();
            if (!is_host_name(name) || name.size() > kSlurmNameMax)
                return error("switches", name, "a switch name without blanks or [ ] , # = \" ' \\",
                             line);
            const int parent = switch_index(name);
            if (!declared_.insert(name).second)
                return error("switches", name, "each switch once", line);
            if (body.kind() == yaml::Node::Kind::kEmpty || body.is_scalar())
                continue;  // a switch with nothing under it: "name:" or "name: {}"
            if (!body.is_mapping())
                return error("switches." + name, "", "a mapping (switches:, labels:)", line);
            auto children = body.get("switches");
            if (!children || children->kind() == yaml::Node::Kind::kEmpty)
                continue;
            if (!children->is_sequence())
                return error("switches." + name + ".switches", children->scalar(),
                             "a list of switch names", children->line());
            for (const auto &c : children->items()) {
                if (auto err = check_name("switches." + name + ".switches", c))
                    return err;
                const std::string child = c.scalar();
                if (child == name)
                    return error("switches." + name + ".switches", child,
                                 "switches other than itself", c.line());
                auto [it, fresh] = parent_of_.emplace(child, name);
                if (!fresh)
                    return error("switches." + name + ".switches", child,
                                 "a switch under one parent (already under " + it->second + ")",
                                 c.line());
                link(parent, switch_index(child));
            }
        }
        return std::nullopt;
    }

    // blocks: [{switch: leaf, nodes: [hostlist, ...], annotations: {.../domain: d}}, ...]
    std::optional<InputError> read_blocks(const yaml::Node &blocks) {
        if (!blocks.is_sequence())
            return error("blocks", blocks.scalar(), "a list of blocks", blocks.line());
        std::map<std::string, std::size_t> domain_index;  // name -> nvlink_domains index
        auto domain = [&](const std::string &name, const std::string &parent) -> NvlinkDomain & {
            auto [it, fresh] = domain_index.emplace(name, fabric_.nvlink_domains.size());
            if (fresh)
                fabric_.nvlink_domains.push_back(NvlinkDomain{name, {}, parent, 0, false});
            return fabric_.nvlink_domains[it->second];
        };
        int i = 0;
        for (const auto &b : blocks.items()) {
            const std::string where = "blocks[" + std::to_string(i++) + "]";
            if (!b.is_mapping())
                return error(where, b.scalar(), "a mapping (switch:, nodes:, annotations:)",
                             b.line());
            auto sw = b.get("switch");
            if (!sw)
                return error(where + ".switch", "", "the block's leaf switch", b.line());
            if (auto err = check_name(where + ".switch", *sw))
                return err;
            const int leaf = switch_index(sw->scalar());

            std::string dom, sub;
            if (auto ann = b.get("annotations"); ann && ann->is_mapping()) {
                for (const auto &[key, value] : ann->pairs()) {
                    if (key == "domain" || ends_with(key, "/domain"))
                        dom = value.scalar();
                    else if (key == "sub-domain" || ends_with(key, "/sub-domain"))
                        sub = value.scalar();
                }
            }
            FabricBlock block;
            block.name = !sub.empty() ? sub : !dom.empty() ? dom : sw->scalar();
            block.domain = !sub.empty() ? sub : dom;

            auto nodes = b.get("nodes");
            if (nodes && nodes->kind() != yaml::Node::Kind::kEmpty && !nodes->is_sequence())
                return error(where + ".nodes", nodes->scalar(), "a list of hostlists",
                             nodes->line());
            for (const auto &expr : nodes ? nodes->items() : std::vector<yaml::Node>{}) {
                auto names = expand_hostlist(expr.scalar(), where + ".nodes", kMaxHosts);
                if (!expr.is_scalar() || !names) {
                    InputError err =
                        names ? error(where + ".nodes", "", "a hostlist", 0) : names.error();
                    err.source = source_;
                    err.line = expr.line();
                    return err;
                }
                for (auto &host : *names) {
                    if (index_.count(host) && !hosts_.count(host))
                        return error(where + ".nodes", host, "host names, not a switch's",
                                     expr.line());
                    auto [it, fresh] = hosts_.emplace(host, where);
                    if (!fresh)
                        return error(where + ".nodes", host,
                                     "each host in one block (also in " + it->second + ")",
                                     expr.line());
                    if (hosts_.size() > kMaxHosts)
                        return error(where + ".nodes", host,
                                     "at most " + std::to_string(kMaxHosts) + " hosts",
                                     expr.line());
                    const int h = static_cast<int>(fabric_.nodes.size());
                    FabricNode n;
                    n.name = host;
                    fabric_.nodes.push_back(std::move(n));
                    index_.emplace(host, h);
                    link(leaf, h);
                    block.hosts.push_back(h);
                    if (!dom.empty())
                        domain(dom, "").hosts.push_back(h);
                    if (!sub.empty())
                        domain(sub, dom).hosts.push_back(h);
                }
            }
            fabric_.blocks.push_back(std::move(block));
        }
        return std::nullopt;
    }

    // Every switch reaches a root by its parents without meeting itself.
    std::optional<InputError> check_tree() const {
        for (const auto &[child, parent] : parent_of_) {
            std::set<std::string> seen{child};
            for (auto it = parent_of_.find(parent); it != parent_of_.end();
                 it = parent_of_.find(it->second)) {
                if (!seen.insert(it->first).second)
                    return error("switches", child, "a tree (this switch is its own ancestor)", 0);
            }
        }
        return std::nullopt;
    }

    std::string source_;
    double default_gbps_;
    Fabric fabric_;
    std::unordered_map<std::string, int> index_;          // switch and host names
    std::set<std::string> declared_;                      // switches with an entry
    std::map<std::string, std::string> parent_of_;        // switch -> its parent
    std::unordered_map<std::string, std::string> hosts_;  // host -> its block
};

}  // namespace

Parsed<Fabric> parse_topograph_model(std::string_view text, std::string_view source,
                                     double default_gbps) {
    auto doc = yaml::Document::parse(text, source);
    if (!doc)
        return doc.error();
    return ModelReader(source, default_gbps).read(doc->root());
}

Parsed<Fabric> load_topograph_model(const std::string &path, double default_gbps) {
    auto text = read_text_file(path);
    if (!text)
        return text.error();
    return parse_topograph_model(*text, path, default_gbps);
}

}  // namespace slurm_ai
