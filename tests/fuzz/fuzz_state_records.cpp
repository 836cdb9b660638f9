// The state files that have no target of their own, parsed without the file system on
// arbitrary bytes: a job's record (ai_select/jobs/<id>.json), ai-elasticd's state and
// ai-recover's record of a run. Whatever one of them accepts must print to a text that
// it accepts again and prints the same way.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "slurm_ai/checkpoint/recover_run.hpp"
#include "slurm_ai/elastic/elastic_state.hpp"
#include "slurm_ai/job/job_record.hpp"

namespace {

template <class Parse, class Dump>
void round_trip(std::string_view text, Parse parse, Dump dump) {
    auto first = parse(text, "fuzz");
    if (!first)
        return;
    const std::string printed = dump(first.value());
    auto second = parse(printed, "printed");
    if (!second || dump(second.value()) != printed)
        std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char *>(data), size);
    round_trip(text, slurm_ai::parse_job_record, slurm_ai::dump_job_record);
    round_trip(text, slurm_ai::parse_elasticd_state, slurm_ai::dump_elasticd_state);
    round_trip(text, slurm_ai::checkpoint::parse_recover_run, slurm_ai::checkpoint::dump_recover_run);
    return 0;
}
