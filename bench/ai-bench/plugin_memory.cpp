// ai-bench-plugin-memory: how much memory the select plugin's state takes inside
// slurmctld at 1,000 and 10,000 nodes. It runs the code slurmctld runs (SelectService:
// ai_select.conf, the fabric and node files it names, the cluster graph and the engine;
// then job decisions and records, and a failure history), fed a synthetic cluster of that
// size, and measures the heap in use (glibc's mallinfo2) after each step.
//
// The cluster: ai-bench-placement's fat tree (leaves of 32 hosts, 8 spines) written as
// topology.conf, every host the NDv4 node of ../shared/data (8 A100 GPUs, 8 IB NICs), and
// slurm.conf's node names n1..nN. The baseline, measured in the same run, is the same
// cluster without node files (the fabric alone): what the node models add is the ratio.
//
// Not a test: it prints figures.
#include <malloc.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "slurm_ai/job/spank_env.hpp"
#include "slurm_ai/select_ai/select_service.hpp"
#include "testbed/synthetic_fabric.hpp"

namespace fs = std::filesystem;
using slurm_ai::SelectService;

namespace {

// Bytes of heap in use; differences are signed, as a step may free more than it takes.
long long heap_in_use() {
    return static_cast<long long>(mallinfo2().uordblks);
}

struct Figures {
    long long model = 0;    // after load(): configuration, graph, engine
    long long jobs = 0;     // growth after the jobs were decided and recorded
    long long history = 0;  // growth after every node failed once
    long long pending = 0;  // per job decided but not started yet (decision kept)
    double load_ms = 0, decide_ms = 0;
    int placed = 0;
};

// The SPANK environment of a job with an all-reduce hint, as slurmctld keeps it.
const std::string kCommEntry = slurm_ai::spank_option_env_name("ai-comm") + "=allreduce:bytes=1G";
const std::vector<const char *> kEnv = {kCommEntry.c_str()};

Figures measure(const fs::path &dir, int nodes, const std::string &node_file, int jobs) {
    const auto fabric = dir / "topology.conf";
    std::ofstream(fabric) << slurm_ai::testbed::clos_topology_conf(nodes, 8);
    const auto conf = dir / "ai_select.conf";
    {
        std::ofstream c(conf);
        c << "Fabric=" << fabric.string() << "\n";
        if (!node_file.empty())
            c << "NodeTopology=" << node_file << "\n";
    }
    std::vector<std::string> names;
    for (int i = 1; i <= nodes; ++i)
        names.push_back("n" + std::to_string(i));

    Figures f;
    malloc_trim(0);
    const long long before = heap_in_use();
    auto service = std::make_unique<SelectService>();
    auto t0 = std::chrono::steady_clock::now();
    if (auto err = service->load(conf.string(), fabric.string(), names))
        throw std::runtime_error(err->message());
    auto t1 = std::chrono::steady_clock::now();
    f.load_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
    f.model = heap_in_use() - before;

    // Jobs of 1 to 8 nodes on an idle cluster, decided and recorded as at their start.
    std::vector<slurm_ai::SelectNode> view(nodes, slurm_ai::SelectNode{true, 0xff, 1, 0});
    const auto state = dir / "state";
    const long long before_jobs = heap_in_use();
    double decide_s = 0;
    for (int j = 0; j < jobs; ++j) {
        std::uint32_t n = 1u << (j % 4);
        slurm_ai::SelectJob job{static_cast<std::uint32_t>(j + 1), n, n, 8, 8 * n, 8 * n, 0, kEnv};
        auto a = std::chrono::steady_clock::now();
        auto out = service->decide(job, view);
        decide_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count();
        if (out.kind == slurm_ai::SelectOutcome::Kind::kPlaced)
            ++f.placed;
        service->record(state.string(), job.job_id, "n1", "", kEnv);
        service->forget(job.job_id);
    }
    f.jobs = heap_in_use() - before_jobs;
    f.decide_ms = jobs ? 1000 * decide_s / jobs : 0;

    // Decided, not yet started: the decision waits in memory for the job's record.
    const long long before_pending = heap_in_use();
    for (int j = 0; j < jobs; ++j) {
        std::uint32_t n = 1u << (j % 4);
        (void)service->decide(
            {static_cast<std::uint32_t>(jobs + j + 1), n, n, 8, 8 * n, 8 * n, 0, kEnv}, view);
    }
    f.pending = jobs ? (heap_in_use() - before_pending) / jobs : 0;
    for (int j = 0; j < jobs; ++j)
        service->forget(static_cast<std::uint32_t>(jobs + j + 1));

    const long long before_history = heap_in_use();
    for (const auto &name : names)
        service->note_failure(name, 1.7e9);
    f.history = heap_in_use() - before_history;
    return f;
}

std::string mib(long long bytes) {
    return fmt::format("{:.2f} MiB", static_cast<double>(bytes) / (1 << 20));
}

}  // namespace

int main(int argc, char **argv) {
    CLI::App app{"ai-bench-plugin-memory: the select plugin's memory at 1,000 and 10,000 nodes"};
    std::vector<int> sizes{1000, 10000};
    std::string node_file = std::string(SLURM_AI_DATA_DIR) + "/nccl-topo/ndv4-topo.xml";
    int jobs = 200;
    app.add_option("--nodes", sizes, "cluster sizes")->expected(1, 16);
    app.add_option("--node-file", node_file, "node topology of every host")
        ->check(CLI::ExistingFile);
    app.add_option("--jobs", jobs, "jobs decided and recorded at each size");
    CLI11_PARSE(app, argc, argv);
    node_file = fs::absolute(node_file).string();  // ai_select.conf reads it from elsewhere

    char tmpl[] = "/tmp/ai-bench-memory.XXXXXX";
    if (!mkdtemp(tmpl)) {
        std::perror("mkdtemp");
        return 1;
    }
    const fs::path dir = tmpl;
    int rc = 0;
    try {
        fmt::print("{:>7} {:>13} {:>11} {:>10} {:>13} {:>12} {:>11} {:>10}\n", "nodes",
                   "fabric only", "with nodes", "per node", "nodes/fabric", "after jobs", "history",
                   "decide ms");
        std::vector<long long> models;
        for (int n : sizes) {
            auto base = measure(dir, n, "", 0);
            auto full = measure(dir, n, node_file, jobs);
            models.push_back(full.model);
            fmt::print("{:>7} {:>13} {:>11} {:>8} B {:>12.2f}x {:>10} B {:>11} {:>10.3f}\n", n,
                       mib(base.model), mib(full.model), full.model / n,
                       static_cast<double>(full.model) / static_cast<double>(base.model), full.jobs,
                       mib(full.history), full.decide_ms);
            fmt::print(
                "        load {:.0f} ms; {} of {} jobs placed; {} B per failure entry; "
                "{} B per decided job not yet started\n",
                full.load_ms, full.placed, jobs, full.history / n, full.pending);
        }
        if (sizes.size() > 1)
            fmt::print("model at {} nodes / model at {} nodes: {:.2f}x for {:.0f}x the nodes\n",
                       sizes.back(), sizes.front(),
                       static_cast<double>(models.back()) / static_cast<double>(models.front()),
                       static_cast<double>(sizes.back()) / sizes.front());
        fmt::print("node file: {}\n", node_file);
    } catch (const std::exception &e) {
        fmt::print(stderr, "ai-bench-plugin-memory: {}\n", e.what());
        rc = 1;
    }
    fs::remove_all(dir);
    return rc;
}
