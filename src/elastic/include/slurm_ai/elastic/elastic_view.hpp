// What a resizable job reads to follow its own resizes: one directory per job under the
// view directory (ElasticViewDir in ai_select.conf), holding
//   view.json  {"job_id", "generation", "grows", "shrinks", "nodes" (rank order),
//               "nodelist", "num_nodes", "procs_per_node", "world_size", "master_addr",
//               "updated_at", "reason"}
//   hostfile   one "NODE slots=PROCS" line per node, in rank order (DeepSpeed/MPI style)
//   env        sh lines: SLURM_JOB_NODELIST, SLURM_NNODES, WORLD_SIZE, MASTER_ADDR, ...
// The generation grows by one whenever the node list changes, so a torchrun-style
// elastic agent re-rendezvouses exactly when it should. Every writer (ai-resize inside or
// outside the job, ai-elasticd) writes the same files from slurmctld's record of the job,
// each file replaced atomically.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "slurm_ai/common/input_error.hpp"
#include "slurm_ai/job/job_hints.hpp"

namespace slurm_ai {

struct ResizeView {
    std::uint32_t job_id = 0;
    std::uint64_t generation = 0;
    // Of the generations, those that added nodes and those that took nodes away (the rest
    // replaced nodes one for one). 0 in views written before they were counted.
    std::uint64_t grows = 0, shrinks = 0;
    std::vector<std::string> nodes;  // rank order
    std::uint32_t procs_per_node = 1;
    std::int64_t updated_at = 0;
    std::string reason;  // what the last change was

    std::uint32_t world_size() const {
        return static_cast<std::uint32_t>(nodes.size()) * procs_per_node;
    }
    bool operator==(const ResizeView &) const = default;
};

void to_json(nlohmann::json &j, const ResizeView &v);
Parsed<ResizeView> parse_job_view(std::string_view text, std::string_view source);

std::string hostfile_text(const ResizeView &v);
std::string env_text(const ResizeView &v);

// <StateSaveLocation>/ai_elastic/views unless ElasticViewDir names another directory.
std::string resolve_view_dir(std::string_view configured, std::string_view state_save_location);
std::string job_view_dir(std::string_view view_dir, std::uint32_t job_id);

// Writes the job's files into job_dir (job_view_dir(), or any directory a job wants its
// own copy in). The generation is the one on disk, plus one when the nodes differ from
// it (0 for a first view); files that would not change are left alone. owner_uid >= 0:
// the directory and files are given to that user (so that the job's own ai-resize can
// update them). Returns the view as it is on disk; throws std::runtime_error naming the
// file that could not be written.
ResizeView publish_view(std::string_view job_dir, ResizeView view, long owner_uid = -1);
// The view in job_dir. None when there is none, and when view.json is damaged: the next
// publish_view writes a fresh one (generation 0), which is the repair.
std::optional<ResizeView> read_view(std::string_view job_dir);

// "USR2" for SIGUSR2; the number for signals without a name.
std::string signal_name(int signal);

// The variables a task of the job gets (for the SPANK plugin's task environment):
//   SLURM_AI_ELASTIC_VIEW, SLURM_AI_ELASTIC_HOSTFILE, SLURM_AI_ELASTIC_ENV  the files above
//   SLURM_AI_ELASTIC_MIN, SLURM_AI_ELASTIC_MAX                           when elastic
//   SLURM_AI_ELASTIC_SIGNAL                                               the resize signal
// spec may be null (a job resized by hand without --ai-elastic): the file paths only.
std::vector<std::pair<std::string, std::string>> elastic_task_env(const ElasticSpec *spec,
                                                                  std::uint32_t job_id,
                                                                  std::string_view view_dir);

}  // namespace slurm_ai
