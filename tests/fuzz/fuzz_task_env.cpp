// The SPANK plugin's parsers and what a task computes from them, on arbitrary bytes:
// line 1 the plugstack.conf arguments (space-separated), line 2 the step's node list,
// line 3 its task counts, line 4 SLURM_STEP_GPUS, line 5 the task's index on its node.
// A parsed step then goes through the rank layout and the task environment on the
// mini-cluster's two-NIC node, as slurmstepd would run them.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "slurm_ai/spank_elastic/spank_config.hpp"
#include "slurm_ai/spank_elastic/task_env.hpp"
#include "slurm_ai/topology/node_topology.hpp"

namespace {

std::vector<std::string_view> split(std::string_view s, char sep) {
    std::vector<std::string_view> out;
    while (true) {
        auto at = s.find(sep);
        out.push_back(s.substr(0, at));
        if (at == std::string_view::npos)
            return out;
        s.remove_prefix(at + 1);
    }
}

const slurm_ai::NodeTopology *node() {
    static auto t = slurm_ai::load_node_topology(std::string(SLURM_AI_TEST_INPUTS) +
                                                 "/minicluster-node-2nic.xml");
    return t ? &t.value() : nullptr;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    std::string_view in(reinterpret_cast<const char *>(data), size);
    auto lines = split(in, '\n');
    lines.resize(5);
    std::vector<std::string_view> args;
    for (auto a : split(lines[0], ' '))
        if (!a.empty())
            args.push_back(a);
    auto config = slurm_ai::parse_spank_args(args);
    if (!config)
        (void)config.error().message();
    auto step = slurm_ai::parse_step_info(7, false, lines[1], lines[2]);
    auto gpus = slurm_ai::parse_gpu_list("SLURM_STEP_GPUS", lines[3]);
    if (!step || !gpus)
        return 0;
    auto layout = slurm_ai::rank_layout(*step, nullptr);
    slurm_ai::TaskPlace place;
    place.node = step->nodes.front();
    place.local_id = lines[4].empty() ? 0u : static_cast<std::uint8_t>(lines[4][0]) % 16u;
    place.node_gpus = *gpus;
    for (int g : *gpus)
        place.cuda_ids.push_back(std::to_string(g));
    auto env = slurm_ai::task_environment(config ? *config : slurm_ai::SpankConfig{}, *step, layout,
                                          place, node(), "10.0.0.1", "/tmp/t.xml");
    (void)env;
    return 0;
}
