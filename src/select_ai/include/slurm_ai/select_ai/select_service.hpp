// The select plugin's mind, without Slurm: it holds the configuration, the cluster graph
// and the engine, decides where each job should go given the free view slurmctld hands
// it, remembers the decision until the job starts, writes the per-job record that
// ai-explain shows, and keeps the failure history across restarts.
//
// Nodes are named by slurmctld's node index; the service maps them to the fabric's hosts
// by name. Every public function is safe to call in any state: before a successful load
// every job passes through to cons_tres.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "slurm_ai/common/clock.hpp"
#include "slurm_ai/config/plugin_config.hpp"
#include "slurm_ai/gang/gang_book.hpp"
#include "slurm_ai/gang/gang_placement.hpp"
#include "slurm_ai/job/job_options.hpp"
#include "slurm_ai/job/job_record.hpp"
#include "slurm_ai/placement/cluster_state.hpp"
#include "slurm_ai/placement/failure_history.hpp"
#include "slurm_ai/select_ai/select_node.h"

namespace slurm_ai {

struct SelectJob {
    std::uint32_t job_id = 0;
    std::uint32_t min_nodes = 1, max_nodes = 1;
    std::uint32_t gpus_per_node = 0, total_gpus = 0, tasks = 1;
    std::uint32_t pending_s = 0;
    std::vector<const char *> env;  // the job's SPANK environment
    std::uint32_t time_limit_s = 0;  // 0: none or unknown
};

// One Slurm node as a job test sees it: the C adapter's own array, read in place.
using SelectNode = ai_node_t;

struct SelectOutcome {
    enum class Kind { kPlaced, kWait, kPassthrough } kind = Kind::kPassthrough;
    std::vector<int> nodes;   // Slurm node indexes, in rank order (kPlaced)
    std::vector<std::uint64_t> gpus;  // the engine's GPUs on each of them (bit i: GPU i)
    std::vector<int> widen;   // the subtree around them, for a second try
    std::string reason;       // kWait/kPassthrough: why; kPlaced: a summary
    bool log_reason = false;  // true the first time this job falls back
    // Node counts for cons_tres where they differ from the job's request: an elastic job
    // (--ai-elastic=MIN:MAX) starts with what fits between MIN and MAX. 0: the request's.
    std::uint32_t min_nodes = 0, max_nodes = 0, req_nodes = 0;
    std::string comment;  // for a job that waits: its SystemComment (a gang's reason)
};

// A job of the gang of the job under test, as the adapter found it in slurmctld's list:
// the facts GangMember judges (its job_id and spec are the service's to fill).
struct SelectGangMember {
    SelectJob job;
    GangMember facts;
    std::vector<std::uint8_t> usable;  // per Slurm node, for pending members
};

class SelectService {
  public:
    // `clock` is what decisions and records read of time; `work_budget` > 0 bounds each
    // decision's search in work instead of ai_select.conf's TimeBudgetMs
    // (EngineOptions::work_budget). The defaults are production's; the fuzz targets pass
    // a fixed clock and a work budget, so that an input takes the same path at every run.
    explicit SelectService(Clock clock = {}, std::uint32_t work_budget = 0);
    const Clock &clock() const { return clock_; }
    ~SelectService();

    // Reads the configuration and the topology it names. On any error the previous
    // state (if any) stays in force and the error is returned.
    std::optional<InputError> load(const std::string &conf_path, const std::string &default_fabric,
                                   const std::vector<std::string> &slurm_nodes);
    bool ready() const;
    const PluginConfig *config() const;

    SelectOutcome decide(const SelectJob &job, std::span<const SelectNode> nodes);
    // An expansion job (--dependency=expand:J) is placed for J: `expands` are the Slurm
    // nodes J holds, `expands_env` J's SPANK environment; the new nodes are those that
    // keep the grown J's communication cheapest (plan_grow), next to J's own.
    SelectOutcome decide_expansion(const SelectJob &job, std::uint32_t expands_job_id,
                                   std::span<const int> expands,
                                   const std::vector<const char *> &expands_env,
                                   std::span<const SelectNode> nodes);

    // A job of a gang (--ai-gang). It waits, with a reason, until every member is pending;
    // then all pending members are placed at once and the plan is kept: each member
    // starts on its planned nodes, and gang_reserved() keeps other jobs off them. With
    // place false (backfill's will-run test) only the barrier is checked: kPassthrough
    // when the gang may start, kWait otherwise.
    SelectOutcome decide_gang(const SelectJob &job, std::uint32_t user_id,
                              std::span<const SelectGangMember> members,
                              std::span<const SelectNode> nodes, std::int64_t now, bool place);
    // Slurm nodes planned for gang members that have not started, of gangs other than
    // job_id's own; another job's run-now test leaves them out.
    std::vector<int> gang_reserved(std::uint32_t job_id, std::int64_t now);
    // Writes <state_dir>/ai_select/gangs.json (what ai-elasticd reads to release timed-out
    // gangs and act on failed members) when a gang changed since the last write.
    std::optional<std::string> save_gangs(const std::string &state_dir, std::int64_t now);
    // The node counts an --ai-elastic job may start with: MIN:MAX as typed in its SPANK
    // environment, clamped into the node range slurmctld accepts for it (elastic_within).
    std::optional<ElasticSpec> elastic_start(std::uint32_t job_id, std::span<const char *const> env,
                                             NodeRange slurm);
    // The job's --ai-* options, decoded once per job and environment (every reader in
    // slurmctld goes through here; the C adapter through ai_select_job_traits).
    const JobOptions &options(std::uint32_t job_id, std::span<const char *const> env) {
        return options_.get(job_id, env);
    }
    // How many times a job's environment was decoded, and how many jobs are cached.
    std::uint64_t option_decodes() const { return options_.decodes(); }
    std::size_t cached_jobs() const { return options_.size(); }

    // At job start: writes <state_dir>/ai_select/jobs/<id>.json and returns the one-line
    // summary for the job's SystemComment. `slurm` is the node range slurmctld accepts for
    // the job: when its start range (elastic_within) is not its --ai-elastic MIN:MAX, the
    // record (`elastic_start`) and the summary say so.
    std::string record(const std::string &state_dir, std::uint32_t job_id, const std::string &nodes,
                       const std::string &gpus, const std::vector<const char *> &env,
                       NodeRange slurm = {});
    // Writes the notes of jobs that began to wait since the last call (PendingNote,
    // job_record.hpp: once a job) and removes those of jobs that started or ended. Returns
    // the I/O error naming the file, if any; the rest are still written.
    std::optional<std::string> save_pending(const std::string &state_dir);
    // What plain cons_tres would have chosen for the job (Debug=yes), kept until its record
    // is written or it is forgotten.
    void note_stock(std::uint32_t job_id, std::string nodes);
    void forget(std::uint32_t job_id);

    // A node went DOWN (down) or DRAIN with Slurm's reason text: a DOWN counts in its
    // failure history by the reason's class (failure_class.hpp), a DRAIN only when the
    // reason names a failing part. True when it counted. The history steers placements
    // away (the risk model's weekly count, or the learned model's inputs).
    bool note_failure(const std::string &node, double now_s, const std::string &reason = {},
                      bool down = true);
    double failures(const std::string &node, double now_s) const;  // the weekly count
    const HostFailures *history(const std::string &node) const;
    // What the last successful load has to say besides success (a RiskModel= not used);
    // empty when nothing.
    const std::string &load_note() const { return load_note_; }

    // The failure history, as JSON in <dir>/ai_select_state.json. Saving returns the I/O
    // error naming the file; a rejected file keeps the history in memory as it was.
    std::optional<std::string> save_state(const std::string &dir) const;
    std::optional<InputError> restore_state(const std::string &dir);

  private:
    struct Loaded;
    Clock clock_;
    std::uint32_t work_budget_;
    std::unique_ptr<Loaded> loaded_;
    std::string load_note_;
    FailureHistory failures_;
    std::map<std::uint32_t, JobDecision> decisions_;  // job id -> until the job starts
    // Multi-GPU jobs tested and not started: job id -> (size, when last tested). Slurm
    // tests every pending job each scheduling pass, so these are the queue's sizes the
    // engine keeps room for (ClusterState::wanted).
    std::map<std::uint32_t, std::pair<ClusterState::WantedSize, double>> waiting_;
    // The sizes of the multi-GPU jobs first tested in each hour of the last ShapeHistory
    // (ClusterState::recent), oldest hour first: a job counts once while it stays in
    // waiting_.
    std::deque<std::pair<long, std::vector<ClusterState::WantedSize>>> recent_;
    // Jobs held for a better placement (PlacementHold): job id -> (first held, when last
    // tested). The hold runs from the first; a job not tested for a while starts afresh.
    std::map<std::uint32_t, std::pair<double, double>> held_;
    // job id -> why the engine left the job to cons_tres (logged once, recorded at start)
    std::map<std::uint32_t, std::pair<FallbackClass, std::string>> fallbacks_;
    std::map<std::uint32_t, std::string> stock_choices_;  // job -> cons_tres's nodes
    // Jobs the engine did not start, the notes still to write, those to remove.
    std::set<std::uint32_t> pending_;
    std::map<std::uint32_t, PendingNote> pending_new_;
    std::set<std::uint32_t> pending_gone_;
    void note_pending(const SelectJob &job, const JobOptions &options);
    void note_waiting(std::uint32_t job_id, const ClusterState::WantedSize &size, double now);
    void add_sizes(ClusterState &state, double t) const;  // wanted and recent, at t
    void pending_over(std::uint32_t job_id);
    JobOptionsCache options_;

    // The job's demand from its request and options (the configured default pattern, its
    // DAG); nullopt with the reason when the DAG cannot be read or does not fit the job.
    std::optional<JobDemand> demand_of(const SelectJob &job, const JobOptions &options,
                                       std::string *why) const;
    // What is free for the job: its candidate nodes as hosts, their free GPUs, Weight
    // and failure history; `candidates` counts the usable hosts.
    ClusterState free_view(std::span<const SelectNode> nodes, int *candidates) const;
    // A placement becomes the job's outcome (nodes, widening subtree, summary) and its
    // decision is kept for the record written at its start.
    SelectOutcome placed(const SelectJob &job, const JobDemand &demand, const Placement &p,
                         const ClusterState &state);

    GangBook gangs_;  // verdicts and plans; gangs.json. select_gangs.cpp.
    // The jobs with an --ai-gang as the gang library's members (GangBook::judge keeps
    // those of the job's own gang).
    std::vector<GangMember> gang_members(std::span<const SelectGangMember> members);
    // The gang's members placed together on `state` (place_gang) and kept as its plan;
    // the job's own outcome (nullopt when the job is not among the parts), or kWait with
    // why they do not fit together now. select_gangs.cpp.
    std::optional<SelectOutcome> plan_gang(const SelectJob &job, const GangSpec &spec, const std::string &key,
                            const std::vector<GangPart> &parts, const ClusterState &state,
                            const PlacementPolicy &policy, const JobDemand &demand,
                            std::int64_t now);
    // Every pending member of the job's gang as a part the engine places with the others:
    // its demand, and the hosts it may use (the job's own from `nodes`, the others' from
    // what slurmctld said of them). nullopt with `why` naming a member whose request is
    // not valid. select_gangs.cpp.
    std::optional<std::vector<GangPart>> pending_gang(const SelectJob &job, const GangSpec &spec,
                                                      std::span<const SelectGangMember> members,
                                                      std::span<const SelectNode> nodes,
                                                      std::string &why);

    // Running jobs' shares of the uplinks their traffic crosses, (switch, share of its
    // capacity) each: what the engine sees as other jobs' load (ClusterState::
    // uplink_load). select_uplinks.cpp.
    std::map<std::uint32_t, std::vector<std::pair<int, double>>> uplink_shares_;
    // A job that starts (or runs at a restart) on `nodes` with `gpus` ("n1:0,1 n2:2,3").
    void note_running(std::uint32_t job_id, const std::string &nodes, const std::string &gpus,
                      const JobOptions &options);
    void add_uplink_load(ClusterState &state) const;
};



}  // namespace slurm_ai
