// What one scrape or one look at the map shows: Slurm's jobs and nodes now, the select
// plugin's job records, ai-recover's restart logs and the resizable jobs' views, put on
// the fabric the select plugin places on. Records and logs are re-read only when their
// file changed, so a scrape of a cluster with years of records costs a directory walk.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "slurm_ai/checkpoint/checkpoint_restart_log.hpp"
#include "slurm_ai/job/job_record.hpp"
#include "slurm_ai/metrics/cluster_map.hpp"
#include "slurm_ai/metrics/suite_figures.hpp"
#include "slurm_ai/slurm/resize_ops.hpp"
#include "slurm_ai/slurm/slurm_client.hpp"

namespace slurm_ai::metrics_daemon {

struct Snapshot {
    metrics::SuiteInputs inputs;
    metrics::ClusterMap map;
    bool slurm_up = true;     // slurmctld answered
    std::string slurm_error;  // why not
};

class Collector {
  public:
    Collector(SlurmClient &slurm, std::unique_ptr<elastic::ClusterModel> model);
    // with_map: also the map, with the pending jobs explained (engine searches, user
    // names): only /map and --map ask for it, never a scrape.
    Snapshot take(bool with_map);
    const elastic::ClusterModel &model() const { return *model_; }

  private:
    // A file's parsed content, kept while its size and time stay the same.
    template <typename T>
    struct Cached {
        std::uintmax_t size = 0;
        std::filesystem::file_time_type mtime;
        T value;
    };
    std::vector<JobRecord> records();
    std::vector<checkpoint::RestartRecord> restarts();
    void resizes(metrics::SuiteInputs &in) const;
    std::optional<metrics::SuiteInputs::Leases> leases() const;
    std::vector<std::pair<std::string, double>> host_ports(const std::string &name) const;
    metrics::ClusterMap base_map(const std::vector<NodeInfo> &nodes) const;
    static constexpr int kExplained = 20;
    std::string pending_reason(const JobInfo &j, const std::vector<JobInfo> &jobs,
                               const std::vector<NodeInfo> &nodes, int &explained) const;
    void add_jobs(Snapshot &s, const std::vector<JobInfo> &jobs,
                  const std::vector<NodeInfo> &nodes, bool with_map);

    SlurmClient *slurm_;  // a pointer: a Collector is replaced whole on SIGHUP
    std::unique_ptr<elastic::ClusterModel> model_;
    std::vector<metrics::LeafNow> leaves_;  // the fabric's, with their rails and uplinks
    std::map<std::string, Cached<JobRecord>> records_;
    std::map<std::string, Cached<checkpoint::RestartLog>> logs_;
};

}  // namespace slurm_ai::metrics_daemon
