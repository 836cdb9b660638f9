// parse_ibnetdiscover on arbitrary bytes, with a small GUID map so that mapped names and
// HCAs merged into one host are reached; an accepted fabric must convert to a
// topology.conf that reads back.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "slurm_ai/topology/fabric.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    static const slurm_ai::GuidMap map{{"0002c90300080e84", "r510gluster1"},
                                       {"003048c74e4a0000", "x5570comp1"},
                                       {"0000000000000001", "node1"},
                                       {"0000000000000002", "node1"}};
    std::string_view text(reinterpret_cast<const char *>(data), size);
    auto fabric = slurm_ai::parse_ibnetdiscover(text, "fuzz.topo", &map);
    if (!fabric.ok()) {
        (void)fabric.error().message();
        return 0;
    }
    nlohmann::json j = fabric.value();
    (void)j.dump();
    auto conf = slurm_ai::parse_topology_conf(slurm_ai::write_topology_conf(fabric.value()),
                                              "written.conf");
    if (!conf.ok() || conf->switches().size() != fabric->switches().size())
        __builtin_trap();
    return 0;
}
