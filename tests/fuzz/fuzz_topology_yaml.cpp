// parse_topology_yaml on arbitrary bytes; whatever it accepts must survive
// write_topology_yaml and read back with the same switches, hosts and blocks with hosts.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "slurm_ai/topology/fabric.hpp"

namespace {
// Slurm refuses a block without nodes, so the writers leave such blocks out.
std::size_t blocks_with_hosts(const slurm_ai::Fabric &f) {
    std::size_t n = 0;
    for (const auto &b : f.blocks)
        n += !b.hosts.empty();
    return n;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    std::string_view text(reinterpret_cast<const char *>(data), size);
    auto fabric = slurm_ai::parse_topology_yaml(text, "fuzz.yaml");
    if (!fabric.ok()) {
        (void)fabric.error().message();
        return 0;
    }
    if (fabric->nodes.size() > 4096)  // as fuzz_topology_conf: parsed, not checked further
        return 0;
    nlohmann::json j = fabric.value();
    (void)j.dump();
    auto yaml = slurm_ai::write_topology_yaml(fabric.value(), slurm_ai::TopologyYamlStyle{});
    if (!yaml.ok())
        __builtin_trap();  // every name came from the file, and was checked there
    auto again = slurm_ai::parse_topology_yaml(yaml.value(), "written.yaml");
    if (!again.ok() || again->switches().size() != fabric->switches().size() ||
        again->hosts().size() != fabric->hosts().size() ||
        blocks_with_hosts(again.value()) != blocks_with_hosts(fabric.value()))
        __builtin_trap();
    return 0;
}
