#include "spank_options_bridge.h"

#include "slurm_ai/common/c_boundary.hpp"
#include "slurm_ai/job/job_hints.hpp"

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
