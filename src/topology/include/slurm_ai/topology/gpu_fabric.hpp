// Multi-node NVLink domains as the GPUs report them: NVML's GPU fabric info (state, status,
// cluster UUID, clique id, health), read live through libnvidia-ml or from what nvidia-smi
// prints (`-q -x`, `-q`, or `--query-gpu=fabric.clusterUuid,fabric.cliqueId` as CSV), and
// the NVLink domains of a cluster assembled from each host's report.
//
// A GPU is in a domain only when its fabric state is Completed, its status Success and
// its cluster UUID not all zeros; the domain is the pair (cluster UUID, clique id), never
// the clique id alone (clique ids repeat across unrelated racks). A node is in a domain
// only when every GPU is, all in the same one, and no GPU reports its fabric unhealthy;
// a node some of whose GPUs say otherwise is kept out, with the reason.
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "slurm_ai/common/input_error.hpp"
#include "slurm_ai/topology/fabric.hpp"

namespace slurm_ai {

struct NvlinkCliqueId {
    std::string cluster_uuid;  // as nvidia-smi prints it: 8-4-4-4-12 hex digits
    std::uint32_t clique_id = 0;

    auto operator<=>(const NvlinkCliqueId &) const = default;
    // "<cluster_uuid>.<clique_id>", the form of Kubernetes' nvidia.com/gpu.clique label.
    std::string label() const;
};

// One GPU's fabric info. Strings are as reported ("Completed", "Success", "Healthy");
// empty where the source printed nothing or N/A.
struct GpuFabricInfo {
    std::string bus_id;   // PCI bus id, as nvidia-smi prints it
    std::string product;  // "NVIDIA GB200"
    std::string state;    // Not Supported, Not Started, In Progress, Completed
    std::string status;   // Success, or an NVML error's text
    std::string cluster_uuid;
    std::optional<std::uint32_t> clique_id;
    std::string health;     // the health summary (driver 580+): Healthy, Unhealthy, ...
    std::string bandwidth;  // the health's bandwidth (driver 550+): Full, Degraded, ...

    // The domain this GPU is in, by the rule above; nullopt outside any.
    std::optional<NvlinkCliqueId> domain() const;
    // Why the GPU's fabric is not healthy ("health summary 'Unhealthy'"); empty when it
    // is healthy or does not say.
    std::string unhealthy() const;
};

// What one node's GPUs report.
struct NodeGpuFabric {
    std::string source;  // file path, "nvml" or "nvidia-smi"
    std::string format;  // "nvidia-smi-xml", "nvidia-smi-text", "nvidia-smi-csv", "nvml"
    std::string driver;  // the driver version, where the source gives it
    std::vector<GpuFabricInfo> gpus;
    std::optional<NvlinkCliqueId> domain;  // set by settle()
    std::string problem;  // why the node is in no domain although a GPU reports one

    // Sets domain and problem from gpus by the rule above.
    void settle();
};
// {"source", "format", "driver", "gpus": [{"bus_id", "product", "state", "status",
// "cluster_uuid", "clique_id", "health", "bandwidth", "nvlink_domain": {"cluster_uuid",
// "clique_id"} or null}], "nvlink_domain": the node's or null, "problem"}; fields not
// reported are null.
void to_json(nlohmann::json &j, const NodeGpuFabric &n);

// Whether `s` is a cluster UUID as nvidia-smi prints one: 8-4-4-4-12 hex digits.
bool is_cluster_uuid(std::string_view s);

// Whether the text is nvidia-smi output: an <nvidia_smi_log> document, the "NVSMI LOG"
// text report, or the CSV of --query-gpu=fabric.* (with or without header).
bool looks_like_gpu_fabric(std::string_view text);
// Parses any of the three (told apart by content); the result is settled.
Parsed<NodeGpuFabric> parse_gpu_fabric(std::string_view text, std::string_view source);
Parsed<NodeGpuFabric> load_gpu_fabric(const std::string &path);

// This node's GPUs: through libnvidia-ml (loaded at run time, so the suite never needs it
// to build or to run elsewhere) when it loads and initializes, else by running
// `nvidia-smi -q -x` (found on PATH). An error names what was tried when neither works.
Parsed<NodeGpuFabric> discover_gpu_fabric();

// One host's report, for assembling a cluster.
struct HostGpuFabric {
    std::string host;
    std::optional<NvlinkCliqueId> domain;
    std::string problem;  // why it is in no domain, where a GPU said it was
};

// Host reports from `path`: a directory of captures named by host (the file name up to
// its first dot: dgx-01.xml, gb-07.nvidia-smi.txt), or a file of lines
// `host cluster_uuid clique_id` (# comments; `host -`, or nvidia-smi's all-zero UUID or
// N/A, for a host in no domain).
Parsed<std::vector<HostGpuFabric>> load_host_gpu_fabrics(const std::string &path);

// The cluster the reports describe: every host a node, each domain of two or more hosts
// an NvlinkDomain (named nvl1, nvl2, ... in the order of their first host, natural order)
// and a block of topology/block, block_sizes the size of the largest domain. A host named
// twice is an error.
Parsed<Fabric> fabric_from_gpu_fabrics(const std::vector<HostGpuFabric> &hosts,
                                       std::string_view source);

// ai_select.conf's NvlinkDomain= lines for such a fabric, each after a comment naming its
// cluster UUID and clique id (from `hosts`), and one comment per host left out.
std::string write_nvlink_domain_lines(const Fabric &fabric,
                                      const std::vector<HostGpuFabric> &hosts);

}  // namespace slurm_ai
