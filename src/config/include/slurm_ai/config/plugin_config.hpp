// The select plugin's own configuration: a file beside slurm.conf (ai_select.conf), one
// Key=Value per line in Slurm's style, '#' starting a comment, keys case-insensitive.
// An unknown key or a bad value is an error naming the file, the line and the key.
// Relative paths are taken from the directory of the configuration file.
//
// The keys are listed, parsed and described in one table (plugin_config.cpp), which
// plugin_config_keys() gives: ai_select.conf(5)'s KEYS section is written from it
// (tests/unit/config/plugin_config_test.cpp checks docs/man/ai_select.conf.5 against it).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "slurm_ai/common/input_error.hpp"
#include "slurm_ai/job/job_hints.hpp"
#include "slurm_ai/lease/lease.hpp"
#include "slurm_ai/placement/cluster_state.hpp"
#include "slurm_ai/placement/cost_model.hpp"
#include "slurm_ai/placement/failure_risk.hpp"
#include "slurm_ai/placement/placement_engine.hpp"
#include "slurm_ai/topology/cluster_files.hpp"

namespace slurm_ai {

// What ai-resize and ai-elasticd read; the select plugin reads start and min_gain.
struct ElasticConfig {
    std::string view_dir;  // empty: <StateSaveLocation>/ai_elastic/views
    bool auto_resize = true;
    std::uint32_t interval_s = 5;
    std::uint32_t grow_timeout_s = 60;
    std::uint32_t grow_cooldown_s = 60;
    std::string policy = "goodput";  // or "priority"
    double min_gain = 0.5;
    // The size an elastic job starts at: "goodput" (no node more than the goodput rule
    // would grow it into: goodput_size) or "max" (as many as fit, Slurm's node range).
    std::string start = "goodput";
    bool operator==(const ElasticConfig &) const = default;
};

// What ai-lease (on every compute node) and ai-recover read: the suite's own failure
// signal (docs/checkpoint.md, "Leases").
struct LeaseConfig {
    bool watch = true;  // LeaseWatch: no leaves failures to Slurm's SlurmdTimeout alone
    std::uint16_t port = 6828;  // LeasePort: ai-recover's UDP port on the controller
    lease::LeaseTimes times;
    std::string health_file;  // HealthEventFile: Xid lines to report; empty: none
    bool operator==(const LeaseConfig &) const = default;
};

struct PluginConfig {
    ClusterFiles cluster;
    std::string policy = "engine";  // or "passthrough"
    EngineOptions engine;
    CostConstants cost;
    RiskConstants risk;
    std::optional<CommSpec> default_comm;
    double comm_share = 0.5;  // CommShare
    bool placement_hold = true;  // PlacementHold
    std::string risk_model;   // RiskModel: a file, or empty
    std::string placement_model;  // PlacementModel: a file, or empty
    std::string shape_profile;    // ShapeProfile: a file, or empty
    // ShapeHistory: how far back the sizes asked count (ClusterState::recent); 0: none.
    std::uint32_t shape_history_s = static_cast<std::uint32_t>(ClusterState::kRecentSizes_s);
    bool multi_node_best_fit = true;
    bool single_node_gpus = true;
    bool debug = false;
    ElasticConfig elastic;
    LeaseConfig lease;
    std::string source;  // the file it came from
};

// One key of ai_select.conf as its manual describes it.
struct PluginConfigKey {
    std::string_view name;   // as documented; matched case-insensitively
    std::string_view value;  // the form of its value: PATH, X, yes|no, ...
    std::string_view fallback;  // what holds without the key
    std::string_view help;
};
// Every key, in the manual's order.
std::vector<PluginConfigKey> plugin_config_keys();
// The KEYS section of ai_select.conf(5), in roff, from plugin_config_keys().
std::string plugin_config_manual();

// default_fabric is used when the file has no Fabric= line.
Parsed<PluginConfig> parse_plugin_config(std::string_view text, std::string_view source,
                                         std::string_view default_fabric);
Parsed<PluginConfig> load_plugin_config(const std::string &path, std::string_view default_fabric);

// What the suite reads beside slurm.conf: ai_select.conf, and Slurm's own topology file as
// the default fabric: topology.yaml where it exists and Slurm reads it (25.05 and later,
// which then ignore topology.conf), else topology.conf. The one place this is decided:
// the select plugin and the tools that load the cluster (ai-resize, ai-elasticd,
// ai-metrics, ai-explain) all ask here.
struct BesideSlurmConf {
    std::string ai_conf;
    std::string fabric;
};
BesideSlurmConf beside_slurm_conf(const std::string &slurm_conf, bool slurm_reads_yaml);

}  // namespace slurm_ai
