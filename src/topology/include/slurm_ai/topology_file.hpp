// Any topology file the suite reads, told apart by content: hwloc XML, NCCL topology XML,
// Slurm topology.conf or ibnetdiscover output.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <variant>

#include "slurm_ai/fabric.hpp"
#include "slurm_ai/input_error.hpp"
#include "slurm_ai/node_topology.hpp"

namespace slurm_ai {

enum class TopologyFileKind { kHwlocXml, kNcclXml, kTopologyConf, kIbnetdiscover };
std::string_view to_string(TopologyFileKind k);

// Looks at the first non-comment content: <topology> (hwloc), <system> (NCCL), a
// SwitchName= line (topology.conf), or Switch/Ca/vendid= lines (ibnetdiscover).
Parsed<TopologyFileKind> detect_topology_file(std::string_view text, std::string_view source);

using TopologyFile = std::variant<NodeTopology, Fabric>;
// Reads and parses a file of any of the four kinds; the map applies to ibnetdiscover.
Parsed<TopologyFile> load_topology_file(const std::string &path, const GuidMap *map = nullptr);

// The whole file as text, or an InputError naming the path and the reason.
Parsed<std::string> read_text_file(const std::string &path, std::size_t limit = 256u << 20);

// Writes `text` beside `path` (PATH.tmp.<pid>) and renames it over `path`: a reader sees
// the old file or the new one, never part of one. `prepare`, when given, runs on the
// written temporary file before the rename (permissions, owner). Throws
// std::runtime_error naming the file; the temporary file does not outlive a failure.
void write_text_file_atomically(const std::string &path, std::string_view text,
                                const std::function<void(const std::string &)> &prepare = {});

}  // namespace slurm_ai
