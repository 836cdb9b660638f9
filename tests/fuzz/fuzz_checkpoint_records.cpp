// What ai-recover reads back from files: restart-log lines and checkpoint names (a
// checkpoint directory can hold anything a user's job wrote).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "slurm_ai/checkpoint/checkpoint.hpp"
#include "slurm_ai/checkpoint/checkpoint_recovery.hpp"
#include "slurm_ai/checkpoint/checkpoint_restart_log.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    std::string_view text(reinterpret_cast<const char *>(data), size);
    using namespace slurm_ai::checkpoint;
    (void)step_of(text);
    (void)expand_dir(text, "12");
    try {
        (void)describe(nlohmann::json::parse(text).get<RestartRecord>());
    } catch (const nlohmann::json::exception &) {
    }
    return 0;
}
