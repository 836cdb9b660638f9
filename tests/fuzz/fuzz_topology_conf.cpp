// parse_topology_conf on arbitrary bytes; whatever it accepts must survive
// write_topology_conf and read back with the same switches, and write_topology_yaml (tree
// and blocks together) with the same switches and hosts; fuzz_topology_yaml checks blocks.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "slurm_ai/topology/fabric.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    std::string_view text(reinterpret_cast<const char *>(data), size);
    auto fabric = slurm_ai::parse_topology_conf(text, "fuzz.conf");
    if (!fabric.ok()) {
        (void)fabric.error().message();
        return 0;
    }
    // Huge expansions ("Nodes=n[1-999999]") are parsed, but checking them further only
    // slows the fuzzer down under the sanitizers.
    if (fabric->nodes.size() > 4096)
        return 0;
    nlohmann::json j = fabric.value();
    (void)j.dump();
    auto again = slurm_ai::parse_topology_conf(slurm_ai::write_topology_conf(fabric.value()),
                                               "written.conf");
    if (!again.ok() || again->switches().size() != fabric->switches().size())
        __builtin_trap();
    // A host only in a block is on no switch, so only topology.yaml (both forms) keeps it.
    auto yaml = slurm_ai::write_topology_yaml(fabric.value(), slurm_ai::TopologyYamlStyle{});
    if (!yaml.ok())
        __builtin_trap();
    auto both = slurm_ai::parse_topology_yaml(yaml.value(), "written.yaml");
    if (!both.ok() || both->switches().size() != fabric->switches().size() ||
        both->hosts().size() != fabric->hosts().size())
        __builtin_trap();
    return 0;
}
