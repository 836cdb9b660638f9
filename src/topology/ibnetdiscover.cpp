// `ibnetdiscover` output (its default, non-grouped and grouped forms) read into the fabric
// model. The format is what infiniband-diags prints:
//   vendid=0x8f1                      (key=value lines open a block)
//   Switch  36 "S-0008f10500200b50"   # "description" enhanced port 0 lid 9 lmc 0
//   [1]  "S-0008f10500108c5c"[15]     # "peer description" lid 16 4xQDR
//   [4]  "H-003048c749cd0000"[1](3048c749cd0001)   # "peer description" lid 72 4xDDR
//   Ca   1 "H-0002c90300080d28"       # "description"
//   [1](2c90300080d29)  "S-0008f10500108bba"[28]  # lid 4 lmc 0 "peer" lid 7 4xQDR
// With -g, port numbers may carry "[ext N]" and Chassis/Hostname lines appear.
#include <algorithm>
#include <cstdint>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "slurm_ai/common/enum_names.hpp"
#include "slurm_ai/common/text_scan.hpp"
#include "slurm_ai/topology/fabric.hpp"

namespace slurm_ai {
namespace {

enum class Kind { kSwitch, kHost, kRouter };

struct NodeRef {
    Kind kind = Kind::kHost;
    std::string hex;  // 16 lowercase hex digits
    std::uint64_t guid = 0;
};

struct PortKey {
    std::uint64_t guid = 0;
    int port = 0;
    bool operator==(const PortKey &o) const { return guid == o.guid && port == o.port; }
};

struct PortKeyHash {
    std::size_t operator()(const PortKey &k) const {
        return std::hash<std::uint64_t>()(k.guid ^ (static_cast<std::uint64_t>(k.port) << 56) ^
                                          static_cast<std::uint64_t>(k.port));
    }
};

using text::is_blank;
using text::is_hex;
bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && is_blank(s.front()))
        s.remove_prefix(1);
    while (!s.empty() && is_blank(s.back()))
        s.remove_suffix(1);
    return s;
}

const char *kind_name(Kind k) {
    static constexpr std::string_view kNames[] = {"a switch", "a CA", "a router"};
    return enum_name(k, kNames).data();
}

class IbParser {
  public:
    IbParser(std::string_view source, const GuidMap *map) : source_(source), map_(map) {
        fabric_.source = source_;
        fabric_.format = "ibnetdiscover";
    }

    Parsed<Fabric> parse(std::string_view text) {
        std::size_t pos = 0;
        while (pos < text.size()) {
            std::size_t end = text.find('\n', pos);
            if (end == std::string_view::npos)
                end = text.size();
            std::string_view line = trim(text.substr(pos, end - pos));
            pos = end + 1;
            ++line_;
            if (auto err = parse_line(line))
                return *err;
        }
        name_hosts();
        fabric_.index_links();
        fabric_.infer_levels();
        fabric_.infer_rails();
        return std::move(fabric_);
    }

  private:
    // The block whose port lines are being read.
    struct Block {
        NodeRef node;
        int index = -1;  // -1 for a router, whose links are skipped
        int ports = 0;
    };

    InputError error(std::string field, std::string_view value, std::string expected) const {
        return InputError{std::move(field), std::string(value), std::move(expected), source_,
                          line_};
    }

    std::optional<InputError> parse_line(std::string_view line) {
        if (line.empty()) {
            block_.reset();
            return std::nullopt;
        }
        if (line.front() == '#')
            return std::nullopt;
        if (line.front() == '[')
            return port_line(line);

        std::size_t word_end = 0;
        while (word_end < line.size() &&
               (is_hex(line[word_end]) || (line[word_end] >= 'A' && line[word_end] <= 'Z') ||
                (line[word_end] >= 'a' && line[word_end] <= 'z') || line[word_end] == '_' ||
                line[word_end] == '-' || line[word_end] == ':'))
            ++word_end;
        std::string_view word = line.substr(0, word_end);
        if (word_end < line.size() && line[word_end] == '=') {  // vendid=, switchguid=, ...
            block_.reset();
            return std::nullopt;
        }
        if (word == "Switch")
            return header(line.substr(word_end), Kind::kSwitch);
        if (word == "Ca" || word == "Hca" || word == "CA" || word == "HCA")
            return header(line.substr(word_end), Kind::kHost);
        if (word == "Rt" || word == "Router")
            return header(line.substr(word_end), Kind::kRouter);
        if (word == "Chassis" || word == "Hostname:" || line == "Non-Chassis Nodes") {
            block_.reset();
            return std::nullopt;
        }
        return error("line", line,
                     "a block header (Switch, Ca or Rt), a port line \"[port] ...\", key=value "
                     "or a # comment");
    }

    // `s` starts at a '"'; returns the text up to the next '"' and moves past it.
    std::optional<std::string_view> quoted(std::string_view &s) {
        std::size_t close = s.find('"', 1);
        if (close == std::string_view::npos)
            return std::nullopt;
        std::string_view inside = s.substr(1, close - 1);
        s.remove_prefix(close + 1);
        return inside;
    }

    Parsed<NodeRef> node_ref(std::string_view name) {
        NodeRef ref;
        if (name.size() == 18 && name[1] == '-' &&
            (name[0] == 'S' || name[0] == 'H' || name[0] == 'R')) {
            ref.kind = name[0] == 'S'   ? Kind::kSwitch
                       : name[0] == 'H' ? Kind::kHost
                                        : Kind::kRouter;
            bool ok = true;
            for (char c : name.substr(2)) {
                ok = ok && is_hex(c);
                if (ok) {
                    char l = c >= 'A' && c <= 'F' ? static_cast<char>(c - 'A' + 'a') : c;
                    ref.hex += l;
                    ref.guid = ref.guid << 4 |
                               static_cast<std::uint64_t>(is_digit(l) ? l - '0' : l - 'a' + 10);
                }
            }
            if (ok)
                return ref;
        }
        return error("node", name, "a node name S-, H- or R- and 16 hex digits");
    }

    // "[12]" at the front of s; moves past it.
    Parsed<int> port_number(std::string_view &s, std::string_view what) {
        std::size_t i = 1;
        int port = 0;
        while (i < s.size() && is_digit(s[i]) && i <= 3) {
            port = port * 10 + (s[i] - '0');
            ++i;
        }
        if (s.empty() || s[0] != '[' || i == 1 || i >= s.size() || s[i] != ']' || port < 1 ||
            port > 255) {
            std::size_t close = s.find(']');
            return error(std::string(what),
                         s.substr(0, close == std::string_view::npos ? s.size() : close + 1),
                         "a port number from 1 to 255 in brackets, e.g. [12]");
        }
        s.remove_prefix(i + 1);
        return port;
    }

    // After a port number: optional "[ext N]" groups and a "(portguid)".
    std::optional<InputError> port_extras(std::string_view &s) {
        while (!s.empty() && s.front() == '[') {
            std::size_t close = s.find(']');
            if (close == std::string_view::npos)
                return error("port", s, "a closing ']'");
            s.remove_prefix(close + 1);
        }
        s = trim(s);
        if (!s.empty() && s.front() == '(') {
            std::size_t close = s.find(')');
            if (close == std::string_view::npos)
                return error("port guid", s, "a closing ')'");
            std::string_view guid = s.substr(1, close - 1);
            if (guid.empty() || guid.size() > 16 || !std::all_of(guid.begin(), guid.end(), is_hex))
                return error("port guid", guid, "a port GUID of 1 to 16 hex digits");
            s.remove_prefix(close + 1);
        }
        return std::nullopt;
    }

    Parsed<int> node_for(const NodeRef &ref) {
        auto [kind_it, fresh] = kind_of_.emplace(ref.guid, ref.kind);
        if (!fresh && kind_it->second != ref.kind) {
            return error("node", ref.hex,
                         std::string("one kind of node per GUID: it was ") +
                             kind_name(kind_it->second) + " before");
        }
        if (ref.kind == Kind::kRouter)
            return -1;
        if (auto it = by_guid_.find(ref.guid); it != by_guid_.end())
            return it->second;

        FabricNode node;
        node.guid = ref.hex;
        node.is_switch = ref.kind == Kind::kSwitch;
        node.name = (node.is_switch ? "S-" : "H-") + ref.hex;
        if (!node.is_switch && map_) {
            if (auto m = map_->find(ref.hex); m != map_->end())
                node.name = m->second;
        }
        auto [name_it, added] = by_name_.emplace(node.name, static_cast<int>(fabric_.nodes.size()));
        if (!added) {
            // Several HCAs that the map names alike are one host with several links.
            const auto &other = fabric_.nodes[static_cast<std::size_t>(name_it->second)];
            if (other.is_switch || node.is_switch)
                return error("node", node.name, "a host name that is not also a switch's");
            by_guid_.emplace(ref.guid, name_it->second);
            return name_it->second;
        }
        by_guid_.emplace(ref.guid, name_it->second);
        fabric_.nodes.push_back(std::move(node));
        return name_it->second;
    }

    std::optional<InputError> header(std::string_view rest, Kind kind) {
        std::string_view s = trim(rest);
        int ports = 0;
        std::size_t i = 0;
        while (i < s.size() && is_digit(s[i]) && i < 3) {
            ports = ports * 10 + (s[i] - '0');
            ++i;
        }
        if (i == 0 || (i < s.size() && !is_blank(s[i]) && s[i] != '"') || ports < 1 || ports > 255)
            return error("ports", s.substr(0, s.find_first_of(" \t\"")),
                         "a port count from 1 to 255 after the node type");
        s = trim(s.substr(i));
        if (s.empty() || s.front() != '"')
            return error("node", s, "a quoted node name such as \"S-0008f10500200b50\"");
        auto name = quoted(s);
        if (!name)
            return error("node", s, "a closing '\"'");
        auto ref = node_ref(*name);
        if (!ref)
            return ref.error();
        if (ref->kind != kind) {
            return error("node", *name,
                         kind == Kind::kSwitch ? "an S-<guid> name in a Switch block"
                         : kind == Kind::kHost ? "an H-<guid> name in a Ca block"
                                               : "an R-<guid> name in an Rt block");
        }
        if (auto [it, fresh] = block_line_.emplace(ref->guid, line_); !fresh) {
            return error(
                "node", *name,
                "one block per node (its first is at line " + std::to_string(it->second) + ")");
        }

        std::string description;
        if (std::size_t hash = s.find('#'); hash != std::string_view::npos) {
            std::string_view comment = s.substr(hash + 1);
            std::size_t open = comment.find('"');
            if (open != std::string_view::npos) {
                std::size_t close = comment.rfind('"');
                if (close == open)
                    return error("description", comment.substr(open), "a closing '\"'");
                description = std::string(comment.substr(open + 1, close - open - 1));
            }
        }

        auto index = node_for(*ref);
        if (!index)
            return index.error();
        if (kind == Kind::kHost)
            hca_description_[ref->guid] = description;
        if (index.value() >= 0) {
            auto &node = fabric_.nodes[static_cast<std::size_t>(index.value())];
            node.ports = ports;
            node.description = std::move(description);
        }
        block_ = Block{*ref, index.value(), ports};
        return std::nullopt;
    }

    std::optional<InputError> port_line(std::string_view line) {
        if (!block_)
            return error("port", line, "port lines only after a Switch, Ca or Rt header");
        std::string_view s = line;
        auto local = port_number(s, "port");
        if (!local)
            return local.error();
        if (local.value() > block_->ports) {
            return error("port", line.substr(0, line.find(']') + 1),
                         "a port number from 1 to " + std::to_string(block_->ports) +
                             ", the node's port count");
        }
        if (auto err = port_extras(s))
            return err;
        s = trim(s);
        if (s.empty() || s.front() != '"')
            return error("node", s, "the peer's quoted name, e.g. \"S-0008f10500108c5c\"");
        auto name = quoted(s);
        if (!name)
            return error("node", s, "a closing '\"'");
        auto peer = node_ref(*name);
        if (!peer)
            return peer.error();
        auto remote = port_number(s, "peer port");
        if (!remote)
            return remote.error();
        if (auto err = port_extras(s))
            return err;
        s = trim(s);
        if (s.empty() || s.front() != '#')
            return error("rate", s, "'# ... lid <lid> <rate>' after the peer");

        // The peer's description is in quotes; lid and rate follow its closing quote.
        std::string_view comment = s.substr(1);
        std::string_view description;
        std::size_t open = comment.find('"');
        if (open != std::string_view::npos) {
            std::size_t close = comment.rfind('"');
            if (close == open)
                return error("description", comment.substr(open), "a closing '\"'");
            description = comment.substr(open + 1, close - open - 1);
            comment.remove_prefix(close + 1);
        }
        std::string_view rate_text;
        for (bool skip_next = false;;) {
            comment = trim(comment);
            if (comment.empty())
                break;
            std::size_t end = 0;
            while (end < comment.size() && !is_blank(comment[end]))
                ++end;
            std::string_view token = comment.substr(0, end);
            comment.remove_prefix(end);
            if (skip_next) {
                skip_next = false;
            } else if (token == "lid" || token == "lmc") {
                skip_next = true;
            } else {
                rate_text = token;
                break;
            }
        }
        if (rate_text.empty())
            return error("rate", s, "a link rate such as 4xQDR after the peer's lid");
        auto rate = link_rate(rate_text);
        if (!rate)
            return rate.error();

        auto peer_index = node_for(peer.value());
        if (!peer_index)
            return peer_index.error();
        if (peer->kind == Kind::kHost)
            hca_description_.emplace(peer->guid, description);  // its own block's wins
        if (peer_index.value() >= 0) {
            auto &node = fabric_.nodes[static_cast<std::size_t>(peer_index.value())];
            if (node.description.empty())
                node.description = std::string(description);
        }
        return add_link(local.value(), peer.value(), peer_index.value(), remote.value(),
                        std::move(rate).value());
    }

    // ibnetdiscover prints "??" and "???" for widths and speeds it cannot name.
    Parsed<LinkRate> link_rate(std::string_view text) {
        if (text.find('?') != std::string_view::npos) {
            LinkRate unknown;
            unknown.width = 0;
            for (int w : {12, 1, 2, 4, 8}) {
                std::string prefix = std::to_string(w) + "x";
                if (text.substr(0, prefix.size()) == prefix)
                    unknown.width = w;
            }
            return unknown;
        }
        auto rate = parse_link_rate(text);
        if (!rate)
            return error("rate", text, rate.error().expected);
        return rate;
    }

    std::optional<InputError> add_link(int local_port, const NodeRef &peer, int peer_index,
                                       int peer_port, LinkRate rate) {
        PortKey a{block_->node.guid, local_port};
        PortKey b{peer.guid, peer_port};
        if (a == b)
            return error("peer port", std::to_string(peer_port), "a port other than itself");
        auto linked_elsewhere = [&](const PortKey &k, const PortKey &other) {
            auto it = peer_.find(k);
            return it != peer_.end() && !(it->second == other);
        };
        if (linked_elsewhere(a, b) || linked_elsewhere(b, a)) {
            return error("port", std::to_string(local_port),
                         "each port in one link only: this link's ends are already linked "
                         "elsewhere");
        }
        // Both ends print every link; the second sighting adds nothing.
        if (!peer_.emplace(a, b).second)
            return std::nullopt;
        peer_.emplace(b, a);
        if (block_->index < 0 || peer_index < 0)
            return std::nullopt;  // a router's link
        fabric_.links.push_back(
            {block_->index, peer_index, local_port, peer_port, std::move(rate)});
        link_hca_.push_back(block_->node.kind == Kind::kHost ? block_->node.guid
                            : peer.kind == Kind::kHost       ? peer.guid
                                                             : 0);
        return std::nullopt;
    }

    // Each host link learns its NIC's device name from that CA's description; CAs that
    // the GUID map does not name, and whose descriptions name one host, become that host,
    // with a link per CA (the NICs of a multi-rail host); SHARP aggregation nodes and
    // their links are left out.
    void name_hosts() {
        for (std::size_t i = 0; i < fabric_.links.size(); ++i)
            if (auto it = hca_description_.find(link_hca_[i]); it != hca_description_.end())
                if (auto ca = parse_ca_description(it->second))
                    fabric_.links[i].device = std::string(ca->device);

        std::vector<int> target(fabric_.nodes.size());
        std::vector<FabricNode> kept;
        std::unordered_map<std::string, int> kept_index;
        std::unordered_set<std::string> switch_names;  // a host never takes one of these
        for (const auto &n : fabric_.nodes)
            if (n.is_switch)
                switch_names.insert(n.name);
        for (std::size_t i = 0; i < fabric_.nodes.size(); ++i) {
            FabricNode &n = fabric_.nodes[i];
            if (!n.is_switch && is_aggregation_node(n.description)) {
                target[i] = -1;
                continue;
            }
            if (!n.is_switch && n.name == "H-" + n.guid)
                if (auto ca = parse_ca_description(n.description))
                    if (!switch_names.count(std::string(ca->host)))
                        n.name = std::string(ca->host);
            auto [it, fresh] = kept_index.emplace(n.name, static_cast<int>(kept.size()));
            if (fresh)
                kept.push_back(std::move(n));
            else
                kept[static_cast<std::size_t>(it->second)].ports += n.ports;
            target[i] = it->second;
        }
        fabric_.nodes = std::move(kept);
        std::vector<FabricLink> links;
        links.reserve(fabric_.links.size());
        for (auto &l : fabric_.links) {
            l.a = target[static_cast<std::size_t>(l.a)];
            l.b = target[static_cast<std::size_t>(l.b)];
            if (l.a >= 0 && l.b >= 0)
                links.push_back(std::move(l));
        }
        fabric_.links = std::move(links);
    }

    // A switch's SHARP aggregation node shows as a CA cabled to that switch: part of the
    // switch, not a host (a spine with one would look like a leaf).
    static bool is_aggregation_node(std::string_view description) {
        return description.find("Aggregation Node") != std::string_view::npos;
    }

    std::string source_;
    const GuidMap *map_;
    Fabric fabric_;
    std::unordered_map<std::uint64_t, std::string> hca_description_;  // CA GUID -> description
    std::vector<std::uint64_t> link_hca_;  // per link of fabric_: its CA end's GUID, or 0
    int line_ = 0;
    std::optional<Block> block_;
    std::unordered_map<std::uint64_t, int> by_guid_;
    std::unordered_map<std::uint64_t, Kind> kind_of_;
    std::unordered_map<std::uint64_t, int> block_line_;
    std::unordered_map<std::string, int> by_name_;
    std::unordered_map<PortKey, PortKey, PortKeyHash> peer_;
};

}  // namespace

Parsed<Fabric> parse_ibnetdiscover(std::string_view text, std::string_view source,
                                   const GuidMap *map) {
    return IbParser(source, map).parse(text);
}

Parsed<Fabric> load_ibnetdiscover(const std::string &path, const GuidMap *map) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return InputError{"file", path, "a readable ibnetdiscover output file", path, 0};
    std::ostringstream text;
    text << in.rdbuf();
    return parse_ibnetdiscover(text.str(), path, map);
}

}  // namespace slurm_ai
