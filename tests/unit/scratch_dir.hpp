// A fresh directory for one test, under the system's temporary directory, removed with it.
// Its name holds a tag (the test's), the process id (so that runs of several build trees
// at once stay apart) and a counter (so that two in one process do too).
#pragma once

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>

namespace slurm_ai::test {

struct ScratchDir {
    std::filesystem::path path;

    explicit ScratchDir(std::string_view tag = "test") {
        static std::atomic<int> made{0};
        path = std::filesystem::temp_directory_path() /
               ("slurm-ai-" + std::string(tag) + "-" + std::to_string(::getpid()) + "-" +
                std::to_string(++made));
        std::filesystem::remove_all(path);
        std::filesystem::create_directories(path);
    }
    ~ScratchDir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
    ScratchDir(const ScratchDir &) = delete;
    ScratchDir &operator=(const ScratchDir &) = delete;

    std::string str() const { return path.string(); }
    std::string operator/(std::string_view name) const { return (path / name).string(); }
};

}  // namespace slurm_ai::test
