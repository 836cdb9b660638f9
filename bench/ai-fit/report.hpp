// ai-fit's three ways of printing a FitReport: a plain-text table, a markdown table (the
// form docs/cost-model.md quotes) and JSON (with every configuration's prediction).
#pragma once

#include <string>

#include "validation.hpp"

namespace slurm_ai::fit {

std::string to_text(const FitReport &r);
std::string to_markdown(const FitReport &r);
std::string to_json_text(const FitReport &r);

}  // namespace slurm_ai::fit
