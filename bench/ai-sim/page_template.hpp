// A page's prose kept in a markdown file, its figures filled in by name: `{{name}}` in the
// template is replaced by the slot of that name. A line holding only a placeholder whose
// text is empty or ends with a newline becomes that text (a block of lines, or nothing).
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace slurm_ai::sim {

using Slots = std::map<std::string, std::string>;

// The filled page; std::runtime_error naming the placeholder when the template names a
// slot that `slots` lacks, or a slot the template never names (both are bugs of the
// report, not input).
std::string fill_page(std::string_view page_template, const Slots &slots);

// The template file's text; std::runtime_error naming the file when it cannot be read.
std::string read_page_template(const std::string &path);

}  // namespace slurm_ai::sim
