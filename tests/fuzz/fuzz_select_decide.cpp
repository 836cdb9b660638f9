// What slurmctld hands the select plugin for every job test, on arbitrary bytes: the job's
// SPANK environment (where the --ai-* hints and the compacted task DAG travel), its node
// and GPU request and the free view, decided by the same SelectService the plugin runs,
// on the real X5 fabric of ../shared/data with the mini-cluster's node in every host.
//
// Input: 8 bytes of request and view, then the environment, one "NAME=VALUE" per line.
// A placement must name distinct usable nodes, within the node range slurmctld accepts for
// the job (an --ai-elastic range never takes it below min_nodes or above max_nodes), and
// the node counts handed to cons_tres must lie in that range too. A placed job is then
// recorded as slurmctld does when it starts, with the GPUs gres gave on each node: those the
// view had free there, and at times one more than the node's topology lists.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "slurm_ai/job/job_record.hpp"
#include "slurm_ai/select_ai/select_service.hpp"
#include "slurm_ai/topology/fabric.hpp"

#include "select_decide_input.hpp"

namespace {

slurm_ai::SelectService *service;
std::size_t node_count;
std::vector<std::string> node_names;
std::string state_dir;  // where a placed job is recorded (the record removed after each input)
constexpr double kNow = 1.7e9;                // the fixed clock's time
constexpr std::uint32_t kWorkBudget = 400;  // placements one decision may score

}  // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
    const std::string fabric = SLURM_AI_DATA_DIR "/fabric/X5.topology.conf";
    auto f = slurm_ai::load_topology_conf(fabric);
    if (!f)
        std::abort();
    std::vector<std::string> names;
    for (int h : f->hosts())
        names.push_back(f->nodes[h].name);
    names.push_back("not-in-the-fabric");  // slurm.conf may name nodes the fabric lacks
    node_count = names.size();
    node_names = names;

    // Each input's record is removed after it. tools/fuzz.sh names a directory of its
    // build's own (SLURM_AI_FUZZ_SCRATCH): another checkout's run never removes it midway,
    // and its name is the same at every run (a name made per run, mkdtemp's or one with
    // the pid, could reach the fuzzer through the strings it sees compared).
    const char *scratch = std::getenv("SLURM_AI_FUZZ_SCRATCH");
    state_dir = (scratch && *scratch ? std::filesystem::path(scratch)
                                     : std::filesystem::temp_directory_path()) /
                "slurm-ai-fuzz-select-decide";
    std::filesystem::remove_all(state_dir);
    std::filesystem::create_directories(state_dir);
    std::atexit([] { std::filesystem::remove_all(state_dir); });
    const std::string conf = state_dir + "/ai_select.conf";
    std::ofstream(conf) << "Fabric=" << fabric << "\nNodeTopology=" SLURM_AI_TEST_INPUTS
                        << "/minicluster-node.xml\n";
    // A clock that stands still and a search bounded by work, not time: the same input takes
    // the same path at every run, on any machine and under any load, so that CI's fuzzing
    // is reproducible (tools/fuzz.sh checks it).
    service = new slurm_ai::SelectService(slurm_ai::fixed_clock(kNow), kWorkBudget);
    if (service->load(conf, fabric, names))
        std::abort();
    std::filesystem::remove(conf);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    auto in = slurm_ai::fuzz::decide_input(
        std::string_view(reinterpret_cast<const char *>(data), size), node_count);
    if (!in)
        return 0;
    const slurm_ai::SelectJob &job = in->job;
    const std::vector<slurm_ai::SelectNode> &view = in->view;
    auto out = service->decide(job, view);
    if (out.kind == slurm_ai::SelectOutcome::Kind::kPlaced) {
        std::set<int> seen;
        for (int n : out.nodes)
            if (n < 0 || static_cast<std::size_t>(n) >= node_count || !view[n].usable ||
                !seen.insert(n).second)
                __builtin_trap();
        if (out.nodes.size() < job.min_nodes || out.nodes.size() > job.max_nodes)
            __builtin_trap();
        if (out.min_nodes && (out.min_nodes < job.min_nodes || out.max_nodes > job.max_nodes ||
                              out.req_nodes < out.min_nodes || out.req_nodes > out.max_nodes))
            __builtin_trap();
        std::string nodes, gpus;
        for (int n : out.nodes) {
            nodes += (nodes.empty() ? "" : ",") + node_names[n];
            gpus += (gpus.empty() ? "" : " ") + node_names[n] + ":";
            std::string list;
            for (unsigned g = 0; g < 64; ++g)
                if (view[n].free_gpus >> g & 1)
                    list += (list.empty() ? "" : ",") + std::to_string(g);
            if (data[6] & 1)  // one the topology (4 GPUs) does not list
                list += (list.empty() ? "" : ",") + std::to_string(4 + data[6] % 8);
            gpus += list.empty() ? "0" : list;
        }
        service->record(state_dir, job.job_id, nodes, gpus, job.env);
        std::filesystem::remove(slurm_ai::job_record_path(state_dir, job.job_id));
    }
    service->forget(job.job_id);
    return 0;
}
