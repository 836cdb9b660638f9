#include "slurm_ai/common/file_io.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace slurm_ai {

Parsed<std::string> read_text_file(const std::string &path, std::size_t limit,
                                   std::string_view field) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return InputError{std::string(field), path,
                          std::string("a readable file (") + std::strerror(errno) + ")", path, 0};
    // Read up to one byte past the limit and no further: a file without an end
    // (/dev/zero, a link to it) is refused at the limit instead of filling the memory.
    std::string text;
    char chunk[1 << 16];
    while (text.size() <= limit && in) {
        in.read(chunk, static_cast<std::streamsize>(
                           std::min<std::size_t>(sizeof chunk, limit + 1 - text.size())));
        text.append(chunk, static_cast<std::size_t>(in.gcount()));
    }
    if (text.size() > limit)
        return InputError{std::string(field), path,
                          "a file of at most " + std::to_string(limit >> 20) + " MiB", path, 0};
    if (in.bad())
        return InputError{std::string(field), path,
                          std::string("a readable file (") + std::strerror(errno) + ")", path, 0};
    return text;
}

namespace {

// The temporary file, made here: O_EXCL|O_NOFOLLOW refuse whatever already has the name,
// a link above all, which a root process would otherwise follow. What is there is the
// leftover of a writer of the same pid that died, or something planted: its name is
// removed (the link, not what it names) and the file made once more.
int create_temporary(const std::string &tmp) {
    const int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
    int fd = ::open(tmp.c_str(), flags, 0666);
    if (fd < 0 && errno == EEXIST && ::unlink(tmp.c_str()) == 0)
        fd = ::open(tmp.c_str(), flags, 0666);
    if (fd < 0)
        throw std::runtime_error("cannot create " + tmp + ": " + std::strerror(errno));
    return fd;
}

void write_all(int fd, std::string_view text, const std::string &tmp) {
    while (!text.empty()) {
        const ssize_t n = ::write(fd, text.data(), text.size());
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            throw std::runtime_error("cannot write " + tmp + ": " + std::strerror(errno));
        text.remove_prefix(static_cast<std::size_t>(n));
    }
}

}  // namespace

void write_text_file_atomically(const std::string &path, std::string_view text,
                                const std::function<void(int)> &prepare) {
    // The pid makes the name the process's own. The C library formats it, in a fixed
    // width: neither its value nor its length passes through the suite's code, where a
    // fuzz target that writes a file would see them differ from run to run.
    char suffix[32];
    std::snprintf(suffix, sizeof suffix, ".tmp.%010ld", static_cast<long>(getpid()));
    const std::string tmp = path + suffix;
    int fd = create_temporary(tmp);
    try {
        write_all(fd, text, tmp);
        if (prepare)
            prepare(fd);
        const int closed = ::close(fd);
        fd = -1;
        if (closed != 0)
            throw std::runtime_error("cannot write " + tmp + ": " + std::strerror(errno));
        std::error_code ec;
        std::filesystem::rename(tmp, path, ec);
        if (ec)
            throw std::runtime_error("cannot replace " + path + ": " + ec.message());
    } catch (...) {
        if (fd >= 0)
            ::close(fd);
        ::unlink(tmp.c_str());
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
    write_text_file_atomically(target, text, [&](int fd) {
        if (exists)  // as it was; umask's if that fails
            (void)::fchmod(fd, static_cast<mode_t>(st.permissions() & fs::perms::mask));
    });
}

}  // namespace slurm_ai
