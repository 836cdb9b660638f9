#include "select_bridge.h"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>

#include <nlohmann/json.hpp>

#include "slurm_ai/c_boundary.hpp"
#include "slurm_ai/job_hints.hpp"

namespace {

using slurm_ai::copy_message;
using slurm_ai::guarded;

std::span<const char *const> env_span(const char *const *env, uint32_t size) {
    return env ? std::span<const char *const>(env, size) : std::span<const char *const>();
}

std::string summarize(const slurm_ai::JobHints &hints) {
    nlohmann::json j = hints;
    return j.dump();
}

// Writes next to the target and renames over it, so a reader never sees half a file.
void write_atomically(const std::filesystem::path &target, const std::string &text) {
    auto tmp = target;
    tmp += ".tmp." + std::to_string(getpid());
    {
        std::ofstream out(tmp, std::ios::trunc);
        out << text << '\n';
        out.flush();
        if (!out)
            throw std::runtime_error("cannot write " + tmp.string());
    }
    std::filesystem::rename(tmp, target);
}

}  // namespace

extern "C" int ai_select_read_hints(const char *const *env, uint32_t env_size, char *summary,
                                    size_t summary_len, char *err, size_t errlen) {
    return guarded(err, errlen, [&] {
        auto read = slurm_ai::hints_from_spank_env(env_span(env, env_size));
        copy_message(summary, summary_len, summarize(read.hints));
        if (!read.errors.empty()) {
            copy_message(err, errlen, read.errors.front().message());
            return -1;
        }
        return read.hints.empty() ? 0 : 1;
    });
}

extern "C" int ai_select_record_job(const char *state_dir, uint32_t job_id, const char *nodes,
                                    const char *const *env, uint32_t env_size, char *err,
                                    size_t errlen) {
    return guarded(err, errlen, [&] {
        if (!state_dir || !*state_dir)
            throw std::runtime_error("StateSaveLocation is not set");
        auto read = slurm_ai::hints_from_spank_env(env_span(env, env_size));
        nlohmann::json rec;
        rec["job_id"] = job_id;
        rec["nodes"] = nodes ? nodes : "";
        rec["hints"] = read.hints;
        auto &errors = rec["hint_errors"] = nlohmann::json::array();
        for (const auto &e : read.errors)
            errors.push_back(e.message());
        rec["recorded_at"] = std::chrono::duration_cast<std::chrono::seconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count();
        auto dir = std::filesystem::path(state_dir) / "ai_select" / "jobs";
        std::filesystem::create_directories(dir);
        write_atomically(dir / (std::to_string(job_id) + ".json"), rec.dump(2));
        return 0;
    });
}
