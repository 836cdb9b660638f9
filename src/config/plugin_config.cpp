#include "slurm_ai/config/plugin_config.hpp"

#include "slurm_ai/common/hostlist.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "slurm_ai/common/file_io.hpp"
#include "slurm_ai/common/text_scan.hpp"

namespace slurm_ai {
namespace {

using text::lower;
using text::trim;

struct Line {
    std::string source;
    int number;
    std::string key;  // as written
    std::string value;
    InputError error(std::string expected) const {
        return InputError{key, value, std::move(expected), source, number};
    }
};

std::optional<InputError> parse_bool(const Line &l, bool &out) {
    auto v = lower(l.value);
    if (v == "yes" || v == "true" || v == "1") {
        out = true;
    } else if (v == "no" || v == "false" || v == "0") {
        out = false;
    } else {
        return l.error("yes or no");
    }
    return std::nullopt;
}

// A number in [lo, hi] into `out`, times `scale` (a unit the key names: us -> s).
std::optional<InputError> parse_number(const Line &l, double lo, double hi, double &out,
                                       double scale = 1) {
    std::string v(l.value);
    char *end = nullptr;
    errno = 0;
    double x = std::strtod(v.c_str(), &end);
    if (v.empty() || end != v.c_str() + v.size() || errno || !std::isfinite(x) || x < lo ||
        x > hi) {
        char buf[96];
        std::snprintf(buf, sizeof buf, "a number from %g to %g", lo, hi);
        return l.error(buf);
    }
    out = x * scale;
    return std::nullopt;
}

std::string resolve(const std::string &base_dir, std::string_view path) {
    std::filesystem::path p{std::string(path)};
    if (p.is_relative() && !base_dir.empty())
        p = std::filesystem::path(base_dir) / p;
    return p.lexically_normal().string();
}

// What a key's parser writes into, and where relative paths start.
struct Target {
    PluginConfig &c;
    const std::string &base;
};
using KeyParser = std::optional<InputError> (*)(const Line &, Target &);

// A key whose value names a file, relative to the configuration's directory.
template <std::string PluginConfig::*Field>
std::optional<InputError> path_key(const Line &l, Target &t) {
    t.c.*Field = resolve(t.base, l.value);
    return std::nullopt;
}

// One of two lowercase words, given in any case.
std::optional<InputError> parse_either(const Line &l, std::string_view a, std::string_view b,
                                       std::string &out) {
    const std::string v = lower(l.value);
    if (v != a && v != b)
        return l.error(std::string(a) + " or " + std::string(b));
    out = v;
    return std::nullopt;
}

std::optional<InputError> parse_duration_key(const Line &l, std::uint32_t &out) {
    auto d = parse_duration(l.key, l.value);
    if (!d || d.value() == 0)
        return l.error("a duration such as 5, 30s or 2m, at least 1 s");
    out = d.value();
    return std::nullopt;
}

// A lease time: a duration of whole seconds, at least 1 s.
std::optional<InputError> parse_lease_time(const Line &l, double &out) {
    std::uint32_t s = 0;
    if (auto err = parse_duration_key(l, s))
        return err;
    out = s;
    return std::nullopt;
}

std::string policy_list() {
    std::string out;
    for (const auto &p : PlacementEngine::policies())
        out += (out.empty() ? "" : ", ") + p;
    return out + " or passthrough";
}

struct KeySpec {
    PluginConfigKey doc;
    KeyParser parse;
};

// Every key of ai_select.conf, in the order the manual lists them: the one place a key is
// named, parsed and described.
const std::vector<KeySpec> kKeys = {
    {{"Fabric", "PATH", "topology.conf beside slurm.conf",
      "the fabric: topology.conf (tree or block), topology.yaml, ibnetdiscover output, a "
      "topograph model or a host-by-host Clos CSV"},
     [](const Line &l, Target &t) -> std::optional<InputError> {
         t.c.cluster.fabric = resolve(t.base, l.value);
         return std::nullopt;
     }},
    {{"GuidMap", "PATH", "none", "GUID-to-hostname map of an ibnetdiscover fabric"},
     [](const Line &l, Target &t) -> std::optional<InputError> {
         t.c.cluster.guid_map = resolve(t.base, l.value);
         return std::nullopt;
     }},
    {{"NodeTopology", "PATH or HOSTLIST=PATH", "none",
      "hwloc or NCCL XML of every node, or of the hosts named; repeatable, later lines win"},
     [](const Line &l, Target &t) -> std::optional<InputError> {
         auto at = l.value.rfind('=');
         t.c.cluster.nodes.push_back(at == std::string::npos
                                         ? resolve(t.base, l.value)
                                         : l.value.substr(0, at + 1) +
                                               resolve(t.base, l.value.substr(at + 1)));
         return std::nullopt;
     }},
    {{"NvlinkDomain", "HOSTLIST or blocks", "none",
      "hosts that form one multi-node NVLink domain (a GB200 NVL72 rack; `ai-topo domains` "
      "writes these lines from the GPUs' own reports); repeatable; blocks: every block of "
      "the fabric's block topology is one"},
     [](const Line &l, Target &t) -> std::optional<InputError> {
         if (lower(l.value) == "blocks")
             t.c.cluster.nvlink_domains.push_back("blocks");
         else if (auto hosts = expand_hostlist(l.value, "NvlinkDomain"); !hosts)
             return l.error("a hostlist of the domain's hosts, or 'blocks'");
         else
             t.c.cluster.nvlink_domains.push_back(l.value);
         return std::nullopt;
     }},
    {{"NvlinkGbps", "X", "the GPU's NVLink, else 7200",
      "NVLink bandwidth of a GPU to other hosts of its domain, Gb/s per direction"},
     [](const Line &l, Target &t) {
         return parse_number(l, 1, 1000000, t.c.cluster.nvlink_gpu_gbps);
     }},
    {{"Policy", "NAME", "engine",
      "engine-norisk ignores failures, tree-bestfit behaves as Slurm's topology/tree, "
      "passthrough hands every job to cons_tres"},
     [](const Line &l, Target &t) -> std::optional<InputError> {
         auto v = lower(l.value);
         if (!make_policy(v))
             return l.error("one of " + policy_list());
         t.c.policy = v;
         return std::nullopt;
     }},
    {{"TimeBudgetMs", "N", "5", "a hard bound on the engine's search per job, in ms"},
     [](const Line &l, Target &t) {
         return parse_number(l, 0.1, 1000, t.c.engine.time_budget_ms);
     }},
    {{"RiskWeight", "X", "0.02",
      "weight of the failure-risk term, times the failure evidence the plugin has seen"},
     [](const Line &l, Target &t) { return parse_number(l, 0, 1000, t.c.engine.risk_weight); }},
    {{"DefaultComm", "SPEC", "allreduce for multi-GPU jobs",
      "the pattern assumed for jobs without --ai-comm, written as --ai-comm"},
     [](const Line &l, Target &t) -> std::optional<InputError> {
         auto comm = parse_comm(l.value);
         if (!comm)
             return l.error(comm.error().expected);
         t.c.default_comm = comm.value();
         return std::nullopt;
     }},
    {{"MultiNodeBestFit", "yes|no", "yes", "place multi-node jobs without hints too"},
     [](const Line &l, Target &t) { return parse_bool(l, t.c.multi_node_best_fit); }},
    {{"SingleNodeGpus", "yes|no", "yes",
      "choose the best-linked node for single-node GPU jobs without hints"},
     [](const Line &l, Target &t) { return parse_bool(l, t.c.single_node_gpus); }},
    {{"CostAlphaIntraUs", "X", "5", "the cost model's latency inside a node, us"},
     [](const Line &l, Target &t) {
         return parse_number(l, 0, 1000000, t.c.cost.alpha_intra_s, 1e-6);
     }},
    {{"CostAlphaInterUs", "X", "20", "the cost model's latency between nodes, us"},
     [](const Line &l, Target &t) {
         return parse_number(l, 0, 1000000, t.c.cost.alpha_inter_s, 1e-6);
     }},
    {{"CostIntraEfficiency", "X", "0.8",
      "the share of a link's bandwidth achieved inside a node (ai-fit fits it)"},
     [](const Line &l, Target &t) {
         return parse_number(l, 0.01, 1, t.c.cost.intra_efficiency);
     }},
    {{"CostInterEfficiency", "X", "0.8",
      "the share of a link's bandwidth achieved between nodes (ai-fit fits it)"},
     [](const Line &l, Target &t) {
         return parse_number(l, 0.01, 1, t.c.cost.inter_efficiency);
     }},
    {{"RiskHostPerDay", "X", "0.001", "the risk model's failure rate of a host, per day"},
     [](const Line &l, Target &t) { return parse_number(l, 0, 1000, t.c.risk.host_per_day); }},
    {{"RiskSwitchPerDay", "X", "0.0005",
      "the risk model's failure rate of a leaf switch, per day"},
     [](const Line &l, Target &t) {
         return parse_number(l, 0, 1000, t.c.risk.switch_per_day);
     }},
    {{"RiskDomainPerDay", "X", "0.0005",
      "the risk model's failure rate of an NVLink domain, per day"},
     [](const Line &l, Target &t) {
         return parse_number(l, 0, 1000, t.c.risk.domain_per_day);
     }},
    {{"RiskModel", "PATH", "none",
      "a learned model of a placement's failure rate (ai-sim train-risk), used only if its "
      "file says it beat the hand-written model on held-out days"},
     path_key<&PluginConfig::risk_model>},
    {{"PlacementModel", "PATH", "none",
      "a learned scorer of the engine's candidate placements (ai-sim train-place), used "
      "only if its file records that it beat the engine at every cluster size it was "
      "judged at; refused otherwise, and the engine decides"},
     path_key<&PluginConfig::placement_model>},
    {{"ShapeProfile", "PATH", "none",
      "measured step times by shape (CSV: gpus_per_host,shape,step) on the site's hosts: "
      "the engine rates a GPU job's placement by its shape's measured step first and the "
      "cost model second, and builds the shapes measured fastest; a file that does not "
      "read is an error"},
     path_key<&PluginConfig::shape_profile>},
    {{"ShapeHistory", "DURATION", "1d",
      "with ShapeProfile, how far back the sizes of the jobs it has seen count: a measured "
      "shape may take no more room for them, and for the queue's, than best fit; 0: the "
      "queue's only"},
     [](const Line &l, Target &t) -> std::optional<InputError> {
         auto d = parse_duration(l.key, l.value);
         if (!d)
             return l.error("a duration such as 0, 12h or 1d");
         t.c.shape_history_s = d.value();
         return std::nullopt;
     }},
    {{"CommShare", "X", "0.5",
      "for a job without --ai-comm compute=, the share of its step that is communication"},
     [](const Line &l, Target &t) { return parse_number(l, 0.01, 0.99, t.c.comm_share); }},
    {{"PlacementHold", "yes|no", "yes",
      "hold a job whose best placement now would cost it more run time than it has "
      "been held, from the first test that could start it: time limit x CommShare x "
      "(1/efficiency - 1)"},
     [](const Line &l, Target &t) { return parse_bool(l, t.c.placement_hold); }},
    {{"Debug", "yes|no", "no", "log what plain cons_tres would have chosen"},
     [](const Line &l, Target &t) { return parse_bool(l, t.c.debug); }},
    {{"ElasticViewDir", "PATH", "<StateSaveLocation>/ai_elastic/views",
      "where resized jobs find their node list, host file and world size (absolute)"},
     [](const Line &l, Target &t) -> std::optional<InputError> {
         if (l.value.front() != '/')
             return l.error("an absolute directory path");
         t.c.elastic.view_dir = l.value;
         return std::nullopt;
     }},
    {{"ElasticAuto", "yes|no", "yes", "ai-elasticd grows and shrinks --ai-elastic jobs"},
     [](const Line &l, Target &t) { return parse_bool(l, t.c.elastic.auto_resize); }},
    {{"ElasticInterval", "DURATION", "5s", "how often ai-elasticd looks at the cluster"},
     [](const Line &l, Target &t) { return parse_duration_key(l, t.c.elastic.interval_s); }},
    {{"ElasticGrowTimeout", "DURATION", "60s", "how long an expansion job may wait to start"},
     [](const Line &l, Target &t) {
         return parse_duration_key(l, t.c.elastic.grow_timeout_s);
     }},
    {{"ElasticGrowCooldown", "DURATION", "60s",
      "the least time between automatic grows of a job"},
     [](const Line &l, Target &t) {
         return parse_duration_key(l, t.c.elastic.grow_cooldown_s);
     }},
    {{"ElasticPolicy", "goodput|priority", "goodput", "ai-elasticd's rule"},
     [](const Line &l, Target &t) {
         return parse_either(l, "goodput", "priority", t.c.elastic.policy);
     }},
    {{"ElasticMinGain", "X", "0.5",
      "goodput: the least goodput per GPU a grow must add, in GPUs' worth of computation; "
      "also each node above MIN of an elastic job's start (ElasticStart=goodput)"},
     [](const Line &l, Target &t) { return parse_number(l, 0, 1, t.c.elastic.min_gain); }},
    {{"ElasticStart", "goodput|max", "goodput",
      "the size the select plugin starts an elastic job at: goodput = the largest that fits "
      "and whose every node above MIN adds at least ElasticMinGain per GPU, or a whole GPU's "
      "worth while another job waits that the GPUs beside the MIN could start; max = as many "
      "as fit"},
     [](const Line &l, Target &t) { return parse_either(l, "goodput", "max", t.c.elastic.start); }},
    {{"LeaseWatch", "yes|no", "yes",
      "ai-lease renews a lease per node with --ai-checkpoint jobs and ai-recover acts when one "
      "lapses; no: node failures are found by Slurm alone (SlurmdTimeout)"},
     [](const Line &l, Target &t) { return parse_bool(l, t.c.lease.watch); }},
    {{"LeasePort", "PORT", "6828", "the UDP port ai-recover takes leases on, on SlurmctldHost"},
     [](const Line &l, Target &t) -> std::optional<InputError> {
         double port = 0;
         if (auto err = parse_number(l, 1, 65535, port); err || port != std::floor(port))
             return l.error("a port number, 1-65535");
         t.c.lease.port = static_cast<std::uint16_t>(port);
         return std::nullopt;
     }},
    {{"LeasePeriod", "DURATION", "1s", "how often ai-lease renews its node's lease"},
     [](const Line &l, Target &t) { return parse_lease_time(l, t.c.lease.times.period_s); }},
    {{"LeaseFence", "DURATION", "2s",
      "a node with no grant for this long, its controller unreachable, freezes its "
      "--ai-checkpoint tasks (shorter than LeaseLapse)"},
     [](const Line &l, Target &t) { return parse_lease_time(l, t.c.lease.times.fence_s); }},
    {{"LeaseLapse", "DURATION", "3s",
      "ai-recover probes a node whose lease went unrenewed this long, and recovers its jobs "
      "when slurmd does not answer either"},
     [](const Line &l, Target &t) { return parse_lease_time(l, t.c.lease.times.lapse_s); }},
    {{"LeaseKill", "DURATION", "30s", "fenced tasks frozen this long are killed"},
     [](const Line &l, Target &t) { return parse_lease_time(l, t.c.lease.times.kill_s); }},
    {{"HealthEventFile", "PATH", "none",
      "a file of the node's kernel log lines (absolute; %n: the node's name); a fatal GPU "
      "Xid appended to it sets the node DOWN and recovers its --ai-checkpoint jobs"},
     [](const Line &l, Target &t) -> std::optional<InputError> {
         if (l.value.front() != '/')
             return l.error("an absolute file path");
         t.c.lease.health_file = l.value;
         return std::nullopt;
     }},
};

InputError unknown_key(const Line &l) {
    std::string names;
    for (const auto &k : kKeys)
        names += (names.empty() ? "" : ", ") + std::string(k.doc.name);
    return l.error("a known key: " + names);
}

}  // namespace

std::vector<PluginConfigKey> plugin_config_keys() {
    std::vector<PluginConfigKey> out;
    for (const auto &k : kKeys)
        out.push_back(k.doc);
    return out;
}

std::string plugin_config_manual() {
    // roff: '-' and '\\' need escapes (no text here starts a line with '.' or '\'').
    auto roff = [](std::string_view text) {
        std::string out;
        for (char ch : text) {
            if (ch == '\\')
                out += "\\e";
            else if (ch == '-')
                out += "\\-";
            else
                out += ch;
        }
        return out;
    };
    std::string out = ".SH KEYS\n";
    for (const auto &k : kKeys) {
        out += ".TP\n.BI \"" + roff(k.doc.name) + "=\" \"" + roff(k.doc.value) + "\"\n";
        out += roff(k.doc.help) + " (default: " + roff(k.doc.fallback) + ").\n";
    }
    return out;
}

Parsed<PluginConfig> parse_plugin_config(std::string_view text, std::string_view source,
                                         std::string_view default_fabric) {
    PluginConfig c;
    c.source = std::string(source);
    c.cluster.fabric = std::string(default_fabric);
    const std::string base = std::filesystem::path(std::string(source)).parent_path().string();
    Target target{c, base};
    text::LineReader lines(text);
    for (std::string_view raw; lines.next(raw);) {
        const int number = lines.number();
        if (auto hash = raw.find('#'); hash != std::string_view::npos)
            raw = raw.substr(0, hash);
        raw = trim(raw);
        if (raw.empty())
            continue;
        auto eq = raw.find('=');
        Line l{
            c.source, number, std::string(trim(raw.substr(0, eq))),
            eq == std::string_view::npos ? std::string() : std::string(trim(raw.substr(eq + 1)))};
        if (eq == std::string_view::npos || l.key.empty())
            return InputError{"line", std::string(raw), "Key=Value", c.source, number};
        if (l.value.empty())
            return l.error("a value after '='");
        const std::string key = lower(l.key);
        auto spec = std::find_if(kKeys.begin(), kKeys.end(),
                                 [&](const KeySpec &k) { return lower(k.doc.name) == key; });
        if (spec == kKeys.end())
            return unknown_key(l);
        if (auto err = spec->parse(l, target))
            return *err;
    }
    // The engine holds a job for as long as its placement would cost it, with the step's
    // communication share the plugin assumes for jobs that do not say.
    c.engine.hold_comm_share = c.placement_hold ? c.comm_share : 0;
    if (auto err = lease::check(c.lease.times)) {
        err->source = c.source;
        return *err;
    }
    return c;
}

Parsed<PluginConfig> load_plugin_config(const std::string &path, std::string_view default_fabric) {
    auto text = read_text_file(path, 1u << 20);
    if (!text)
        return text.error();
    return parse_plugin_config(text.value(), path, default_fabric);
}

BesideSlurmConf beside_slurm_conf(const std::string &slurm_conf, bool slurm_reads_yaml) {
    const std::filesystem::path dir = std::filesystem::path(slurm_conf).parent_path();
    const auto at = [&](const char *name) {
        return ((dir.empty() ? std::filesystem::path(".") : dir) / name).string();
    };
    BesideSlurmConf out{at("ai_select.conf"), at("topology.conf")};
    std::error_code ec;
    if (slurm_reads_yaml && std::filesystem::exists(at("topology.yaml"), ec))
        out.fabric = at("topology.yaml");
    return out;
}

}  // namespace slurm_ai
