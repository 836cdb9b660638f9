// The select plugin's state file (ai_select_state.json, the failure history) on arbitrary
// bytes, read back the way slurmctld does at start-up. A file that is accepted must give a
// usable history (finite, non-negative failure counts), and what the service then saves
// must read back unchanged; a rejected file leaves the service with a clean history.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "slurm_ai/select_ai/select_service.hpp"

namespace {

std::filesystem::path scratch;

void write_state(const std::filesystem::path &dir, const std::uint8_t *data, std::size_t size) {
    std::ofstream out(dir / "ai_select_state.json", std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char *>(data), static_cast<std::streamsize>(size));
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
    // A fixed name: a random one (mkdtemp) would change what the fuzzer sees from run to run.
    scratch = std::filesystem::temp_directory_path() / "slurm-ai-fuzz-select-state";
    std::filesystem::remove_all(scratch);
    std::filesystem::create_directories(scratch / "again");
    std::atexit([] { std::filesystem::remove_all(scratch); });
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    write_state(scratch, data, size);
    slurm_ai::SelectService service;
    const double now = 1.7e9;
    service.note_failure("sentinel", now);
    if (auto err = service.restore_state(scratch.string())) {
        (void)err->message();
        // Rejected: the history in memory before the restore is kept as it was.
        if (service.failures("sentinel", now) != 1)
            __builtin_trap();
        return 0;
    }
    // Accepted: every restored count is a usable number, and the history saves and
    // reads back the same.
    auto j = nlohmann::json::parse(std::string(reinterpret_cast<const char *>(data), size));
    for (const auto &[name, h] : j.at("failures").items()) {
        double f = service.failures(name, now);
        if (!std::isfinite(f) || f < 0)
            __builtin_trap();
    }
    if (service.save_state((scratch / "again").string()))
        __builtin_trap();
    slurm_ai::SelectService again;
    if (again.restore_state((scratch / "again").string()))
        __builtin_trap();
    for (const auto &[name, h] : j.at("failures").items())
        if (again.failures(name, now) != service.failures(name, now))
            __builtin_trap();
    return 0;
}
