// The select plugin's own configuration: a file beside slurm.conf (ai_select.conf), one
// Key=Value per line in Slurm's style, '#' starting a comment, keys case-insensitive.
// An unknown key or a bad value is an error naming the file, the line and the key.
//
//   Fabric=PATH               topology.conf or ibnetdiscover output
//                             (default: topology.conf beside slurm.conf)
//   GuidMap=PATH              GUID-to-hostname map for an ibnetdiscover fabric
//   NodeTopology=PATH         hwloc or NCCL XML of every node; or HOSTLIST=PATH for some
//                             (repeatable; later lines win)
//   NvlinkDomain=HOSTLIST     hosts that form one multi-node NVLink domain (a GB200 NVL72
//                             rack); repeatable. NvlinkDomain=blocks: every block of the
//                             fabric's block topology is one (as topograph writes them)
//   NvlinkGbps=X              NVLink bandwidth of a GPU to other hosts of its domain, Gb/s
//                             per direction (default: the GPU's NVLink, else 7200)
//   Policy=NAME               engine (default), engine-norisk, tree-bestfit, slurm-default,
//                             or passthrough (plain cons_tres for every job)
//   TimeBudgetMs=N            hard bound on the engine's search per job (default 5)
//   RiskWeight=X              weight of the failure-risk term (default 0.02)
//   DefaultComm=SPEC          pattern assumed for jobs without --ai-comm (as --ai-comm;
//                             default: allreduce for multi-GPU jobs)
//   MultiNodeBestFit=yes|no   place multi-node jobs without hints too (default yes)
//   SingleNodeGpus=yes|no     choose the best-linked node for single-node GPU jobs
//                             without hints (default yes)
//   CostAlphaIntraUs=X, CostAlphaInterUs=X, CostIntraEfficiency=X,
//   CostInterEfficiency=X     the cost model's constants (see docs/cost-model.md)
//   RiskHostPerDay=X, RiskSwitchPerDay=X, RiskDomainPerDay=X   failure rates of the risk
//                             model (a host, a leaf switch, an NVLink domain)
//   RiskModel=PATH            a learned model of a placement's failure rate (ai-sim
//                             train-risk; learned_risk.hpp), used only if it beat the
//                             hand-written model on its held-out days (default: none)
//   CommShare=X               for a job without --ai-comm compute=: the share of its step
//                             that is communication on its nodes (default 0.5); the plugin
//                             weighs running jobs' uplink load by it, ai-elasticd their
//                             goodput, and the engine how long it holds a job
//   PlacementHold=yes|no      hold a job whose best placement now would cost it more run
//                             time than it has waited (time limit x CommShare x
//                             (1/efficiency - 1)); default yes (placement_terms.hpp)
//   Debug=yes|no              log what plain cons_tres would have chosen (default no)
//   ElasticViewDir=PATH       where resized jobs find their node list, host file and
//                             world size (default <StateSaveLocation>/ai_elastic/views)
//   ElasticAuto=yes|no        ai-elasticd grows and shrinks --ai-elastic jobs (default yes)
//   ElasticInterval=DURATION  how often ai-elasticd looks at the cluster (default 5s)
//   ElasticGrowTimeout=DURATION  how long an expansion job may wait to start (default 60s)
//   ElasticGrowCooldown=DURATION  least time between automatic grows of a job (default 60s)
//   ElasticPolicy=goodput|priority  ai-elasticd's rule (elastic_policy.hpp; default goodput)
//   ElasticMinGain=X          goodput: the least goodput per GPU a grow must add (default 0.5)
// Relative paths are taken from the directory of the configuration file.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "slurm_ai/common/input_error.hpp"
#include "slurm_ai/job/job_hints.hpp"
#include "slurm_ai/placement/cost_model.hpp"
#include "slurm_ai/placement/failure_risk.hpp"
#include "slurm_ai/placement/placement_engine.hpp"
#include "slurm_ai/topology/cluster_files.hpp"

namespace slurm_ai {

// What ai-resize and ai-elasticd read (the select plugin ignores it).
struct ElasticConfig {
    std::string view_dir;  // empty: <StateSaveLocation>/ai_elastic/views
    bool auto_resize = true;
    std::uint32_t interval_s = 5;
    std::uint32_t grow_timeout_s = 60;
    std::uint32_t grow_cooldown_s = 60;
    std::string policy = "goodput";  // or "priority"
    double min_gain = 0.5;
    bool operator==(const ElasticConfig &) const = default;
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
    bool multi_node_best_fit = true;
    bool single_node_gpus = true;
    bool debug = false;
    ElasticConfig elastic;
    std::string source;  // the file it came from
};

// default_fabric is used when the file has no Fabric= line.
Parsed<PluginConfig> parse_plugin_config(std::string_view text, std::string_view source,
                                         std::string_view default_fabric);
Parsed<PluginConfig> load_plugin_config(const std::string &path, std::string_view default_fabric);

}  // namespace slurm_ai
