// The resize operations ai-resize and ai-elasticd share, on Slurm's own mechanisms:
//   shrink  scontrol update JobId=J NodeList=<the nodes it keeps> (the batch host stays)
//   grow    an allocation with --dependency=expand:J (the select plugin places it next to
//           J's nodes), then NumNodes=0 on it once it runs: slurmctld moves its nodes
//           into J; the select plugin moves the GPUs too
//   notify  the job's view files (node list, host file, world size, generation), then
//           the signal it chose (the batch shell of a batch job, else every step)
// Every step is safe to repeat and to resume after a crash or a slurmctld restart: a grow
// is only an expansion job with a deadline in its comment, and whoever finds one past its
// deadline merges it (both jobs run) or cancels it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "slurm_ai/config/plugin_config.hpp"
#include "slurm_ai/elastic/elastic_state.hpp"
#include "slurm_ai/elastic/elastic_view.hpp"
#include "slurm_ai/placement/job_demand.hpp"
#include "slurm_ai/placement/placement_engine.hpp"
#include "slurm_ai/slurm/slurm_client.hpp"
#include "slurm_ai/topology/cluster_graph.hpp"

namespace slurm_ai::elastic {

// The cluster as the select plugin sees it: ai_select.conf (beside slurm.conf unless
// given) and the fabric and node files it names. Without a loadable topology, resizes
// fall back to Slurm's node order and `warning` says why.
struct ClusterModel {
    PluginConfig config;
    std::optional<ClusterGraph> graph;
    std::unique_ptr<PlacementEngine> engine;
    std::string state_dir;  // StateSaveLocation
    std::string view_dir;
    std::string warning;
};
std::unique_ptr<ClusterModel> load_cluster_model(SlurmClient &slurm, const std::string &conf_path);

// What ai-elasticd and ai-resize know of a job's start. `hints`: its --ai-* options, from
// its SPANK environment when this runs inside the job, else from the record the select
// plugin wrote at its start; empty when neither exists. `elastic_start_max`: the record's
// (JobRecord), 0 without one. `recorded`: the record was read. A running job may not have
// one yet (the plugin writes it as slurmctld starts the job), so a caller that keeps
// JobStarts reads again those without.
struct JobStart {
    JobHints hints;
    std::uint32_t elastic_start_max = 0;
    bool recorded = false;
};
JobStart job_start(const ClusterModel &m, const JobInfo &job);
JobHints job_hints(const ClusterModel &m, const JobInfo &job);
// The operations below read a job's options once each (job_hints), or take them from
// `known` where the caller already holds them: ai-elasticd keeps every job's JobStart,
// so it reads no record again at a resize.
JobDemand job_demand(const JobInfo &job, const JobHints &hints);
// The job's view as slurmctld has it now: nodes in rank order (the fabric's ring order,
// as the SPANK plugin numbers ranks), one process per GPU (else per task) on each.
ResizeView current_view(const ClusterModel &m, const JobInfo &job, const std::string &reason);

struct Notice {
    ResizeView view;
    std::string view_error;  // the files could not be written (the job can still ask)
    int signal = 0;          // 0: none sent
};
// Writes the job's view files and sends its signal (the chosen one, or `signal` when not
// 0). With no signal chosen, SIGCONT goes to the batch shell alone: harmless to a running
// process, and slurmctld lets the select plugin clear the accounting index that would
// otherwise refuse the job's next resize (see docs/elastic.md).
Notice notify_job(SlurmClient &slurm, const ClusterModel &m, std::uint32_t job_id,
                  const std::string &reason, int signal = 0, const JobHints *known = nullptr);

struct ShrinkResult {
    std::vector<std::string> released;
    std::string nodes;  // what the job keeps
    double comm_before_s = 0, comm_after_s = 0;
    Notice notice;
};
// Releases `count` nodes (those whose loss costs the job's communication least) or the
// `named` ones. Never the batch host; never below the job's --ai-elastic MIN unless force.
ShrinkResult shrink_job(SlurmClient &slurm, const ClusterModel &m, std::uint32_t job_id,
                        std::uint32_t count, const std::vector<std::string> &named, bool force,
                        const std::string &reason, int signal = 0,
                        const JobHints *known = nullptr);

// Expansion jobs (ours, by name) of a job that are still pending or running.
std::vector<JobInfo> expansions_of(const std::vector<JobInfo> &jobs, std::uint32_t job_id);

// Submits the expansion job; throws when the job does not run, is above its --ai-elastic
// MAX (unless force) or already has a grow under way.
GrowOp start_grow(SlurmClient &slurm, const ClusterModel &m, std::uint32_t job_id,
                  std::uint32_t add, std::int64_t now, std::uint32_t timeout_s, bool force,
                  const std::string &reason, const JobHints *known = nullptr);

struct GrowStep {
    enum class Status { kWaiting, kMerged, kFailed } status = Status::kWaiting;
    std::string reason;
};
// One look at a grow: merges the expansion job once it runs, cancels it past the deadline
// or when the job it grows has ended. kMerged is also the answer when the merge happened
// but its reply was lost (the job already has the nodes).
GrowStep advance_grow(SlurmClient &slurm, const GrowOp &op, std::int64_t now);

}  // namespace slurm_ai::elastic
