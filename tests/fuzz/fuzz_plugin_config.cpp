// The select plugin's ai_select.conf parser.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "slurm_ai/config/plugin_config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    std::string_view text(reinterpret_cast<const char *>(data), size);
    auto c = slurm_ai::parse_plugin_config(text, "/etc/slurm/ai_select.conf",
                                           "/etc/slurm/topology.conf");
    if (!c)
        (void)c.error().message();
    return 0;
}
