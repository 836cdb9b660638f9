#include "spank_options_bridge.h"

#include <string>
#include <vector>

#include "slurm_ai/common/c_boundary.hpp"
#include "slurm_ai/job/job_hints.hpp"
#include "slurm_ai/job/spank_env.hpp"

namespace {
const slurm_ai::HintOption *option(size_t i) {
    auto table = slurm_ai::hint_options();
    return i < table.size() ? &table[i] : nullptr;
}
}  // namespace

extern "C" size_t ai_spank_option_count(void) {
    return slurm_ai::hint_options().size();
}

extern "C" const char *ai_spank_option_name(size_t i) {
    auto *o = option(i);
    return o ? o->name : nullptr;
}

extern "C" const char *ai_spank_option_arginfo(size_t i) {
    auto *o = option(i);
    return o ? o->arginfo : nullptr;
}

extern "C" const char *ai_spank_option_usage(size_t i) {
    auto *o = option(i);
    return o ? o->usage : nullptr;
}

extern "C" int ai_spank_option_check(size_t i, const char *value, char *err, size_t errlen) {
    return slurm_ai::guarded(err, errlen, [&] {
        auto *o = option(i);
        if (!o)
            throw std::out_of_range("no such option");
        slurm_ai::JobHints scratch;
        if (auto e = slurm_ai::apply_hint(scratch, o->name, value ? value : "")) {
            slurm_ai::copy_message(err, errlen, e->message());
            return -1;
        }
        return 0;
    });
}

extern "C" const char *ai_spank_option_command_env_name(size_t i) {
    try {
        static const std::vector<std::string> names = [] {
            std::vector<std::string> out;
            for (const auto &opt : slurm_ai::hint_options())
                out.push_back(slurm_ai::spank_option_env_name(opt.name,
                                                              slurm_ai::SpankEnvCopy::kCommand));
            return out;
        }();
        return i < names.size() ? names[i].c_str() : nullptr;
    } catch (...) {  // out of memory: the option is not taken from the environment
        return nullptr;
    }
}

extern "C" const char *ai_spank_dag_env_name(void) {
    return slurm_ai::kDagEnvName.data();  // a string literal: NUL-terminated
}
