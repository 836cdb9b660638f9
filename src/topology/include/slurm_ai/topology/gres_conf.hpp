// A node's GPUs as Slurm gres.conf lines, so that cons_tres's choice of GPUs inside a node
// (it prefers GPUs that Links= marks as connected and whose Cores= are near the job's
// cores) follows the node's real NVLink and NUMA layout, as the placement engine assumes.
//
//   NodeName=dgx[01-04] Name=gpu Type=v100 File=/dev/nvidia0 Cores=0-1 Links=-1,6,6,...
//
// One line per GPU, in PCI bus id order (Slurm accepts Links= only on a line with a single
// File=). Links= counts NVLinks to every GPU of the node (-1 for the GPU itself, 0 for
// PCIe only); GPUs that meet through NVSwitches get the links each has into the switches,
// where Slurm's NVML autodetection would write 0 (it counts only links whose far end is a
// GPU). Both give cons_tres the same order between GPUs; the count makes the file say what
// the hardware has. Cores= are Slurm's core indexes (hwloc's logical order), left out when
// the input has no cores (NCCL topology files).
#pragma once

#include <string>
#include <string_view>

#include "slurm_ai/common/input_error.hpp"
#include "slurm_ai/topology/node_topology.hpp"

namespace slurm_ai {

struct GresConfOptions {
    std::string nodes;  // NodeName= (a hostlist); empty: the topology's hostname, if any
    std::string type;   // Type=; empty: each GPU's model, named as Slurm's autodetection does
    std::string file_pattern = "/dev/nvidia%d";  // File=; %d is the GPU's index in bus order
    double nvlink_gbs = kDefaultNvlinkLinkGBs;   // one NVLink, one direction: links = GB/s / this
};

// The gres.conf text (with a comment header that includes the matching slurm.conf Gres=),
// or an InputError naming the option (--nodes, --type, --file, --nvlink-gbs) or "GPUs"
// when the node has none.
Parsed<std::string> write_gres_conf(const NodeTopology &t, const GresConfOptions &opt);

// A GPU model as a GRES type: lower case, blanks to '_' (Slurm's NVML autodetection does the
// same), and every character outside [a-z0-9._-] to '_' so that Gres= can hold it.
// "Tesla V100-SXM2-16GB" -> "tesla_v100-sxm2-16gb".
std::string gres_type_name(std::string_view model);

}  // namespace slurm_ai
