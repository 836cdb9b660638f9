// parse_clos_csv on arbitrary bytes; an accepted fabric must write a topology.conf that
// reads back with the same switches and hosts.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "slurm_ai/topology/fabric.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    std::string_view text(reinterpret_cast<const char *>(data), size);
    auto fabric = slurm_ai::parse_clos_csv(text, "fuzz.csv");
    if (!fabric.ok()) {
        (void)fabric.error().message();
        return 0;
    }
    nlohmann::json j = fabric.value();
    (void)j.dump();
    auto again = slurm_ai::parse_topology_conf(slurm_ai::write_topology_conf(fabric.value()),
                                               "written.conf");
    if (!again.ok() || again->switches().size() != fabric->switches().size() ||
        again->hosts().size() != fabric->hosts().size())
        __builtin_trap();
    return 0;
}
