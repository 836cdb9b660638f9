// expand_hostlist on arbitrary bytes; an accepted list must compress to an expression that
// expands back to the same set of names.
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "slurm_ai/common/hostlist.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    std::string_view text(reinterpret_cast<const char *>(data), size);
    (void)slurm_ai::is_host_name(text);
    auto names = slurm_ai::expand_hostlist(text, "Nodes", 1 << 16);
    if (!names.ok()) {
        (void)names.error().message();
        return 0;
    }
    std::string compressed = slurm_ai::compress_hostlist(names.value());
    auto back = slurm_ai::expand_hostlist(compressed, "Nodes", 1 << 16);
    if (!back.ok() || std::set<std::string>(back->begin(), back->end()) !=
                          std::set<std::string>(names->begin(), names->end()))
        __builtin_trap();
    return 0;
}
