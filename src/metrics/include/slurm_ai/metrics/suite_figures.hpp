// The suite's own figures for a scrape, the families ai-metrics serves beside Slurm's:
// what the select plugin decided (from its job records: who placed each job, why the
// engine fell back, how long it took), how well the running multi-GPU jobs are placed
// (the model's efficiency: communication time on the ideal placement over that on the
// job's own), how many leaf switches and NVLink domains each spans, and where free GPUs
// sit, per leaf and per domain, with those no pending job can use (stranded); the load the
// running jobs put on each leaf's uplinks; node failures by what ai-recover did, its time
// to running again, elastic resizes, and the recent failures by class that steer
// placements away. Labels
// are the fabric's names and fixed words, never a job id: their number is bounded by the
// cluster.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "slurm_ai/checkpoint/checkpoint_restart_log.hpp"
#include "slurm_ai/job/job_record.hpp"
#include "slurm_ai/metrics/exposition.hpp"
#include "slurm_ai/placement/failure_history.hpp"

namespace slurm_ai::metrics {

// A job as Slurm lists it now.
struct JobNow {
    std::uint32_t job_id = 0;
    bool running = false;            // else pending
    std::vector<std::string> hosts;  // a running job's nodes
    std::uint32_t gpus_per_node = 0;
};

// A host as Slurm and the fabric know it now.
struct HostNow {
    std::string name;
    std::string leaf;    // its leaf switch in the fabric; "" for none
    std::string domain;  // its NVLink domain; "" for none
    std::uint32_t free_gpus = 0;
    bool usable = true;  // up and not drained: its free GPUs can be given
    // Its cables into the fabric: the leaf switch each reaches and its rate, GB/s.
    std::vector<std::pair<std::string, double>> ports;
};

// A leaf switch: its rail ("" off rails) and the capacity of its uplinks, GB/s.
struct LeafNow {
    std::string name;
    std::string rail;
    double uplink_gbs = 0;
};

struct SuiteInputs {
    std::vector<JobRecord> records;  // every job record of the state directory
    std::vector<JobNow> jobs;
    std::vector<HostNow> hosts;
    std::vector<LeafNow> leaves;
    // ai-recover's restart logs, every record of every job's log (node failures and what
    // was done, checkpoint requests, runs again with the time since the node went DOWN).
    std::vector<checkpoint::RestartRecord> restarts;
    // Node-list changes of resizable jobs, summed over their views: those that added
    // nodes, took nodes away, and replaced nodes one for one.
    std::uint64_t grows = 0, shrinks = 0, replaces = 0;
    // The select plugin's failure history (ai_select_state.json), and the time to read
    // its decayed counts at (seconds since the epoch).
    FailureHistory failures;
    double now_s = 0;
    // ai-recover's saved lease book (lease.hpp), when it keeps one: the nodes that hold a
    // lease with --ai-checkpoint jobs, and the jobs taken over not yet gone from their node.
    struct Leases {
        std::size_t nodes = 0, revoked_jobs = 0;
    };
    std::optional<Leases> leases;
};

void add_suite_figures(Registry &registry, const SuiteInputs &in);

}  // namespace slurm_ai::metrics
