// Gangs: jobs submitted with the same --ai-gang=NAME:SIZE[:TIMEOUT][:onfail=kill|keep] by
// one user start together or not at all. Slurm has no such notion; the select plugin keeps
// every member pending until all SIZE of them are pending and placeable at once, places
// them jointly (gang_placement.hpp), and holds the planned nodes for the members it has
// not started yet (gang_book.hpp); ai-elasticd releases gangs that timed out and ends the
// rest of a gang whose member failed (follow_up_gang below), from gangs.json (gang_file.hpp).
//
// This header is the rules, pure: no Slurm header, no file, no clock of its own. The one
// GangState enum is the barrier's verdict, the file's "status" and what ai-elasticd reads.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "slurm_ai/job/job_hints.hpp"

namespace slurm_ai {

// A gang is named per user: two users' gangs called "train" are unrelated.
std::string gang_key(std::uint32_t user_id, std::string_view name);

// Where a gang's barrier stands.
enum class GangState {
    kWaiting,   // not all SIZE members are pending and eligible yet (the reason says what)
    kTimedOut,  // TIMEOUT passed before the gang could start: the pending ones are released
    kStarting,  // every member is there: place them all now
    kStarted,   // some members run: the pending rest start as soon as they fit
};
// "waiting", "timed_out", "starting" or "started" (gangs.json's words).
std::string_view to_string(GangState s);
// The inverse; nothing for any other text.
std::optional<GangState> gang_state_from(std::string_view text);
// "waiting, timed_out, starting or started": what an error says was expected.
std::string gang_state_list();

enum class MemberState { kPending, kRunning, kEnded };

// One member as slurmctld holds it: the facts, not a judgement (is_eligible judges).
struct GangMember {
    std::uint32_t job_id = 0;
    MemberState state = MemberState::kPending;
    bool held = false;                // priority 0 (scontrol hold)
    std::int64_t begin_time = 0;      // --begin; 0: none
    std::uint32_t dependencies = 0;   // dependencies not yet satisfied
    std::int64_t submit_time = 0;
    GangSpec spec;  // as this member declared it
};

// Pending and free to start at `now`: not held, its begin time reached, no dependency left.
bool is_eligible(const GangMember &m, std::int64_t now);

// Whether a gang may start now, from its members that have not ended.
struct GangVerdict {
    GangState state = GangState::kWaiting;
    std::string reason;
    std::int64_t deadline = 0;  // first submission + TIMEOUT; 0: no timeout
};

// `spec` is the gang as the job under test declared it. Members that disagree with it on
// SIZE make the gang wait with a reason naming them: nothing starts on a guess.
GangVerdict assess_gang(const GangSpec &spec, std::span<const GangMember> members,
                        std::int64_t now);

// What a gang does when a member ended in `end_state` (Slurm's state name) while others
// still run or wait: true when the others must be ended (onfail=kill and the member did
// not complete successfully).
bool gang_member_failed(const GangSpec &spec, std::string_view end_state);

// ai-elasticd's side: what becomes of a gang that gangs.json records, from its members as
// Slurm lists them now. Pure: the daemon carries out `actions` and keeps `released` and
// `failures_seen` in its state file so that a restart acts on nothing twice.
struct GangJob {
    std::uint32_t job_id = 0;
    MemberState state = MemberState::kPending;
    std::string slurm_state;  // Slurm's name of an ended job's state ("FAILED", ...)
    bool started = false;     // it ever ran (its job record exists)
};
struct GangAction {
    std::vector<std::uint32_t> cancel;  // jobs to cancel
    std::string comment;                // their AdminComment, "ai: ..."
};
struct GangFollowUp {
    std::vector<GangAction> actions;
    bool released = false;                     // the timeout was acted on now
    std::vector<std::uint32_t> failures_seen;  // members whose failure was handled now
    std::vector<std::uint32_t> waiting;        // live members of a gang that has not started
};
// `members` are the record's members Slurm still knows (ended ones included);
// `released_before` and `handled` are what earlier looks acted on.
GangFollowUp follow_up_gang(const GangSpec &spec, GangState state, std::int64_t deadline,
                            std::span<const GangJob> members, std::int64_t now,
                            bool released_before, const std::set<std::uint32_t> &handled);

}  // namespace slurm_ai
