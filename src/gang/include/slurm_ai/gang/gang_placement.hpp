// A gang's joint placement: every member placed at once, or none.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "slurm_ai/placement/cluster_state.hpp"
#include "slurm_ai/placement/job_demand.hpp"
#include "slurm_ai/placement/placement.hpp"
#include "slurm_ai/placement/placement_engine.hpp"

namespace slurm_ai {

// One member to place: its demand and the hosts it may use (1 = usable), on top of what
// `base` already has free.
struct GangPart {
    std::uint32_t job_id = 0;
    JobDemand demand;
    std::vector<std::uint8_t> usable;  // per host of the graph
};

struct GangPlacement {
    std::vector<Placement> parts;  // one per GangPart, same order
    bool joint = false;            // placed as one combined job, then split
    std::string reason;            // why there is none (parts empty)
};

// Places every part at once or none. When all parts have the same GPUs per host and may
// use the same hosts, the engine places them as one job (the gang stays as compact as one
// job would) and the hosts are handed out in rank order, each part a contiguous run;
// otherwise the parts are placed one after another, largest first, each taking its hosts
// out of the free view before the next.
GangPlacement place_gang(const PlacementEngine &engine, std::span<const GangPart> parts,
                         const ClusterState &base, const PlacementPolicy &policy = engine_policy());

}  // namespace slurm_ai
