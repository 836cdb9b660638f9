// parse_topograph_model on arbitrary bytes; an accepted model must give JSON, and its
// tree (as topology.conf) must read back with the same switches.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "slurm_ai/topology/fabric.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    std::string_view text(reinterpret_cast<const char *>(data), size);
    auto fabric = slurm_ai::parse_topograph_model(text, "fuzz.yaml");
    if (!fabric.ok()) {
        (void)fabric.error().message();
        return 0;
    }
    if (fabric->nodes.size() > 4096)
        return 0;
    nlohmann::json j = fabric.value();
    (void)j.dump();
    // Domain names come from annotations and may not be block names: an error, no crash.
    (void)slurm_ai::write_block_conf(fabric.value(), slurm_ai::BlockConfStyle{});
    (void)slurm_ai::write_topology_yaml(fabric.value(), slurm_ai::TopologyYamlStyle{});
    auto again = slurm_ai::parse_topology_conf(slurm_ai::write_topology_conf(fabric.value()),
                                               "written.conf");
    if (!again.ok() || again->switches().size() != fabric->switches().size())
        __builtin_trap();
    return 0;
}
