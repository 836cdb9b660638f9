// A job's task DAG (--ai-dag=FILE): tasks with GPU counts, and edges carrying bytes from
// one task to another, each edge also a dependency (the target waits for the source).
//
// JSON format:
//   {"tasks": [{"name": "embed", "gpus": 2, "compute_s": 0.01}, ...],
//    "edges": [{"from": "embed", "to": "stage1", "bytes": "64M"}, ...]}
// "gpus" defaults to 1 and "compute_s" (seconds of work per step) to 0; "bytes" is a
// number or a size string as the --ai-comm sizes. Names are unique; edges name existing
// tasks; the graph must be acyclic.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "slurm_ai/common/input_error.hpp"

namespace slurm_ai {

struct DagTask {
    std::string name;
    std::uint32_t gpus = 1;
    double compute_s = 0;
    bool operator==(const DagTask &) const = default;
};

struct DagEdge {
    std::uint32_t from = 0, to = 0;  // task indexes
    std::uint64_t bytes = 0;
    bool operator==(const DagEdge &) const = default;
};

struct TaskDag {
    std::vector<DagTask> tasks;
    std::vector<DagEdge> edges;

    std::uint32_t total_gpus() const;
    // Tasks in an order where every edge goes forward (the file's order when it already is).
    std::vector<std::uint32_t> topological_order() const;
    bool operator==(const TaskDag &) const = default;
};

inline constexpr std::size_t kMaxDagTasks = 100000;

// Errors name the source, the line (where the JSON parser gives one) and the field path,
// e.g. "tasks[3].gpus".
Parsed<TaskDag> parse_task_dag(std::string_view json_text, std::string_view source);
Parsed<TaskDag> load_task_dag(const std::string &path);

// One-line JSON with short keys, small enough to travel in a job's environment:
// {"t":[["embed",2,0.01],...],"e":[[0,1,67108864],...]}. parse_task_dag reads it back.
std::string compact_task_dag(const TaskDag &dag);

void to_json(nlohmann::json &j, const TaskDag &dag);

}  // namespace slurm_ai
