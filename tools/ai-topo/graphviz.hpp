// Pictures of a node's GPU/NIC/NUMA layout and of a fabric, as Graphviz dot text, and
// rendering of that text to SVG, PNG or PDF with Graphviz's `dot` program.
#pragma once

#include <string>

#include "slurm_ai/common/input_error.hpp"
#include "slurm_ai/topology/fabric.hpp"
#include "slurm_ai/topology/node_topology.hpp"

namespace slurm_ai::cli {

std::string node_to_dot(const NodeTopology &t);
// Hosts are drawn as one box per leaf switch (their hostlist and count), so that a fabric
// of thousands of hosts stays readable.
std::string fabric_to_dot(const Fabric &f);

// Writes `dot` to `output`; the format follows the extension (.svg, .png, .pdf, or .dot
// for the text itself). Returns the format used.
Parsed<std::string> render_dot(const std::string &dot, const std::string &output);

}  // namespace slurm_ai::cli
