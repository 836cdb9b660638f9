// Slurm's GRES lists: a node's as slurmctld reports it (node_info_t's gres and gres_used:
// comma-separated entries name[:type]:count[(details)], the details possibly holding
// commas themselves, "gpu:v100:2(IDX:0,2)") and a job's TRES per node ("gres/gpu:4",
// "gres:gpu:v100:4" before 23.x, among other TRES separated by ',' or ';').
#pragma once

#include <cstdint>
#include <string_view>

namespace slurm_ai {

// The GPU count of such a list: every gpu entry's count, whatever its type ("gpu:v100:4",
// "gres/gpu:2", not "gpu_mem:..." or "shard:8"); 0 without GPUs or for text of another
// shape.
std::uint32_t gres_gpu_count(std::string_view gres);

}  // namespace slurm_ai
