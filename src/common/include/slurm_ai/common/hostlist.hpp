// Slurm hostlist expressions: "sl390lin[1-5,7-11]", "n[01-10]", "a,b[1-2]". Expansion keeps
// zero padding ("n[08-10]" -> n08 n09 n10); compression produces Slurm's own form, ranges
// sorted numerically and grouped by prefix, suffix and padding width.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "slurm_ai/common/input_error.hpp"

namespace slurm_ai {

// Bounds the memory a hostile or mistyped file can take ("Nodes=n[1-999999999]" on many
// lines): names one expression, or one file, may give. Far above any real cluster.
inline constexpr std::size_t kMaxHostNames = std::size_t{1} << 20;
// Slurm's limit on a switch, block or host name, as the topology readers apply it.
inline constexpr std::size_t kSlurmNameMax = 64;

// `field` names the expression in errors (e.g. "Nodes"). At most `limit` names.
Parsed<std::vector<std::string>> expand_hostlist(std::string_view expr, std::string_view field,
                                                 std::size_t limit = kMaxHostNames);

// Inverse of expand_hostlist (order of the result is Slurm's sorted order). Duplicates are
// dropped. Names must satisfy is_host_name() for the result to expand back to them.
std::string compress_hostlist(std::vector<std::string> names);

// True when `name` can stand as it is in a hostlist and in a Slurm config line: 1 to 255
// printable ASCII characters, none of them blank or one of  [ ] , # = " ' \ .
bool is_host_name(std::string_view name);

// What the topology readers accept as a switch, block or host name, said in an error's
// "expected": is_host_name() and at most 64 characters (Slurm's limit on a switch name).
inline std::string name_rule(std::string_view what) {
    return std::string(what) +
           " of 1 to 64 printable characters without blanks or any of [ ] , # = \" ' \\";
}

}  // namespace slurm_ai
