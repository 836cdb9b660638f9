// ai-topo: discover, show, convert, draw and query the topologies the suite places jobs
// on. Every subcommand prints a human-readable answer, or JSON with --json. Exit status:
// 0 success, 1 bad input (the message names the file, line and field), 2 bad usage.
#include <iostream>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "bad_input.hpp"

#include "graphviz.hpp"
#include "slurm_ai/common/file_io.hpp"
#include "slurm_ai/common/hostlist.hpp"
#include "slurm_ai/metrics/cluster_map.hpp"
#include "slurm_ai/topology/cluster_files.hpp"
#include "slurm_ai/topology/gpu_fabric.hpp"
#include "slurm_ai/topology/gres_conf.hpp"
#include "slurm_ai/topology/topology_file.hpp"
#include "summary.hpp"

using nlohmann::json;
using namespace slurm_ai;

namespace {

using cli::BadInput;
using cli::take;

std::optional<GuidMap> load_map(const std::string &path) {
    if (path.empty())
        return std::nullopt;
    return take(load_guid_map(path));
}

std::string kind_of(const TopologyFile &f) {
    return std::holds_alternative<NodeTopology>(f) ? "node" : "fabric";
}

json file_json(const TopologyFile &f) {
    json j;
    std::visit([&](const auto &v) { j = v; }, f);
    return j;
}

std::string fmt_gbs(double gbs) {
    return fmt::format("{:g} GB/s ({:g} Gb/s)", gbs, gbs * 8);
}

// --- subcommands --------------------------------------------------------------------

int cmd_show(const std::vector<std::string> &files, const std::string &map_path, bool as_json) {
    auto map = load_map(map_path);
    json all = json::array();
    for (const auto &path : files) {
        // Read once: nvidia-smi's GPU fabric reports, or any topology file.
        const std::string text = take(read_text_file(path));
        if (looks_like_gpu_fabric(text)) {
            const auto node = take(parse_gpu_fabric(text, path));
            if (as_json)
                all.push_back({{"file", path}, {"kind", "gpu-fabric"}, {"topology", node}});
            else
                std::cout << cli::summarize(node);
            continue;
        }
        auto f = take(parse_topology_file(text, path, map ? &*map : nullptr));
        if (as_json)
            all.push_back({{"file", path}, {"kind", kind_of(f)}, {"topology", file_json(f)}});
        else
            std::visit([](const auto &v) { std::cout << cli::summarize(v); }, f);
    }
    if (as_json)
        std::cout << all.dump(2) << '\n';
    return 0;
}

int cmd_discover(bool as_json) {
    auto node = take(discover_local_node());
    auto fabric = discover_ib_fabric();
    auto gpu_fabric = discover_gpu_fabric();
    if (as_json) {
        json j{{"node", node}};
        if (fabric)
            j["fabric"] = fabric.value();
        else
            j["fabric_error"] = fabric.error().message();
        if (gpu_fabric)
            j["gpu_fabric"] = gpu_fabric.value();
        else
            j["gpu_fabric_error"] = gpu_fabric.error().message();
        std::cout << j.dump(2) << '\n';
        return 0;
    }
    std::cout << cli::summarize(node);
    if (fabric)
        std::cout << cli::summarize(fabric.value());
    else
        std::cout << "fabric: not discovered: " << fabric.error().message() << '\n';
    if (gpu_fabric)
        std::cout << cli::summarize(gpu_fabric.value());
    else
        std::cout << "GPU fabric: not discovered: " << gpu_fabric.error().message() << '\n';
    return 0;
}

// Writes a generated file's text to --output when given, then prints the result: JSON
// (the text under `key`), the text itself, or what was written where.
void emit(const std::string &text, const std::string &output, bool as_json, const char *key, json j,
          const std::string &summary) {
    if (!output.empty()) {
        try {
            write_output_file(output, text);
        } catch (const std::runtime_error &) {
            throw BadInput{"--output='" + output + "': expected a writable file"};
        }
    }
    if (as_json) {
        j[key] = text;
        if (!output.empty())
            j["output"] = output;
        std::cout << j.dump(2) << '\n';
    } else if (output.empty()) {
        std::cout << text;
    } else {
        std::cout << fmt::format("wrote {}: {}\n", output, summary);
    }
}

struct ConvertArgs {
    std::string to = "tree";
    std::string switch_names = "model";
    std::vector<std::string> block_name;  // REGEX FORMAT
    std::vector<int> block_sizes;
    bool no_header = false;
};

// NVLink domains from hosts' GPU fabric reports, as ai_select.conf, topology.conf (block)
// or topology.yaml lines.
int cmd_domains(const std::string &input, const std::string &output, const ConvertArgs &args,
                bool as_json) {
    const auto hosts = take(load_host_gpu_fabrics(input));
    const Fabric fabric = take(fabric_from_gpu_fabrics(hosts, input));
    json domains = json::array(), left_out = json::array();
    for (const auto &h : hosts)
        if (!h.problem.empty()) {
            std::cerr << fmt::format("ai-topo: {}: left out of every NVLink domain: {}\n",
                                     h.host, h.problem);
            left_out.push_back({{"host", h.host}, {"problem", h.problem}});
        }
    BlockConfStyle blocks;
    blocks.header = !args.no_header;
    blocks.sizes = args.block_sizes;
    std::string text;
    if (args.to == "select") {
        text = write_nvlink_domain_lines(fabric, hosts);
    } else if (args.to == "block") {
        text = take(write_block_conf(fabric, blocks));
    } else {
        TopologyYamlStyle style;
        style.header = !args.no_header;
        style.blocks = blocks;
        text = take(write_topology_yaml(fabric, style));
    }
    for (const auto &d : fabric.nvlink_domains) {
        std::vector<std::string> names;
        for (int h : d.hosts)
            names.push_back(fabric.nodes[static_cast<std::size_t>(h)].name);
        domains.push_back({{"name", d.name}, {"hosts", compress_hostlist(names)}});
    }
    emit(text, output, as_json, "text",
         json{{"hosts", hosts.size()}, {"domains", domains}, {"left_out", left_out},
              {"form", args.to}},
         fmt::format("{} form; {} NVLink domains over {} hosts", args.to,
                     fabric.nvlink_domains.size(), hosts.size()));
    return 0;
}

int cmd_convert(const std::string &input, const std::string &map_path, const std::string &output,
                const ConvertArgs &args, bool as_json) {
    auto map = load_map(map_path);
    auto file = take(load_topology_file(input, map ? &*map : nullptr));
    if (!std::holds_alternative<Fabric>(file))
        throw BadInput{
            fmt::format("{}: a node topology; convert takes a fabric (ibnetdiscover "
                        "output, topology.conf or a topograph model)",
                        input)};
    const auto &fabric = std::get<Fabric>(file);
    std::string conf;
    BlockConfStyle blocks;
    blocks.header = !args.no_header;
    if (args.block_name.size() == 2) {
        blocks.name_pattern = args.block_name[0];
        blocks.name_format = args.block_name[1];
    }
    blocks.sizes = args.block_sizes;
    if (args.to == "block") {
        conf = take(write_block_conf(fabric, blocks));
    } else if (args.to == "yaml") {
        TopologyYamlStyle style;
        style.header = !args.no_header;
        style.level_names = args.switch_names == "levels";
        style.blocks = blocks;
        conf = take(write_topology_yaml(fabric, style));
    } else {
        TopologyConfStyle style;
        style.header = !args.no_header;
        style.level_names = args.switch_names == "levels";
        conf = write_topology_conf(fabric, style);
    }
    emit(conf, output, as_json, "topology_conf",
         json{{"switches", fabric.switches().size()},
              {"hosts", fabric.hosts().size()},
              {"blocks", fabric.blocks.size()},
              {"nvlink_domains", fabric.nvlink_domains.size()},
              {"form", args.to}},
         fmt::format("{} form; {} switches, {} hosts", args.to, fabric.switches().size(),
                     fabric.hosts().size()));
    return 0;
}

int cmd_gres_conf(const std::string &input, const GresConfOptions &opt, const std::string &output,
                  bool as_json) {
    auto node = take(input.empty() ? discover_local_node() : load_node_topology(input));
    std::string conf = take(write_gres_conf(node, opt));
    emit(conf, output, as_json, "gres_conf",
         json{{"input", input.empty() ? "live" : input}, {"gpus", node.gpus.size()}},
         fmt::format("{} GPUs", node.gpus.size()));
    return 0;
}

// The map ai-metrics serves, without jobs: switches, leaves, NVLink domains, hosts, GPUs.
int draw_html_map(const std::string &input, const std::string &map_path,
                  const std::vector<std::string> &nodes, const std::string &output,
                  bool as_json) {
    auto g = take(load_cluster(ClusterFiles{input, map_path, nodes}));
    const std::string html = metrics::map_html(metrics::fabric_map(g, input), 0);
    try {
        write_output_file(output, html);
    } catch (const std::runtime_error &e) {
        throw BadInput{"--output " + output + ": cannot write (" + e.what() + ")"};
    }
    if (as_json)
        std::cout << json{{"input", input}, {"kind", "fabric"}, {"output", output},
                          {"format", "html"}, {"hosts", g.host_count()}}
                         .dump(2)
                  << '\n';
    else
        std::cout << fmt::format("wrote {} (html map of {} hosts)\n", output, g.host_count());
    return 0;
}

int cmd_draw(const std::string &input, const std::string &map_path,
             const std::vector<std::string> &nodes, const std::string &output, bool as_json) {
    if (output.ends_with(".html"))
        return draw_html_map(input, map_path, nodes, output, as_json);
    auto map = load_map(map_path);
    auto f = take(load_topology_file(input, map ? &*map : nullptr));
    std::string dot = std::visit(
        [](const auto &v) {
            if constexpr (std::is_same_v<std::decay_t<decltype(v)>, NodeTopology>)
                return cli::node_to_dot(v);
            else
                return cli::fabric_to_dot(v);
        },
        f);
    auto format = take(cli::render_dot(dot, output));
    if (as_json)
        std::cout << json{{"input", input},
                          {"kind", kind_of(f)},
                          {"output", output},
                          {"format", format}}
                         .dump(2)
                  << '\n';
    else
        std::cout << fmt::format("wrote {} ({} of {})\n", output, format, kind_of(f));
    return 0;
}

struct QueryArgs {
    std::string fabric, map;
    std::vector<std::string> nodes;  // FILE (every host) or HOST=FILE
    std::vector<std::string> endpoints;
    int subtree = 0;
    std::string free_hosts, bottleneck;
    bool json = false;
};

ClusterGraph build_graph(const QueryArgs &q) {
    return take(load_cluster(ClusterFiles{q.fabric, q.map, q.nodes}));
}

std::vector<int> host_indexes(const ClusterGraph &g, const std::string &expr,
                              const std::string &field) {
    return take(g.parse_hosts(expr, field));
}

int cmd_query(const QueryArgs &q) {
    auto g = build_graph(q);
    json j = json::object();
    std::string text;
    if (!q.endpoints.empty()) {
        if (q.endpoints.size() != 2)
            throw BadInput{"endpoints: expected exactly two, FROM and TO"};
        auto a = take(g.parse_endpoint(q.endpoints[0]));
        auto b = take(g.parse_endpoint(q.endpoints[1]));
        auto m = g.gpu_path(a, b);
        j["from"] = q.endpoints[0];
        j["to"] = q.endpoints[1];
        j["bandwidth_gbs"] = m.bandwidth_gbs;
        j["fabric_hops"] = m.fabric_hops;
        j["latency_us"] = m.latency_us;
        if (a.gpu >= 0 && b.gpu >= 0)
            j["path"] = to_string(m.intra);
        text += fmt::format(
            "{} -> {}: {}, {} fabric hops, {:.2f} us{}\n", q.endpoints[0], q.endpoints[1],
            fmt_gbs(m.bandwidth_gbs), m.fabric_hops, m.latency_us,
            a.gpu >= 0 && b.gpu >= 0 ? fmt::format(", GPU path {}", to_string(m.intra)) : "");
    }
    if (q.subtree > 0) {
        auto free =
            q.free_hosts.empty() ? std::vector<int>{} : host_indexes(g, q.free_hosts, "--free");
        if (q.free_hosts.empty())
            for (int h = 0; h < g.host_count(); ++h)
                free.push_back(h);
        auto st = g.smallest_subtree(free, q.subtree);
        if (!st) {
            j["subtree"] = nullptr;
            text += fmt::format("subtree: no switch has {} free hosts below it\n", q.subtree);
        } else {
            std::vector<std::string> names;
            for (int h : st->hosts)
                names.push_back(g.host_name(h));
            const auto &sw = g.fabric().nodes[st->switch_node].name;
            j["subtree"] = {{"switch", sw},
                            {"level", st->level},
                            {"free_hosts", st->free_hosts},
                            {"hosts", compress_hostlist(names)}};
            text += fmt::format("subtree: {} (level {}, {} free hosts): {}\n", sw, st->level,
                                st->free_hosts, compress_hostlist(names));
        }
    }
    if (!q.bottleneck.empty()) {
        auto b = g.bottleneck(host_indexes(g, q.bottleneck, "--bottleneck"));
        if (!b) {
            j["bottleneck"] = nullptr;
            text += "bottleneck: none (fewer than two hosts)\n";
        } else {
            j["bottleneck"] = {{"where", b->where},
                               {"bandwidth_gbs", b->bandwidth_gbs},
                               {"hosts_below", b->hosts_below},
                               {"hosts_above", b->hosts_above},
                               {"per_host_gbs", b->per_host_gbs}};
            text += fmt::format("bottleneck: {}: {} shared by {} | {} hosts, {} per host\n",
                                b->where, fmt_gbs(b->bandwidth_gbs), b->hosts_below, b->hosts_above,
                                fmt_gbs(b->per_host_gbs));
        }
    }
    if (q.endpoints.empty() && q.subtree <= 0 && q.bottleneck.empty())
        throw BadInput{"query: expected FROM TO, --subtree N or --bottleneck HOSTS"};
    std::cout << (q.json ? j.dump(2) + "\n" : text);
    return 0;
}

// `convert`'s options, into `input`, `map_path`, `output`, `args` and `as_json`.
CLI::App *add_convert(CLI::App &app, std::string &input, std::string &map_path,
                      std::string &output, ConvertArgs &args, bool &as_json) {
    auto *convert = app.add_subcommand("convert",
                                       "A fabric (ibnetdiscover, topology.conf or .yaml, topograph "
                                       "model) -> Slurm topology.conf or "
                                       "topology.yaml");
    convert
        ->add_option("input", input,
                     "ibnetdiscover output, topology.conf, topology.yaml or a topograph model")
        ->required()
        ->check(CLI::ExistingFile);
    convert->add_option("--map", map_path, "GUID-to-hostname map")->check(CLI::ExistingFile);
    convert
        ->add_option("--to", args.to,
                     "topology.conf for topology/tree or topology/block, or Slurm 25.05's "
                     "topology.yaml with both")
        ->check(CLI::IsMember({"tree", "block", "yaml"}))
        ->capture_default_str();
    convert
        ->add_option(
            "--switch-names", args.switch_names,
            "tree, yaml: the fabric's switch names, or switch.<level>.<n> (leaves level 1)")
        ->check(CLI::IsMember({"model", "levels"}))
        ->capture_default_str();
    convert
        ->add_option("--block-name", args.block_name,
                     "block, yaml: REGEX FORMAT, a block named by its first host's match of REGEX "
                     "written as FORMAT ($1 or ${1} for a group)")
        ->expected(2);
    convert->add_option("--block-sizes", args.block_sizes, "block, yaml: BlockSizes=, e.g. 8,16,32")
        ->delimiter(',')
        ->allow_extra_args(false)
        ->check(CLI::PositiveNumber);
    convert->add_flag("--no-header", args.no_header, "No first comment line naming the source");
    convert->add_option("-o,--output", output, "Write topology.conf here (default: stdout)");
    convert->add_flag("--json", as_json, "Print JSON");
    return convert;
}

// `domains`'s options, into `input`, `output`, `args` and `as_json`.
CLI::App *add_domains(CLI::App &app, std::string &input, std::string &output, ConvertArgs &args,
                      bool &as_json) {
    auto *domains = app.add_subcommand(
        "domains",
        "Multi-node NVLink domains from each host's GPU fabric report (nvidia-smi -q -x, -q or "
        "--query-gpu=fabric.clusterUuid,fabric.cliqueId): ai_select.conf NvlinkDomain= lines, "
        "topology.conf BlockName= lines or topology.yaml");
    domains
        ->add_option("input", input,
                     "A directory of captures named by host (HOST.xml, HOST.txt, HOST.csv), or a "
                     "file of 'host cluster_uuid clique_id' lines ('host -': in no domain)")
        ->required()
        ->check(CLI::ExistingPath);
    args.to = "select";
    domains
        ->add_option("--to", args.to,
                     "select: ai_select.conf lines; block: topology.conf for topology/block; "
                     "yaml: Slurm 25.05's topology.yaml")
        ->check(CLI::IsMember({"select", "block", "yaml"}))
        ->capture_default_str();
    domains
        ->add_option("--block-sizes", args.block_sizes,
                     "block, yaml: BlockSizes= (default: the largest domain's host count)")
        ->delimiter(',')
        ->allow_extra_args(false)
        ->check(CLI::PositiveNumber);
    domains->add_flag("--no-header", args.no_header, "No first comment line naming the source");
    domains->add_option("-o,--output", output, "Write the lines here (default: stdout)");
    domains->add_flag("--json", as_json, "Print JSON");
    return domains;
}

}  // namespace

int main(int argc, char **argv) {
    CLI::App app{"ai-topo: discover, show, convert, draw and query cluster topologies"};
    app.require_subcommand(1);
    bool as_json = false;
    std::string map_path, output;
    std::vector<std::string> files;

    auto *discover = app.add_subcommand("discover", "This host's GPUs, NICs, NUMA and fabric");
    discover->add_flag("--json", as_json, "Print JSON");

    auto *show = app.add_subcommand("show",
                                    "Summarize topology files (hwloc XML, NCCL XML, "
                                    "topology.conf, ibnetdiscover, topograph model) and "
                                    "nvidia-smi's GPU fabric reports");
    show->add_option("files", files, "Topology files")->required()->check(CLI::ExistingFile);
    show->add_option("--map", map_path, "GUID-to-hostname map for ibnetdiscover files")
        ->check(CLI::ExistingFile);
    show->add_flag("--json", as_json, "Print JSON");

    std::string input;
    ConvertArgs conv;
    auto *convert = add_convert(app, input, map_path, output, conv, as_json);

    ConvertArgs dom;
    auto *domains = add_domains(app, input, output, dom, as_json);

    GresConfOptions gres;
    auto *gres_conf = app.add_subcommand(
        "gres-conf", "A node's GPUs as gres.conf lines with Cores= and NVLink Links=");
    gres_conf
        ->add_option("input", input, "hwloc or NCCL topology XML of the node (default: this host)")
        ->check(CLI::ExistingFile);
    gres_conf->add_option("--nodes", gres.nodes,
                          "NodeName= hostlist (default: the file's short hostname)");
    gres_conf->add_option("--type", gres.type, "Type= for every GPU (default: from the model)");
    gres_conf
        ->add_option("--file", gres.file_pattern,
                     "File= pattern, %d the GPU index in PCI bus order")
        ->capture_default_str();
    gres_conf
        ->add_option("--nvlink-gbs", gres.nvlink_gbs,
                     "GB/s of one NVLink per direction, to count links")
        ->capture_default_str();
    gres_conf->add_option("-o,--output", output, "Write gres.conf here (default: stdout)");
    gres_conf->add_flag("--json", as_json, "Print JSON");

    auto *draw = app.add_subcommand("draw", "Draw a node's GPU/NIC/NUMA layout or a fabric");
    draw->add_option("input", input, "A topology file")->required()->check(CLI::ExistingFile);
    draw->add_option("--map", map_path, "GUID-to-hostname map")->check(CLI::ExistingFile);
    draw->add_option("-o,--output", output,
                     "Picture to write: .svg, .png, .pdf, .dot, or .html (a fabric's map, as "
                     "ai-metrics serves it without jobs)")
        ->required();
    std::vector<std::string> draw_nodes;
    draw->add_option("--node", draw_nodes,
                     "For .html: node topology for every host (FILE) or some (HOSTLIST=FILE)")
        ->allow_extra_args(false);
    draw->add_flag("--json", as_json, "Print JSON");

    QueryArgs q;
    auto *query = app.add_subcommand(
        "query",
        "Bandwidth, hops and latency between two endpoints (HOST or HOST:gpuN), the "
        "smallest subtree with N free hosts, or the bottleneck of a set of hosts");
    query->add_option("endpoints", q.endpoints, "FROM TO");
    query->add_option("--fabric", q.fabric, "topology.conf or ibnetdiscover output")
        ->required()
        ->check(CLI::ExistingFile);
    query->add_option("--map", q.map, "GUID-to-hostname map")->check(CLI::ExistingFile);
    query
        ->add_option("--node", q.nodes,
                     "Node topology for every host (FILE) or for some (HOSTLIST=FILE); repeatable")
        ->allow_extra_args(false);
    query->add_option("--subtree", q.subtree, "Find the smallest subtree with N free hosts");
    query->add_option("--free", q.free_hosts, "Free hosts for --subtree (default: all)");
    query->add_option("--bottleneck", q.bottleneck, "Hostlist whose bottleneck to find");
    query->add_flag("--json", q.json, "Print JSON");

    CLI11_PARSE(app, argc, argv);
    try {
        if (discover->parsed())
            return cmd_discover(as_json);
        if (show->parsed())
            return cmd_show(files, map_path, as_json);
        if (convert->parsed())
            return cmd_convert(input, map_path, output, conv, as_json);
        if (domains->parsed())
            return cmd_domains(input, output, dom, as_json);
        if (gres_conf->parsed())
            return cmd_gres_conf(input, gres, output, as_json);
        if (draw->parsed())
            return cmd_draw(input, map_path, draw_nodes, output, as_json);
        if (query->parsed())
            return cmd_query(q);
    } catch (const BadInput &e) {
        std::cerr << "ai-topo: " << e.message << '\n';
        return 1;
    } catch (const std::exception &e) {
        std::cerr << "ai-topo: internal error: " << e.what() << '\n';
        return 1;
    }
    return 2;
}
