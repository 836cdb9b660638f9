#include "slurm_ai/common/file_io.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <unistd.h>

namespace slurm_ai {

Parsed<std::string> read_text_file(const std::string &path, std::size_t limit,
                                   std::string_view field) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return InputError{std::string(field), path,
                          std::string("a readable file (") + std::strerror(errno) + ")", path, 0};
    std::ostringstream buf;
    buf << in.rdbuf();
    std::string text = std::move(buf).str();
    if (text.size() > limit)
        return InputError{std::string(field), path,
                          "a file of at most " + std::to_string(limit >> 20) + " MiB", path, 0};
    return text;
}

void write_text_file_atomically(const std::string &path, std::string_view text,
                                const std::function<void(const std::string &)> &prepare) {
    // The pid makes the name the process's own. The C library formats it, in a fixed
    // width: neither its value nor its length passes through the suite's code, where a
    // fuzz target that writes a file would see them differ from run to run.
    char suffix[32];
    std::snprintf(suffix, sizeof suffix, ".tmp.%010ld", static_cast<long>(getpid()));
    const std::string tmp = path + suffix;
    std::error_code ec;
    try {
        {
            std::ofstream out(tmp, std::ios::trunc | std::ios::binary);
            out.write(text.data(), static_cast<std::streamsize>(text.size()));
            out.flush();
            if (!out)
                throw std::runtime_error("cannot write " + tmp + ": " + std::strerror(errno));
        }
        if (prepare)
            prepare(tmp);
        std::filesystem::rename(tmp, path, ec);
        if (ec)
            throw std::runtime_error("cannot replace " + path + ": " + ec.message());
    } catch (...) {
        std::filesystem::remove(tmp, ec);
        throw;
    }
}

void write_output_file(const std::string &path, std::string_view text) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const bool link = fs::is_symlink(fs::symlink_status(path, ec));
    const fs::file_status st = fs::status(path, ec);  // through links
    const bool exists = !ec && fs::exists(st);
    std::string target = path;
    if (link && exists)
        target = fs::canonical(path, ec).string();
    // A device, a pipe, a link to nothing yet or one that does not resolve: in place.
    if ((exists && !fs::is_regular_file(st)) || (link && (!exists || ec))) {
        std::ofstream out(path, std::ios::binary);
        out.write(text.data(), static_cast<std::streamsize>(text.size()));
        out.flush();
        if (!out)
            throw std::runtime_error("cannot write " + path + ": " + std::strerror(errno));
        return;
    }
    write_text_file_atomically(target, text, [&](const std::string &tmp) {
        if (exists)
            fs::permissions(tmp, st.permissions(), ec);  // as it was; umask's if that fails
    });
}

}  // namespace slurm_ai
