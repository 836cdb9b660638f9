// Slurm's topology.conf for the topology/tree plugin (the keys of Slurm 22.05) and the
// topology/block plugin (23.11+), read into the fabric model; the tree form written from it
// (block_conf.cpp writes the block form).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "slurm_ai/common/hostlist.hpp"
#include "slurm_ai/common/text_scan.hpp"
#include "slurm_ai/topology/fabric.hpp"
#include "topology_decls.hpp"

namespace slurm_ai {
namespace {

using text::lower;
using text::printable;


struct LogicalLine {
    std::string text;
    int line = 0;  // first physical line
};

using text::is_blank;

// Slurm's reading of a config file: '#' starts a comment unless escaped as "\#", a '\' at
// the end of a line joins the next line to it (with nothing in between), and "\x" stands
// for x.
std::vector<LogicalLine> logical_lines(std::string_view text) {
    std::vector<LogicalLine> out;
    std::string pending;
    int pending_line = 0;
    text::LineReader lines(text);
    for (std::string_view raw; lines.next(raw);) {
        const int line_no = lines.number();

        std::size_t backslashes = 0;
        std::size_t cut = raw.size();
        for (std::size_t i = 0; i < raw.size(); ++i) {
            if (raw[i] == '#' && backslashes % 2 == 0) {
                cut = i;
                break;
            }
            backslashes = raw[i] == '\\' ? backslashes + 1 : 0;
        }
        std::string_view body = raw.substr(0, cut);
        while (!body.empty() && is_blank(body.back()))
            body.remove_suffix(1);

        std::size_t trailing = 0;
        while (trailing < body.size() && body[body.size() - 1 - trailing] == '\\')
            ++trailing;
        bool continued = trailing % 2 == 1;
        if (continued)
            body.remove_suffix(1);

        if (pending.empty() && pending_line == 0)
            pending_line = line_no;
        pending += body;
        if (!continued) {
            out.push_back({std::move(pending), pending_line});
            pending.clear();
            pending_line = 0;
        }
    }
    if (pending_line != 0)
        out.push_back({std::move(pending), pending_line});

    for (auto &l : out) {
        std::string unescaped;
        for (std::size_t i = 0; i < l.text.size(); ++i) {
            if (l.text[i] == '\\' && i + 1 < l.text.size())
                ++i;
            unescaped += l.text[i];
        }
        l.text = std::move(unescaped);
    }
    return out;
}

class ConfParser {
  public:
    ConfParser(std::string_view source, double default_gbps)
        : source_(source), default_gbps_(default_gbps) {}

    Parsed<Fabric> parse(std::string_view text) {
        for (const auto &line : logical_lines(text)) {
            if (auto err = parse_line(line))
                return *err;
        }
        return build_topology(std::move(decls_), source_, "topology.conf", default_gbps_);
    }

  private:
    InputError error(std::string field, std::string_view value, std::string expected,
                     int line) const {
        return InputError{std::move(field), std::string(value), std::move(expected),
                          std::string(source_), line};
    }

    // A Nodes= or Switches= hostlist into `out`, counting names against the file's limit.
    std::optional<InputError> expand(const std::string &key, const std::string &value, int line,
                                     std::vector<std::string> &out) {
        auto names = expand_hostlist(value, key, kMaxHostNames);
        if (!names) {
            auto err = names.error();
            err.source = source_;
            err.line = line;
            return err;
        }
        names_ += names->size();
        if (names_ > kMaxHostNames)
            return error(key, value,
                         "at most " + std::to_string(kMaxHostNames) +
                             " names in the Nodes= and Switches= of one file",
                         line);
        out = std::move(names).value();
        return std::nullopt;
    }

    std::optional<InputError> parse_line(const LogicalLine &line) {
        const std::string &t = line.text;
        std::size_t i = 0;
        SwitchDecl decl;
        decl.line = line.line;
        std::vector<std::pair<std::string, std::string>> keys;  // (original key, value)
        std::set<std::string> seen;
        while (true) {
            while (i < t.size() && is_blank(t[i]))
                ++i;
            if (i == t.size())
                break;
            std::size_t start = i;
            while (i < t.size() && t[i] != '=' && !is_blank(t[i]))
                ++i;
            std::string key = t.substr(start, i - start);
            if (i == t.size() || t[i] != '=')
                return error(key, "", "Key=value (SwitchName=, BlockName=, BlockSizes=, ...)",
                             line.line);
            ++i;
            std::string value;
            if (i < t.size() && t[i] == '"') {
                std::size_t close = t.find('"', i + 1);
                if (close == std::string::npos)
                    return error(key, t.substr(i), "a closing '\"'", line.line);
                value = t.substr(i + 1, close - i - 1);
                i = close + 1;
            } else {
                start = i;
                while (i < t.size() && !is_blank(t[i]))
                    ++i;
                value = t.substr(start, i - start);
            }
            if (!seen.insert(lower(key)).second)
                return error(key, value, "each key once per line", line.line);
            keys.emplace_back(std::move(key), std::move(value));
        }
        if (keys.empty())
            return std::nullopt;
        // What the line declares is told by its first key, as Slurm's parser does.
        const std::string head = lower(keys.front().first);
        if (head == "blockname")
            return parse_block(keys, line.line);
        if (head == "blocksizes")
            return parse_block_sizes(keys, line.line);
        for (const auto &[key, value] : keys) {
            std::string k = lower(key);
            if (k != "switchname" && k != "switches" && k != "nodes" && k != "linkspeed") {
                return error(key, value,
                             "one of the keys SwitchName, Switches, Nodes, LinkSpeed (or a "
                             "BlockName= or BlockSizes= line)",
                             line.line);
            }
            if (auto err = apply(decl, k, key, value, line.line))
                return err;
        }
        if (!seen.count("switchname"))
            return error("SwitchName", "", "a SwitchName= on every line", line.line);

        decls_.switches.push_back(std::move(decl));
        return std::nullopt;
    }

    // BlockName=NAME Nodes=HOSTLIST
    std::optional<InputError> parse_block(
        const std::vector<std::pair<std::string, std::string>> &keys, int line) {
        BlockDecl block;
        block.line = line;
        for (const auto &[key, value] : keys) {
            std::string k = lower(key);
            if (k == "blockname") {
                if (!is_host_name(value) || value.size() > kSlurmNameMax)
                    return error(key, value, name_rule("a block name"), line);
                block.name = value;
            } else if (k == "nodes") {
                if (auto err = expand(key, value, line, block.nodes))
                    return err;
            } else {
                return error(key, value, "the keys BlockName and Nodes on a BlockName= line", line);
            }
        }
        decls_.blocks.push_back(std::move(block));
        return std::nullopt;
    }

    // BlockSizes=8,16,32: host counts, each a whole number from 1.
    std::optional<InputError> parse_block_sizes(
        const std::vector<std::pair<std::string, std::string>> &keys, int line) {
        if (keys.size() != 1)
            return error(keys[1].first, keys[1].second, "BlockSizes= alone on its line", line);
        if (!decls_.block_sizes.empty())
            return error(keys[0].first, keys[0].second, "one BlockSizes= line", line);
        std::string_view rest = keys[0].second;
        while (true) {
            auto comma = rest.find(',');
            std::string_view item = rest.substr(0, comma);
            int n = 0;
            bool ok = !item.empty() && item.size() <= 7;
            for (char c : item) {
                ok = ok && c >= '0' && c <= '9';
                if (ok)
                    n = n * 10 + (c - '0');
            }
            if (!ok || n < 1)
                return error(keys[0].first, keys[0].second,
                             "a comma list of block sizes in nodes, e.g. 8,16,32", line);
            decls_.block_sizes.push_back(n);
            if (comma == std::string_view::npos)
                break;
            rest.remove_prefix(comma + 1);
        }
        return std::nullopt;
    }

    std::optional<InputError> apply(SwitchDecl &decl, const std::string &k, const std::string &key,
                                    const std::string &value, int line) {
        if (k == "switchname") {
            if (!is_host_name(value) || value.size() > kSlurmNameMax) {
                return error(key, value, name_rule("a switch name"), line);
            }
            decl.name = value;
        } else if (k == "nodes" || k == "switches") {
            if (auto err = expand(key, value, line, k == "nodes" ? decl.nodes : decl.children))
                return err;
        } else {  // linkspeed: Slurm reads an unsigned 32-bit integer
            std::uint64_t speed = 0;
            bool ok = !value.empty() && value.size() <= 10;
            for (char c : value) {
                ok = ok && c >= '0' && c <= '9';
                if (ok)
                    speed = speed * 10 + static_cast<std::uint64_t>(c - '0');
            }
            if (!ok || speed > UINT32_MAX) {
                return error(key, value, "a whole number of Gb/s per link from 0 to 4294967295",
                             line);
            }
            decl.link_speed = static_cast<std::uint32_t>(speed);
        }
        return std::nullopt;
    }

    std::string source_;
    double default_gbps_;
    TopologyDecls decls_;
    std::size_t names_ = 0;
};

}  // namespace

Parsed<Fabric> parse_topology_conf(std::string_view text, std::string_view source,
                                   double default_gbps) {
    return ConfParser(source, default_gbps).parse(text);
}

Parsed<Fabric> load_topology_conf(const std::string &path, double default_gbps) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return InputError{"file", path, "a readable topology.conf", path, 0};
    std::ostringstream text;
    text << in.rdbuf();
    return parse_topology_conf(text.str(), path, default_gbps);
}

std::string write_topology_conf(const Fabric &fabric) {
    return write_topology_conf(fabric, TopologyConfStyle{});
}

std::vector<SwitchDecl> declare_tree(const Fabric &fabric, bool level_names) {
    Fabric f = fabric;
    f.index_links();
    f.infer_levels();

    // (level, node index) orders the switches totally, so no two name each other.
    auto below = [&](int upper, int lower) {
        const auto &u = f.nodes[static_cast<std::size_t>(upper)];
        const auto &l = f.nodes[static_cast<std::size_t>(lower)];
        return std::make_pair(l.level, lower) < std::make_pair(u.level, upper);
    };

    std::vector<std::string> name(f.nodes.size());
    for (std::size_t i = 0; i < f.nodes.size(); ++i)
        name[i] = f.nodes[i].name;
    std::vector<int> order = f.switches();
    if (level_names) {
        // Level 1 = leaves; a switch no path joins to a leaf is level 0.
        std::map<int, int> counted;
        for (int sw : order) {
            const int level = f.nodes[static_cast<std::size_t>(sw)].level + 1;
            name[static_cast<std::size_t>(sw)] =
                "switch." + std::to_string(level) + "." + std::to_string(++counted[level]);
        }
        std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
            return f.nodes[static_cast<std::size_t>(a)].level >
                   f.nodes[static_cast<std::size_t>(b)].level;
        });
    }

    std::vector<SwitchDecl> out;
    for (int sw : order) {
        SwitchDecl d;
        d.name = name[static_cast<std::size_t>(sw)];
        if (level_names)
            d.was = f.nodes[static_cast<std::size_t>(sw)].name;
        std::set<int> listed;
        double rate = -1;
        bool one_rate = true;
        for (int li : f.links_of[static_cast<std::size_t>(sw)]) {
            const auto &l = f.links[static_cast<std::size_t>(li)];
            const int other = l.a == sw ? l.b : l.a;
            if (other == sw)
                continue;
            const auto &o = f.nodes[static_cast<std::size_t>(other)];
            if (o.is_switch && !below(sw, other))
                continue;
            if (listed.insert(other).second)
                (o.is_switch ? d.children : d.nodes)
                    .push_back(name[static_cast<std::size_t>(other)]);
            if ((rate >= 0 && rate != l.rate.gbps) || l.rate.assumed)
                one_rate = false;
            rate = l.rate.gbps;
        }
        if (one_rate && rate >= 0.5 && rate < 4294967295.5)
            d.link_speed = static_cast<std::uint32_t>(std::llround(rate));
        out.push_back(std::move(d));
    }
    return out;
}

std::string write_topology_conf(const Fabric &fabric, const TopologyConfStyle &style) {
    std::string out;
    if (style.header)
        out = "# topology.conf for Slurm's topology/tree plugin, written by slurm_ai from " +
              printable(fabric.source) + " (" + printable(fabric.format) + ")\n";
    for (auto &d : declare_tree(fabric, style.level_names)) {
        if (!d.was.empty())
            out += "# " + d.name + "=" + printable(d.was) + "\n";
        out += "SwitchName=" + d.name;
        if (!d.children.empty())
            out += " Switches=" + compress_hostlist(std::move(d.children));
        if (!d.nodes.empty())
            out += " Nodes=" + compress_hostlist(std::move(d.nodes));
        if (d.link_speed > 0)
            out += " LinkSpeed=" + std::to_string(d.link_speed);
        out += '\n';
    }
    return out;
}

}  // namespace slurm_ai
