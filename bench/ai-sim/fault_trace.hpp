// A real fault trace, and its faults replayed on a simulated cluster.
//
// The trace (../shared/data/failures/infinitehbd-fault-trace.json): a JSON array of events
// {node_id, event_time (days, sorted), event_type fault_start|fault_end, fault_type {Level,
// Class, Desc}}; a fault_end ends the node's oldest fault not yet ended (a node may have a
// second fault before its first ends). Only nodes with a
// fault appear in it; the study sampled more (its population: 400 servers), the others
// without any fault in the 345 days.
//
// Replay. Each host of the cluster takes one server of the population:
//   random  servers drawn with the seed;
//   rack    servers that ever fault at the same moment (their faults start within a minute
//           of each other: a shared power feed, switch or batch of parts) go to the same
//           leaf switch, largest group first, then the others drawn with the seed; so
//           simultaneous faults stay neighbours, as they were.
// A cluster with more hosts than the population takes it again, each further copy a third
// of the trace later (wrapping), so that copies do not fault in step. The simulation's time
// 0 is day `start_day` of the trace; a fault that starts in the window stops what it hits
// for the fault's own duration; faults before the window are the failure history the
// select plugin would have kept (a count per host halving every week, by class).
// A fault of the network class (the node's NIC or its fabric cable) takes the host's link,
// not the host: the jobs that communicate through it (those on several hosts) stop, the
// jobs inside the host go on, and nothing new is placed on it until it is repaired.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "slurm_ai/common/input_error.hpp"
#include "slurm_ai/placement/failure_class.hpp"
#include "slurm_ai/topology/cluster_graph.hpp"

namespace slurm_ai::sim {

struct TraceFault {
    int server = 0;  // index into FaultTrace::servers
    double start_day = 0, end_day = 0;
    std::string level, cls, desc;  // as the trace gives them
    FailureClass kind = FailureClass::kOther;
};

struct FaultTrace {
    std::string source;
    std::vector<std::string> servers;  // those with a fault, by first appearance
    int population = 0;                // servers sampled, with or without faults
    std::vector<TraceFault> faults;    // by start
    double first_day = 0, last_day = 0;
};

// Population: how many servers the study followed (the file names only those with a fault;
// 400 for the InfiniteHBD trace). Errors name the file, the event and the field.
Parsed<FaultTrace> load_fault_trace(const std::string &path, int population);

enum class FaultMapping { kRandom, kRack };

struct ReplayedFault {
    double t = 0;  // seconds into the simulation
    int host = 0;
    double duration_s = 0;
    FailureClass kind = FailureClass::kOther;
    bool link = false;  // the host's fabric link, not the host
};

struct HostHistory {
    int host = 0;
    double t = 0;  // seconds, negative: before the simulation starts
    FailureClass kind = FailureClass::kOther;
};

struct Replay {
    std::vector<ReplayedFault> faults;  // by time
    std::vector<HostHistory> history;   // faults before the window, by time
    std::vector<int> server_of_host;    // -1: a server without faults
    double start_day = 0;
};

Replay replay_faults(const FaultTrace &trace, const ClusterGraph &graph, FaultMapping mapping,
                     double start_day, double length_days, std::uint64_t seed);

}  // namespace slurm_ai::sim
