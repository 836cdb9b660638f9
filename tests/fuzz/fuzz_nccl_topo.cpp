// The NCCL topology loader on arbitrary bytes: libxml2's parse, the <system>/<cpu>/<pci>
// walk, path classification and NVLink figures, then JSON.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "slurm_ai/topology/node_topology.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    std::string_view xml(reinterpret_cast<const char *>(data), size);
    auto t = slurm_ai::parse_nccl_topo(xml, "fuzz.xml");
    if (!t) {
        (void)t.error().message();
        return 0;
    }
    (void)t->gpu_nic_pairing();
    nlohmann::json j = t.value();
    (void)j.dump();
    return 0;
}
