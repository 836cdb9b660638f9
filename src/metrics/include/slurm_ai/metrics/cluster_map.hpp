// The live map of the cluster: one HTML page (no script, no outside file) that draws the
// fabric's switches by level, each leaf switch with its hosts beneath it, the NVLink
// domains the hosts belong to, and every GPU, coloured by the job that holds it. A running
// job's GPUs carry its placement efficiency and ai-explain's one-line reason as a tooltip;
// pending jobs are listed beside the picture with what holds them. ai-metrics serves it
// with Slurm's jobs on it; `ai-topo draw FABRIC -o map.html` writes the empty fabric.
//
// The page is made for people and for tests alike: every host is an SVG group of class
// "host" with data-host=NAME, every GPU a rect of class "gpu" with data-host, data-gpu and,
// when held, data-job=ID; every pending job an <li class="pending" data-job=ID>.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "slurm_ai/topology/cluster_graph.hpp"

namespace slurm_ai::metrics {

struct MapHost {
    std::string name;
    std::string leaf;    // its leaf switch, "" for none
    std::string domain;  // its NVLink domain, "" for none
    std::string state;   // as Slurm says it (idle, mixed, allocated, down, drained); "" unknown
    std::vector<std::uint32_t> gpu_jobs;  // per GPU: the job holding it, 0 when free
};

struct MapSwitch {
    std::string name;
    int level = 0;                // 0 for a leaf
    std::vector<std::string> up;  // the switches of the next level up it links to
};

struct MapJob {
    std::uint32_t job_id = 0;
    std::string name, user;
    bool running = false;
    std::string nodes;  // a running job's hostlist
    std::uint32_t gpus = 0;
    std::optional<double> efficiency;  // the model's, for a job the engine placed
    std::string reason;                // running: how it was placed; pending: what holds it
};

struct ClusterMap {
    std::string title;
    std::int64_t at = 0;  // seconds since the epoch the picture shows
    std::vector<MapSwitch> switches;  // by level, highest first, each level in fabric order
    std::vector<MapHost> hosts;       // in host order
    std::vector<MapJob> jobs;
};

// The fabric with every GPU free and no job.
ClusterMap fabric_map(const ClusterGraph &g, std::string title);

// Marks a running job's GPUs: `gpus` as a job record holds them ("n1:0,1 n2:2,3"), else
// (empty) the first `gpus_per_node` free GPUs of each of `hosts`. Hosts the map lacks are
// skipped; the job is added to the list.
void place_job(ClusterMap &m, MapJob job, const std::string &gpus,
               const std::vector<std::string> &hosts, std::uint32_t gpus_per_node);

// The page; with refresh_s > 0 the browser reloads it that often.
std::string map_html(const ClusterMap &m, int refresh_s);

}  // namespace slurm_ai::metrics
