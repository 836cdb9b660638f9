// Gangs: jobs submitted with the same --ai-gang=NAME:SIZE[:TIMEOUT][:onfail=kill|keep] by
// one user start together or not at all. Slurm has no such notion; the select plugin keeps
// every member pending until all SIZE of them are pending and placeable at once, places
// them jointly, and holds the planned nodes for the members it has not started yet.
//
// Pure logic, no Slurm header: the plugin hands in the members it found in slurmctld's
// job list and the free view; ai-elasticd uses the same rules for timeouts and failures.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "slurm_ai/job/job_hints.hpp"
#include "slurm_ai/placement/cluster_state.hpp"
#include "slurm_ai/placement/job_demand.hpp"
#include "slurm_ai/placement/placement.hpp"
#include "slurm_ai/placement/placement_engine.hpp"

namespace slurm_ai {

// A gang is named per user: two users' gangs called "train" are unrelated.
std::string gang_key(std::uint32_t user_id, std::string_view name);

enum class MemberState { kPending, kRunning, kEnded };

struct GangMember {
    std::uint32_t job_id = 0;
    MemberState state = MemberState::kPending;
    bool eligible = true;  // pending and free to start now: not held, no unmet
                           // dependency, begin time reached
    std::int64_t submit_time = 0;
    GangSpec spec;  // as this member declared it
};

// Whether a gang may start now, from its members that have not ended.
struct GangVerdict {
    enum class Kind {
        kWait,      // not all SIZE members are pending and eligible (reason says what)
        kTimedOut,  // TIMEOUT passed before the gang could start: release the pending ones
        kStart,     // every member is there: place them all now
        kLate,      // some members already run: the pending rest start as soon as they fit
    } kind = Kind::kWait;
    std::string reason;
    std::int64_t deadline = 0;  // first submission + TIMEOUT; 0: no timeout
};

// `spec` is the gang as the job under test declared it. Members that disagree with it on
// SIZE make the gang wait with a reason naming them: nothing starts on a guess.
GangVerdict assess_gang(const GangSpec &spec, std::span<const GangMember> members,
                        std::int64_t now);

// What a gang does when `member` ended in `end_state` (Slurm's state name) while others
// still run or wait: true when the others must be ended (onfail=kill and the member did
// not complete successfully).
bool gang_member_failed(const GangSpec &spec, std::string_view end_state);

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
