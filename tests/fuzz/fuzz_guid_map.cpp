// parse_guid_map on arbitrary bytes; what it accepts must be 16-hex-digit keys and
// hostnames that config files can carry.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "slurm_ai/common/hostlist.hpp"
#include "slurm_ai/topology/fabric.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    std::string_view text(reinterpret_cast<const char *>(data), size);
    auto map = slurm_ai::parse_guid_map(text, "fuzz.map");
    if (!map.ok()) {
        (void)map.error().message();
        return 0;
    }
    for (const auto &[guid, host] : map.value()) {
        if (guid.size() != 16 || !slurm_ai::is_host_name(host))
            __builtin_trap();
    }
    return 0;
}
