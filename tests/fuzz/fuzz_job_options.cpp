// Every --ai-* option value parser, on arbitrary bytes: the first byte picks the option and
// the form of the SPANK environment it travels in. A value that parses must come back
// unchanged through what carries it: --ai-comm through its printed form, the hints through
// the job record's JSON, and the option through a SPANK environment decoded as slurmctld
// decodes it.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "slurm_ai/job/job_hints.hpp"
#include "slurm_ai/job/job_options.hpp"
#include "slurm_ai/job/spank_env.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    using namespace slurm_ai;
    if (size == 0)
        return 0;
    auto options = hint_options();
    const auto &opt = options[data[0] % options.size()];
    const auto copy = static_cast<SpankEnvCopy>(data[0] / options.size() % 3);
    std::string_view value(reinterpret_cast<const char *>(data + 1), size - 1);
    JobHints hints;
    auto err = apply_hint(hints, opt.name, value);
    if (err) {
        (void)err->message();
    } else {
        if (hints.comm && !(parse_comm(to_string(*hints.comm)).value() == *hints.comm))
            std::abort();
        nlohmann::json j = hints;
        if (!(j.get<JobHints>() == hints))
            std::abort();
    }
    if (value.find('\0') != std::string_view::npos)
        return 0;  // an environment entry ends at the first NUL
    const std::string entry = spank_option_env_name(opt.name, copy) + "=" + std::string(value);
    const char *env[] = {entry.c_str()};
    const JobOptions decoded = decode_job_options(env);
    if (!(decoded.hints == hints) || decoded.errors.size() != (err ? 1u : 0u) ||
        decoded.typed.at(opt.name) != value)
        std::abort();
    return 0;
}
