// Any topology file the suite reads, told apart by content: hwloc XML, NCCL topology XML,
// Slurm topology.conf (tree or block), ibnetdiscover output or a topograph model.
#pragma once

#include <string>
#include <string_view>
#include <variant>

#include "slurm_ai/common/input_error.hpp"
#include "slurm_ai/topology/fabric.hpp"
#include "slurm_ai/topology/node_topology.hpp"

namespace slurm_ai {

enum class TopologyFileKind {
    kHwlocXml,
    kNcclXml,
    kTopologyConf,
    kIbnetdiscover,
    kTopographModel,
    kTopologyYaml,
    kClosCsv
};
std::string_view to_string(TopologyFileKind k);

// Looks at the first non-comment content: <topology> (hwloc), <system> (NCCL), a
// SwitchName=, BlockName= or BlockSizes= line (topology.conf), Switch/Ca/vendid= lines
// (ibnetdiscover), a switches: or blocks: key (topograph's model YAML), or a
// "- topology:" item (Slurm's topology.yaml), or a CSV header of identifiers (a Clos
// fabric host by host, looks_like_clos_csv()).
Parsed<TopologyFileKind> detect_topology_file(std::string_view text, std::string_view source);

using TopologyFile = std::variant<NodeTopology, Fabric>;
// Parses a text of any of the seven kinds; the map applies to ibnetdiscover.
Parsed<TopologyFile> parse_topology_file(const std::string &text, const std::string &source,
                                         const GuidMap *map = nullptr);
// Reads and parses a file of any of the seven kinds.
Parsed<TopologyFile> load_topology_file(const std::string &path, const GuidMap *map = nullptr);

}  // namespace slurm_ai
