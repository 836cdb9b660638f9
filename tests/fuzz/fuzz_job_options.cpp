// Every --ai-* option value parser, on arbitrary bytes: the first byte picks the option.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "slurm_ai/job/job_hints.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    if (size == 0)
        return 0;
    auto options = slurm_ai::hint_options();
    const auto &opt = options[data[0] % options.size()];
    std::string_view value(reinterpret_cast<const char *>(data + 1), size - 1);
    slurm_ai::JobHints hints;
    if (auto err = slurm_ai::apply_hint(hints, opt.name, value))
        (void)err->message();
    return 0;
}
