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
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "slurm_ai/plugin_config.hpp"

namespace slurm_ai {

struct SelectJob {
    std::uint32_t job_id = 0;
    std::uint32_t min_nodes = 1, max_nodes = 1;
    std::uint32_t gpus_per_node = 0, total_gpus = 0, tasks = 1;
    std::uint32_t pending_s = 0;
    std::vector<const char *> env;  // the job's SPANK environment
};

struct SelectNode {
    bool usable = false;  // in the candidate bitmap
    std::uint64_t free_gpus = 0;
    double weight = 1;  // Slurm's node Weight
};

struct SelectOutcome {
    enum class Kind { kPlaced, kWait, kPassthrough } kind = Kind::kPassthrough;
    std::vector<int> nodes;  // Slurm node indexes, in rank order (kPlaced)
    std::vector<std::vector<int>> gpus;
    std::vector<int> widen;   // the subtree around them, for a second try
    std::string reason;       // kWait/kPassthrough: why; kPlaced: a summary
    bool log_reason = false;  // true the first time this job falls back
};

class SelectService {
  public:
    SelectService();
    ~SelectService();

    // Reads the configuration and the topology it names. On any error the previous
    // state (if any) stays in force and the error is returned.
    std::optional<std::string> load(const std::string &conf_path, const std::string &default_fabric,
                                    const std::vector<std::string> &slurm_nodes);
    bool ready() const;
    const PluginConfig *config() const;

    SelectOutcome decide(const SelectJob &job, std::span<const SelectNode> nodes);

    // At job start: writes <state_dir>/ai_select/jobs/<id>.json and returns the one-line
    // summary for the job's SystemComment.
    std::string record(const std::string &state_dir, std::uint32_t job_id, const std::string &nodes,
                       const std::string &gpus, const std::vector<const char *> &env,
                       const std::string &stock_nodes);
    void forget(std::uint32_t job_id);

    // A node went down: its decayed failure count grows and steers placements away.
    void note_failure(const std::string &node, double now_s);
    double failures(const std::string &node, double now_s) const;

    // The failure history, as JSON in <dir>/ai_select_state.json.
    std::optional<std::string> save_state(const std::string &dir) const;
    std::optional<std::string> restore_state(const std::string &dir);

  private:
    struct Loaded;
    std::unique_ptr<Loaded> loaded_;
    struct History {
        double count = 0;
        double at_s = 0;
    };
    std::map<std::string, History> failures_;
    std::map<std::uint32_t, std::string> decisions_;  // job id -> decision JSON
    std::set<std::uint32_t> fallback_logged_;
};

inline constexpr double kFailureHalfLifeS = 7 * 86400.0;

}  // namespace slurm_ai
