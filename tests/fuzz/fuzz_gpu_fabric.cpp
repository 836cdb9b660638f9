// parse_gpu_fabric on arbitrary bytes (nvidia-smi's XML, text or CSV); an accepted report
// must be settled: a node domain only when every GPU reports that same domain.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "slurm_ai/topology/gpu_fabric.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    std::string_view text(reinterpret_cast<const char *>(data), size);
    auto node = slurm_ai::parse_gpu_fabric(text, "fuzz.smi");
    if (!node.ok()) {
        (void)node.error().message();
        return 0;
    }
    nlohmann::json j = node.value();
    (void)j.dump();
    if (node->domain) {
        if (node->gpus.empty() || !node->problem.empty())
            __builtin_trap();
        for (const auto &g : node->gpus)
            if (g.domain() != node->domain)
                __builtin_trap();
    }
    return 0;
}
