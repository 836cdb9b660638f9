// The hwloc XML loader on arbitrary bytes: libxml2's parse, the attribute checks, the
// v3-to-v2 translation, libhwloc's import and the model built from it, then JSON.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "slurm_ai/topology/node_topology.hpp"

// libhwloc 2.9 leaks the object it was importing whenever it rejects a file (an unknown
// attribute on an <info>, say): its bug, found by this target and not worth chasing here.
// Leaks allocated inside libhwloc are suppressed; any other leak still fails the run.
extern "C" const char *__lsan_default_suppressions() {
    return "leak:libhwloc.so\n";
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    std::string_view xml(reinterpret_cast<const char *>(data), size);
    auto t = slurm_ai::parse_hwloc_xml(xml, "fuzz.xml");
    if (!t) {
        (void)t.error().message();
        return 0;
    }
    (void)t->gpu_nic_pairing();
    nlohmann::json j = t.value();
    (void)j.dump();
    return 0;
}
