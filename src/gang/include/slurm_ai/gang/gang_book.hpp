// What the select plugin remembers of gangs between two tests of their members: each
// gang's last verdict with every job that was ever a live member (what gangs.json carries
// to ai-elasticd), and the plan that holds the nodes of the members not started yet, so
// that a gang placed jointly starts on the nodes it was placed on.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "slurm_ai/gang/gang.hpp"
#include "slurm_ai/gang/gang_file.hpp"

namespace slurm_ai {

// Slurm nodes (indices into slurmctld's node table) planned for each member of one gang.
struct GangPlan {
    std::map<std::uint32_t, std::vector<int>> nodes;  // member -> Slurm nodes
    std::set<std::uint32_t> started;
    std::int64_t made_at = 0;
};

class GangBook {
  public:
    // A plan that none of its members has started on within this time is dropped, so that
    // nodes are never held for a gang slurmctld no longer tries to start.
    static constexpr std::int64_t kPlanTtlS = 120;
    // Gangs nobody has looked at for this long are history: save() leaves them out.
    static constexpr std::int64_t kForgetAfterS = 86400;

    // The verdict of gang `key` from its members (assess_gang, members that declared
    // another gang left out), kept with every job that was ever a live member.
    GangVerdict judge(const std::string &key, std::uint32_t user_id, const GangSpec &spec,
                      std::span<const GangMember> members, std::int64_t now);

    // The gang's plan, or null when it has none or nobody started on it within kPlanTtlS
    // (such a plan is dropped).
    GangPlan *plan(const std::string &key, std::int64_t now);
    void set_plan(const std::string &key, GangPlan plan);
    void drop_plan(const std::string &key);
    // A gang that waits again (a member left before it started): its plan, if nobody has
    // started on it, would only hold nodes until it expires.
    void drop_unstarted_plan(const std::string &key);
    // Slurm nodes planned for unstarted members of gangs that `job_id` is not in.
    std::vector<int> reserved_for_others(std::uint32_t job_id, std::int64_t now);
    // A member that starts no longer needs its nodes held; a plan whose members have all
    // started is done.
    void member_started(std::uint32_t job_id);
    // A member that ends (or is cancelled) before its gang started frees its plan's nodes.
    void member_ended(std::uint32_t job_id);

    // Writes gangs.json when a gang changed since the last write; the error otherwise.
    std::optional<std::string> save(const std::string &state_dir, std::int64_t now);

  private:
    std::map<std::string, GangPlan> plans_;      // gang key -> plan
    std::map<std::string, GangRecord> records_;  // gang key -> last verdict
    bool dirty_ = false;
};

}  // namespace slurm_ai
