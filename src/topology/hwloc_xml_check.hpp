// Private to the topology library: an hwloc XML document checked and rewritten into the
// layout libhwloc 2 reads (see hwloc_xml_check.cpp), or the first problem, naming the
// element, the attribute and the line.
#pragma once

#include <string>
#include <string_view>

#include "slurm_ai/common/input_error.hpp"

namespace slurm_ai::detail {

Parsed<std::string> prepare_for_hwloc(std::string_view text, std::string_view source);

}  // namespace slurm_ai::detail
