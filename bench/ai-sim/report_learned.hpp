// Section 8 of `ai-sim report`: the learned placement scorers that `ai-sim train-place`
// made, as their files record them (contrib/slurm.conf.d/placement-model-*.json, one per
// scenario with the SRR terms and one, "-nosrr", without): at each judged cluster size,
// their mean JCT on held-out windows against the engine's on the same jobs. The report
// reads the files rather than training them again (hours on this machine); the commands
// that made them are in docs/placement.md.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "slurm_ai/common/input_error.hpp"
#include "slurm_ai/placement/learned_placement.hpp"

namespace slurm_ai::sim {

struct LearnedPlacementFile {
    std::string scenario;  // from the file's name: placement-model-<scenario>[-nosrr].json
    std::string file;      // its name
    LearnedPlacement model;
};

// Every placement-model-*.json of `dir`, by scenario then with the SRR terms first.
Parsed<std::vector<LearnedPlacementFile>> load_learned_placement(const std::string &dir);

// The section's Markdown, and its figures as JSON (learned_placement).
std::string learned_placement_section(const std::vector<LearnedPlacementFile> &files);
nlohmann::json learned_placement_json(const std::vector<LearnedPlacementFile> &files);

}  // namespace slurm_ai::sim
