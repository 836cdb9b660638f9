// gangs.json (the select plugin writes it, ai-elasticd reads it) on arbitrary bytes, parsed
// without the file system. An accepted file must give gangs whose state is one of the
// four and whose printed form parses back to the same gangs.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "slurm_ai/gang/gang_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char *>(data), size);
    auto gangs = slurm_ai::parse_gang_file(text, "gangs.json");
    if (!gangs) {
        if (gangs.error().message().find("gangs.json") == std::string::npos)
            std::abort();  // an error names its source
        return 0;
    }
    for (const auto &g : gangs.value())
        if (!slurm_ai::gang_state_from(slurm_ai::to_string(g.state)))
            std::abort();
    auto again = slurm_ai::parse_gang_file(slurm_ai::dump_gang_file(gangs.value()), "again");
    if (!again || again.value() != gangs.value())
        std::abort();
    return 0;
}
