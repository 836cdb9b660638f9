// The cluster's network fabric: switches, hosts (HCAs) and the links between them, from
// Slurm's topology.conf, from `ibnetdiscover` output (with an optional GUID-to-hostname
// map), or from live InfiniBand discovery. Every loader returns Parsed<Fabric>: a fabric,
// or an InputError naming file, line and field. None throws on bad input.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "slurm_ai/common/input_error.hpp"

namespace slurm_ai {

// Width x speed of an InfiniBand link, e.g. "4xQDR", as a data rate per direction.
struct LinkRate {
    int width = 4;         // lanes: 1, 2, 4, 8 or 12
    std::string speed;     // SDR, DDR, QDR, FDR10, FDR, EDR, HDR, NDR, XDR
    double gbps = 0;       // data rate per direction in Gb/s (after line encoding)
    bool assumed = false;  // the source gave no rate: gbps is the reader's default
};
// Per-lane data rates: SDR 2, DDR 4, QDR 8, FDR10 10, FDR 13.64, EDR 25, HDR 50, NDR 100,
// XDR 200 Gb/s. Accepts "4xQDR", "4X QDR", "QDR" (width 4). Case-insensitive.
Parsed<LinkRate> parse_link_rate(std::string_view text);

struct FabricNode {
    std::string name;  // hostname for hosts (after the GUID map), "S-<guid>" or
                       // the SwitchName for switches
    std::string guid;  // node GUID as 16 hex digits, empty when unknown
    bool is_switch = false;
    std::string description;  // ibnetdiscover's node description, if any
    int ports = 0;            // port count, 0 when unknown
    int level = -1;           // switches: 0 = leaf (has hosts), else 1 + min level of a
                              // neighbouring switch nearer the hosts; hosts: -1
};

struct FabricLink {
    int a = -1, b = -1;          // indexes into Fabric::nodes
    int port_a = 0, port_b = 0;  // 0 when unknown (topology.conf)
    LinkRate rate;               // topology.conf links: width 0, speed empty, gbps set
    std::string device{};        // a host's end: its NIC's device name ("mlx5_0"), if known
    int rail = -1;               // a host's link to a leaf: the rail (infer_rails()), or -1
};

// Bandwidth a switch has towards its hosts and lower switches (down) and towards higher
// switches (up). Oversubscription is down/up; 0 for a switch with no uplinks (a root).
struct SwitchStats {
    double down_gbps = 0;
    double up_gbps = 0;
    double oversubscription = 0;
};

// A multi-node NVLink domain (a GB200 NVL72 rack, ...): hosts whose GPUs reach each other
// over NVLink. A two-level domain (topograph's domain and sub-domain annotations) is an
// entry for the outer domain and one per sub-domain, whose `parent` names the outer one.
struct NvlinkDomain {
    std::string name;
    std::vector<int> hosts;  // indexes into Fabric::nodes, in the source's order
    std::string parent;      // the outer domain's name, or empty
    double gpu_gbps = 0;     // NVLink bandwidth per GPU and direction in Gb/s; 0: unknown
    bool degraded = false;   // a member failed or is drained
};

// A base block of Slurm's topology/block plugin (topology.conf's BlockName= lines): hosts
// that Slurm keeps together, an NVLink domain as topograph writes them.
struct FabricBlock {
    std::string name;
    std::vector<int> hosts;  // indexes into Fabric::nodes
    std::string domain;      // the NVLink domain the block stands for, when the source says
};

struct Fabric {
    std::string source;  // file path, or "live"
    std::string format;  // "topology.conf", "ibnetdiscover", "live-ib", "topograph-model"
    std::vector<FabricNode> nodes;
    std::vector<FabricLink> links;
    std::vector<NvlinkDomain> nvlink_domains;
    std::vector<FabricBlock> blocks;
    std::vector<int> block_sizes;  // BlockSizes=, in hosts; empty: Slurm's default
    // Rails of a rail-optimized fabric (infer_rails()): each rail's leaf switches, in node
    // order. Empty where no host has NICs on two leaves.
    std::vector<std::vector<int>> rails;

    int find(std::string_view name) const;  // index or -1
    std::vector<int> switches() const;      // indexes, in node order
    std::vector<int> hosts() const;
    // Link indexes at each node (built by index_links(); loaders call it).
    std::vector<std::vector<int>> links_of;

    void index_links();
    // Sets FabricNode::level for every switch (BFS from the leaf switches); a switch that
    // no path of switches joins to a leaf keeps level -1.
    void infer_levels();
    // Down counts links to hosts and to lower-level switches, up links to higher-level
    // ones; links to a switch of the same or unknown level count in neither.
    SwitchStats switch_stats(int sw) const;
    int max_level() const;
    // Rails, from the hosts cabled to two or more leaf switches (after infer_levels()):
    // each such host's leaf links are numbered k = 0, 1, ... in the natural order of their
    // NIC device names (mlx5_2 before mlx5_10; unnamed ones after, by leaf); each leaf's
    // rail is the k most of its links have (the lower on a tie), so one host whose NICs
    // are named or cabled unlike the rest does not split a rail. Sets `rails` and every
    // host-to-leaf link's `rail`.
    void infer_rails();
    // The rail of a host's link to `leaf`, or -1.
    int rail_of_leaf(int leaf) const;
};

// A CA's node description as rdma-ndd sets it by default, "<hostname> <device>" ("dgx-01
// mlx5_0"), split in its two words; nullopt for any other description (the factory's
// "MT4123 ConnectX6 Mellanox Technologies", a switch's). The readers name a CA that the
// GUID map does not name by its host, so that a multi-rail host's CAs are one host.
struct CaDescription {
    std::string_view host, device;
};
std::optional<CaDescription> parse_ca_description(std::string_view description);

// Slurm's topology.conf, tree form: SwitchName=, Switches=, Nodes=, LinkSpeed= (read as
// Gb/s per link; links without it get default_gbps). Block form (topology/block, Slurm
// 23.11+): BlockName= with Nodes=, and BlockSizes= (a comma list of host counts) on a line
// of its own; each block becomes a leaf switch named after it, and with more than one
// block a root switch "block-root" joins them, so that the engine sees one tree. A file
// may hold both forms (a site switching plugins); a block then adds no switches. Comments
// (#) and line continuations (\) as Slurm allows. Unknown keys, a switch or block defined
// twice, a host in two blocks and references to undefined switches are errors naming the
// line.
// Keys are case-insensitive; a node under several switches gets a link to each. Two
// switches that list each other get one link (Slurm itself rejects that cycle as "not a
// tree"; this model is a graph and keeps it). At most 2^20 names per file.
Parsed<Fabric> parse_topology_conf(std::string_view text, std::string_view source,
                                   double default_gbps = 100.0);
Parsed<Fabric> load_topology_conf(const std::string &path, double default_gbps = 100.0);

// Writes topology.conf for a fabric: one SwitchName line per switch, in the fabric's
// switch order, with Nodes= (hostlist-compressed) and Switches= (links to other switches),
// and LinkSpeed= when all the switch's links share one rate.
// Switches= follows Slurm's tree convention: it names the neighbouring switches *below*
// the switch (lower level, as infer_levels() computes on a copy), so Slurm never sees a
// cycle. A link between two switches of the same level is listed once, under the one later
// in node order. "The switch's links" for LinkSpeed= are the ones its line declares (to its
// Nodes= and Switches=); the rate is rounded to whole Gb/s since Slurm reads an integer.
// Parallel links collapse to one; hosts on no switch and host-to-host links are left out.
std::string write_topology_conf(const Fabric &fabric);

// How write_topology_conf() names and introduces what it writes.
struct TopologyConfStyle {
    bool header = true;  // a first comment line naming the source
    // Switches renamed "switch.<level>.<n>" (level 1 = leaves, n counting from 1 in the
    // fabric's switch order), written from the top level down, each line after a comment
    // "# switch.<level>.<n>=<name>": the form topograph's generators write.
    bool level_names = false;
};
std::string write_topology_conf(const Fabric &fabric, const TopologyConfStyle &style);

// How write_block_conf() names the blocks and which sizes it allows.
struct BlockConfStyle {
    bool header = true;
    // A block's name from its first host's name: the first match of `name_pattern` (an
    // ECMAScript regular expression) with `name_format` ($1, $2 or ${1} for its groups).
    // Empty pattern: the block's own name. A block whose host does not match keeps its own.
    std::string name_pattern;
    std::string name_format;
    std::vector<int> sizes;  // BlockSizes=; empty: the fabric's, else no BlockSizes line
};
// Slurm's topology.conf for topology/block: one BlockName= line per block, hosts as a
// hostlist, after a comment "# <name>=<domain>" where the name is not the domain's; then
// BlockSizes=. The blocks are the fabric's own (a block topology.conf, a topograph model);
// without any, its NVLink domains that have no sub-domain; without those, its leaf
// switches. A Parsed error names a pattern that is no regular expression.
Parsed<std::string> write_block_conf(const Fabric &fabric, const BlockConfStyle &style);

// Slurm 25.05's topology.yaml: a list of topologies, each `topology: NAME`, an optional
// `cluster_default: true|false` and one of `tree: {switches: [{switch, children, nodes}]}`,
// `block: {block_sizes: [...], blocks: [{block, nodes}]}` or `flat: true`; nodes and
// children are hostlists (or lists of them). Read: the topology named `topology`, or else
// the tree and the block topology Slurm would use by default (of each kind the first with
// cluster_default: true, else the first), together, as a topology.conf with both forms.
// Unknown keys, a topology with no or two kinds, and what topology.conf refuses are errors
// naming the line and the field ("<topology>.tree.switch", ...).
Parsed<Fabric> parse_topology_yaml(std::string_view text, std::string_view source,
                                   double default_gbps = 100.0, std::string_view topology = {});
Parsed<Fabric> load_topology_yaml(const std::string &path, double default_gbps = 100.0,
                                  std::string_view topology = {});

// What write_topology_yaml() writes: a topology "tree" (cluster_default, the switches as
// write_topology_conf() writes them, level_names as there) where the fabric has switches,
// and a topology "block" (the blocks as write_block_conf() writes them, named by `blocks`)
// where it has blocks or NVLink domains; "flat" where it has neither.
struct TopologyYamlStyle {
    bool header = true;
    bool level_names = false;
    BlockConfStyle blocks;
};
Parsed<std::string> write_topology_yaml(const Fabric &fabric, const TopologyYamlStyle &style);

// A Clos fabric host by host: a CSV whose header names the host column and then the switch
// columns from the top level down (Alibaba's Lingjun topo.csv: ip,DSW,PSW,ASW), one row per
// host. A switch column whose names repeat under different parents (Lingjun's ToRs) names
// its switches "<parent>-<name>". Links get default_gbps (LinkRate::assumed). Errors name
// the column, the value and the line: a row with another number of values, a host on two
// rows, a name a host and a switch share.
Parsed<Fabric> parse_clos_csv(std::string_view text, std::string_view source,
                              double default_gbps = 100.0);
Parsed<Fabric> load_clos_csv(const std::string &path, double default_gbps = 100.0);
// Whether a file's first line is such a header (2 to 16 comma-separated identifiers).
bool looks_like_clos_csv(std::string_view first_line);

// GUID-to-hostname map, one "NAME HOSTNAME" per line, '#' comments. NAME is an
// ibnetdiscover node name ("H-0002c90300080e84") or a bare GUID ("0x0002c9..." or hex).
using GuidMap = std::map<std::string, std::string>;  // key: 16 lowercase hex digits
// Hostnames may be in double quotes (OFED node-name-map style); each must satisfy
// is_host_name(). A GUID mapped twice to different names is an error.
Parsed<GuidMap> parse_guid_map(std::string_view text, std::string_view source);
Parsed<GuidMap> load_guid_map(const std::string &path);
// A GUID as GuidMap keys it: "H-0002c90300080e84", "S-...", "R-...", "0x2c90300080e84" or
// bare hex (1 to 16 digits, any case) -> "0002c90300080e84". Errors name `field`.
Parsed<std::string> parse_guid(std::string_view text, std::string_view field);

// `ibnetdiscover` output (default format): Switch/Ca blocks with their port lines. Hosts
// are named by the map when it has their GUID, else by ibnetdiscover's "H-<guid>" name.
// Each physical link is added once although both of its ends list it; a node seen only in
// another node's port lines still becomes a node. HCAs the map gives the same hostname
// (a host with several HCAs) become one host with a link per HCA. Routers ("Rt" blocks,
// "R-<guid>" peers) are not part of the model and are skipped. A rate ibnetdiscover could
// not name ("4x???") gives a link of 0 Gb/s; any other unknown rate is an error.
Parsed<Fabric> parse_ibnetdiscover(std::string_view text, std::string_view source,
                                   const GuidMap *map = nullptr);
Parsed<Fabric> load_ibnetdiscover(const std::string &path, const GuidMap *map = nullptr);

// Live discovery through libibnetdisc from the first active HCA port. Without an HCA (or
// without permission to use umad) it returns an InputError whose message says so; it
// never crashes.
Parsed<Fabric> discover_ib_fabric(const GuidMap *map = nullptr);

// topograph's model YAML (its tests/models/*.yaml): `switches:` maps each switch to the
// switches under it, `blocks:` lists leaf switches with their hosts (hostlists) and
// annotations, where a key ending in "/domain" names the block's NVLink domain and one in
// "/sub-domain" its sub-domain. Links get default_gbps (LinkRate::assumed). Unknown keys
// are left alone (the format grows); a wrong type, a host in two blocks, a switch under
// two parents or a cycle is an error naming the line.
Parsed<Fabric> parse_topograph_model(std::string_view text, std::string_view source,
                                     double default_gbps = 100.0);
Parsed<Fabric> load_topograph_model(const std::string &path, double default_gbps = 100.0);

// {source, format, max_level, switches: [{name, guid, description, ports, level, down_gbps,
// up_gbps, oversubscription}], hosts: [{name, guid, description, ports}], links: [{a, b,
// port_a, port_b, rate, gbps, device, rail}], nvlink_domains: [{name, nodes, size, parent,
// gpu_gbps, degraded}], blocks: [{name, nodes, size, domain}], block_sizes, rails (a count,
// always), rail_leaves: [[leaf, ...], ...]}, other empty fields left out. Strings are
// printable ASCII (other bytes become '?'), so dump() never throws.
void to_json(nlohmann::json &j, const Fabric &f);

}  // namespace slurm_ai
