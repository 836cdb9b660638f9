// Why a pending job waits, from what slurmctld says now (the job's request and reason, its
// partition's nodes with their free GPUs, the running jobs' ends) and the select plugin's
// note of the job (its --ai-* options, the engine's reason): the wait explanation of
// placement/wait_explanation.hpp, for ai-explain and ai-metrics' map.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "slurm_ai/job/job_record.hpp"
#include "slurm_ai/placement/wait_explanation.hpp"
#include "slurm_ai/slurm/resize_ops.hpp"
#include "slurm_ai/slurm/slurm_client.hpp"

namespace slurm_ai {

struct PendingExplanation {
    std::optional<PendingNote> note;  // none: the engine has not held the job (no options known)
    std::optional<WaitExplanation> wait;  // none without a fabric (why_not says so)
    std::string why_not;
};

// `jobs` and `nodes` as SlurmClient lists them now.
PendingExplanation explain_pending(const elastic::ClusterModel &m, const JobInfo &job,
                                   const std::vector<JobInfo> &jobs,
                                   const std::vector<NodeInfo> &nodes);

}  // namespace slurm_ai
