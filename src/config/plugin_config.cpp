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

std::optional<InputError> parse_number(const Line &l, double lo, double hi, double &out) {
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
    out = x;
    return std::nullopt;
}

std::string resolve(const std::string &base_dir, std::string_view path) {
    std::filesystem::path p{std::string(path)};
    if (p.is_relative() && !base_dir.empty())
        p = std::filesystem::path(base_dir) / p;
    return p.lexically_normal().string();
}

InputError unknown_key(const Line &l) {
    return l.error(
        "a known key: Fabric, GuidMap, NodeTopology, Policy, TimeBudgetMs, "
        "RiskWeight, DefaultComm, MultiNodeBestFit, SingleNodeGpus, "
        "CostAlphaIntraUs, CostAlphaInterUs, CostIntraEfficiency, "
        "CostInterEfficiency, RiskHostPerDay, RiskSwitchPerDay, RiskModel, Debug, "
        "ElasticViewDir, ElasticAuto, ElasticInterval, ElasticGrowTimeout, "
        "ElasticGrowCooldown, ElasticPolicy, ElasticMinGain, CommShare, PlacementHold");
}

// The keys of ai-elasticd (Elastic*).
std::optional<InputError> parse_elastic_key(const Line &l, const std::string &key,
                                            ElasticConfig &e) {
    if (key == "elasticviewdir") {
        if (l.value.front() != '/')
            return l.error("an absolute directory path");
        e.view_dir = l.value;
    } else if (key == "elasticauto") {
        return parse_bool(l, e.auto_resize);
    } else if (key == "elasticinterval" || key == "elasticgrowtimeout" ||
               key == "elasticgrowcooldown") {
        auto d = parse_duration(l.key, l.value);
        if (!d || d.value() == 0)
            return l.error("a duration such as 5, 30s or 2m, at least 1 s");
        (key == "elasticinterval"      ? e.interval_s
         : key == "elasticgrowtimeout" ? e.grow_timeout_s
                                       : e.grow_cooldown_s) = d.value();
    } else if (key == "elasticpolicy") {
        const std::string v = text::lower(l.value);
        if (v != "goodput" && v != "priority")
            return l.error("goodput or priority");
        e.policy = v;
    } else if (key == "elasticmingain") {
        return parse_number(l, 0, 1, e.min_gain);
    } else {
        return unknown_key(l);
    }
    return std::nullopt;
}

}  // namespace

Parsed<PluginConfig> parse_plugin_config(std::string_view text, std::string_view source,
                                         std::string_view default_fabric) {
    PluginConfig c;
    c.source = std::string(source);
    c.cluster.fabric = std::string(default_fabric);
    const std::string base = std::filesystem::path(std::string(source)).parent_path().string();
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
        const std::string key = lower(l.key);
        if (l.value.empty())
            return l.error("a value after '='");
        std::optional<InputError> err;
        double x = 0;
        if (key == "fabric") {
            c.cluster.fabric = resolve(base, l.value);
        } else if (key == "guidmap") {
            c.cluster.guid_map = resolve(base, l.value);
        } else if (key == "nodetopology") {
            auto at = l.value.rfind('=');
            c.cluster.nodes.push_back(at == std::string::npos
                                          ? resolve(base, l.value)
                                          : l.value.substr(0, at + 1) +
                                                resolve(base, l.value.substr(at + 1)));
        } else if (key == "nvlinkdomain") {
            if (lower(l.value) == "blocks")
                c.cluster.nvlink_domains.push_back("blocks");
            else if (auto hosts = expand_hostlist(l.value, "NvlinkDomain"); !hosts)
                err = l.error("a hostlist of the domain's hosts, or 'blocks'");
            else
                c.cluster.nvlink_domains.push_back(l.value);
        } else if (key == "nvlinkgbps") {
            if (!(err = parse_number(l, 1, 1e6, x)))
                c.cluster.nvlink_gpu_gbps = x;
        } else if (key == "riskdomainperday") {
            if (!(err = parse_number(l, 0, 1e3, x)))
                c.risk.domain_per_day = x;
        } else if (key == "policy") {
            auto v = lower(l.value);
            if (!make_policy(v))
                return l.error(
                    "one of engine, engine-norisk, tree-bestfit, slurm-default, passthrough");
            c.policy = v;
        } else if (key == "timebudgetms") {
            if (!(err = parse_number(l, 0.1, 1000, x)))
                c.engine.time_budget_ms = x;
        } else if (key == "riskweight") {
            if (!(err = parse_number(l, 0, 1000, x)))
                c.engine.risk_weight = x;
        } else if (key == "defaultcomm") {
            auto comm = parse_comm(l.value);
            if (!comm)
                return l.error(comm.error().expected);
            c.default_comm = comm.value();
        } else if (key == "multinodebestfit") {
            err = parse_bool(l, c.multi_node_best_fit);
        } else if (key == "singlenodegpus") {
            err = parse_bool(l, c.single_node_gpus);
        } else if (key == "debug") {
            err = parse_bool(l, c.debug);
        } else if (key == "costalphaintraus") {
            if (!(err = parse_number(l, 0, 1e6, x)))
                c.cost.alpha_intra_s = x * 1e-6;
        } else if (key == "costalphainterus") {
            if (!(err = parse_number(l, 0, 1e6, x)))
                c.cost.alpha_inter_s = x * 1e-6;
        } else if (key == "costintraefficiency") {
            if (!(err = parse_number(l, 0.01, 1, x)))
                c.cost.intra_efficiency = x;
        } else if (key == "costinterefficiency") {
            if (!(err = parse_number(l, 0.01, 1, x)))
                c.cost.inter_efficiency = x;
        } else if (key == "riskhostperday") {
            if (!(err = parse_number(l, 0, 1e3, x)))
                c.risk.host_per_day = x;
        } else if (key == "riskswitchperday") {
            if (!(err = parse_number(l, 0, 1e3, x)))
                c.risk.switch_per_day = x;
        } else if (key.starts_with("elastic")) {
            err = parse_elastic_key(l, key, c.elastic);
        } else if (key == "riskmodel") {
            c.risk_model = resolve(base, l.value);
        } else if (key == "commshare") {
            err = parse_number(l, 0.01, 0.99, c.comm_share);
        } else if (key == "placementhold") {
            err = parse_bool(l, c.placement_hold);
        } else {
            return unknown_key(l);
        }
        if (err)
            return *err;
    }
    // The engine holds a job for as long as its placement would cost it, with the step's
    // communication share the plugin assumes for jobs that do not say.
    c.engine.hold_comm_share = c.placement_hold ? c.comm_share : 0;
    return c;
}

Parsed<PluginConfig> load_plugin_config(const std::string &path, std::string_view default_fabric) {
    auto text = read_text_file(path, 1u << 20);
    if (!text)
        return text.error();
    return parse_plugin_config(text.value(), path, default_fabric);
}

}  // namespace slurm_ai
