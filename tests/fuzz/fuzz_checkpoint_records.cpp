// What ai-recover reads back: lines of `scontrol -o show job/node` (a job name or a
// node's Reason can hold anything a user typed), restart-log lines, checkpoint names.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "slurm_ai/checkpoint.hpp"
#include "slurm_ai/checkpoint_recovery.hpp"
#include "slurm_ai/checkpoint_restart_log.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    std::string_view text(reinterpret_cast<const char *>(data), size);
    using namespace slurm_ai::checkpoint;
    if (auto job = parse_job_line(text)) {
        (void)begin_delayed_by_requeue(*job, 0);
        (void)checkpoint_signal_due(*job, slurm_ai::CheckpointSpec{});
    } else {
        (void)job.error().message();
    }
    (void)node_reason(text);
    (void)step_of(text);
    (void)expand_dir(text, "12");
    try {
        (void)describe(nlohmann::json::parse(text).get<RestartRecord>());
    } catch (const nlohmann::json::exception &) {
    }
    return 0;
}
