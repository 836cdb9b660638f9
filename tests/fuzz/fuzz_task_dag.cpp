// The --ai-dag JSON parser, full and compact forms; a parsed DAG must survive a round
// trip through its compact form unchanged.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "slurm_ai/job/task_dag.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    std::string_view text(reinterpret_cast<const char *>(data), size);
    auto dag = slurm_ai::parse_task_dag(text, "fuzz.json");
    if (!dag) {
        (void)dag.error().message();
        return 0;
    }
    auto again = slurm_ai::parse_task_dag(slurm_ai::compact_task_dag(dag.value()), "compact");
    if (!again || !(again.value() == dag.value()))
        std::abort();
    return 0;
}
