#include "slurm_ai/job/spank_env.hpp"

#include <array>
#include <cctype>
#include <utility>
#include <vector>

#include "slurm_ai/job/job_hints.hpp"

namespace slurm_ai {
namespace {

// The prefix each form puts before a variable's name.
constexpr std::array<std::pair<SpankEnvCopy, std::string_view>, 3> kCopyPrefixes{{
    {SpankEnvCopy::kCommand, "SLURM_SPANK_"},
    {SpankEnvCopy::kProlog, "SPANK_"},
    {SpankEnvCopy::kJob, ""},
}};

std::string_view copy_prefix(SpankEnvCopy copy) {
    for (auto [c, prefix] : kCopyPrefixes)
        if (c == copy)
            return prefix;
    return "";
}

// Slurm's _canonical_char: what is not a letter or a digit becomes '_' (isalnum in the C
// locale, which Slurm's daemons and commands run in).
void append_canonical(std::string &out, std::string_view s) {
    for (char c : s) {
        const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
        out += letter || (c >= '0' && c <= '9') ? c : '_';
    }
}

// The name of each option of hint_options(), in its order, in the form kJob.
const std::vector<std::string> &option_env_names() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> out;
        for (const auto &opt : hint_options())
            out.push_back(spank_option_env_name(opt.name));
        return out;
    }();
    return names;
}

}  // namespace

std::string spank_option_env_name(std::string_view option, SpankEnvCopy copy) {
    std::string out(copy_prefix(copy));
    out += "_SLURM_SPANK_OPTION_";
    append_canonical(out, kSpankPluginName);
    out += '_';
    append_canonical(out, option);
    return out;
}

std::string spank_dag_env_name(SpankEnvCopy copy) {
    return std::string(copy_prefix(copy)) + std::string(kDagEnvName);
}

std::optional<SpankEnvEntry> read_spank_env_entry(std::string_view entry) {
    const auto eq = entry.find('=');
    if (eq == std::string_view::npos)
        return std::nullopt;
    const std::string_view value = entry.substr(eq + 1);
    for (auto [copy, prefix] : kCopyPrefixes) {
        std::string_view name = entry.substr(0, eq);
        if (!name.starts_with(prefix))
            continue;
        name.remove_prefix(prefix.size());
        if (name == kDagEnvName)
            return SpankEnvEntry{kDagEnvName, value, copy};
        const auto &names = option_env_names();
        for (std::size_t i = 0; i < names.size(); ++i)
            if (name == names[i])
                return SpankEnvEntry{hint_options()[i].name, value, copy};
    }
    return std::nullopt;
}

std::optional<std::string> option_input_env_name(std::string_view program,
                                                 std::string_view option) {
    const char *prefix = program == "sbatch"   ? "SBATCH_"
                         : program == "salloc" ? "SALLOC_"
                         : program == "srun"   ? "SLURM_"
                                               : nullptr;
    if (!prefix)
        return std::nullopt;
    std::string name = prefix;
    for (char c : option)
        name += c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return name;
}

}  // namespace slurm_ai
