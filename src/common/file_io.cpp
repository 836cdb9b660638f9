#include "slurm_ai/common/file_io.hpp"

#include "slurm_ai/common/unique_fd.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vector>

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

std::optional<std::string> append_to_file(const std::string &path, std::string_view text) {
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
    if (ec)
        return path + ": " + ec.message();
    const UniqueFd fd(::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644));
    if (fd.get() < 0)
        return path + ": " + std::strerror(errno);
    const ssize_t n = ::write(fd.get(), text.data(), text.size());
    if (n == static_cast<ssize_t>(text.size()))
        return std::nullopt;
    return path + ": short write (" + (n < 0 ? std::strerror(errno) : "disk full?") + ")";
}

namespace {

constexpr int kMaxRemoveDepth = 256;

std::error_code errno_code(int e = errno) {
    return {e, std::generic_category()};
}

// errno after a failed call, where nothing being there is no error: what a removal was
// to remove is gone either way.
std::error_code unless_absent() {
    return errno == ENOENT ? std::error_code{} : errno_code();
}

// The directory `name` of `dirfd`, never through a link; -1 with errno else.
int open_directory_at(int dirfd, const char *name) {
    return ::openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

std::error_code remove_at(int dirfd, const std::string &name, int depth);

class RemoveCategory : public std::error_category {
  public:
    const char *name() const noexcept override { return "remove_beneath"; }
    std::string message(int) const override { return "belongs to another user"; }
};

// Removes everything in the directory `fd`, which this closes.
std::error_code empty_directory(int fd, int depth) {
    DIR *d = ::fdopendir(fd);
    if (!d) {
        const std::error_code ec = errno_code();
        ::close(fd);
        return ec;
    }
    std::vector<std::string> names;  // all first: removing while reading may skip some
    errno = 0;
    while (const dirent *e = ::readdir(d)) {
        const std::string_view n = e->d_name;
        if (n != "." && n != "..")
            names.emplace_back(n);
    }
    std::error_code ec = errno != 0 ? errno_code() : std::error_code{};
    for (const auto &n : names)
        if (!ec)
            ec = remove_at(::dirfd(d), n, depth + 1);
    ::closedir(d);
    return ec;
}

// Removes `name` of `dirfd`, which `st` describes as it was looked at (not followed).
std::error_code remove_looked_at(int dirfd, const std::string &name, const struct stat &st,
                                 int depth) {
    if (!S_ISDIR(st.st_mode))
        return ::unlinkat(dirfd, name.c_str(), 0) == 0 ? std::error_code{} : unless_absent();
    if (depth >= kMaxRemoveDepth)
        return errno_code(ELOOP);
    const int fd = open_directory_at(dirfd, name.c_str());
    if (fd < 0) {
        // Swapped for a link or a file since it was looked at: that goes, not what it names.
        if ((errno == ELOOP || errno == ENOTDIR) && ::unlinkat(dirfd, name.c_str(), 0) == 0)
            return {};
        return unless_absent();
    }
    if (auto ec = empty_directory(fd, depth))
        return ec;
    return ::unlinkat(dirfd, name.c_str(), AT_REMOVEDIR) == 0 ? std::error_code{} : unless_absent();
}

std::error_code remove_at(int dirfd, const std::string &name, int depth) {
    struct stat st {};
    if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
        return unless_absent();
    return remove_looked_at(dirfd, name, st, depth);
}

}  // namespace

std::error_code remove_beneath(const std::string &dir, std::string_view relative,
                               std::optional<std::uint32_t> owner) {
    std::vector<std::string> steps;
    for (std::size_t pos = 0; pos <= relative.size();) {
        const std::size_t slash = std::min(relative.find('/', pos), relative.size());
        steps.emplace_back(relative.substr(pos, slash - pos));
        pos = slash + 1;
    }
    for (const auto &s : steps)
        if (s.empty() || s == "." || s == "..")
            return errno_code(EINVAL);
    UniqueFd at(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (at.get() < 0)
        return unless_absent();
    for (std::size_t i = 0; i + 1 < steps.size(); ++i) {
        UniqueFd next(open_directory_at(at.get(), steps[i].c_str()));
        if (next.get() < 0)
            return unless_absent();
        at = std::move(next);
    }
    struct stat st {};
    if (::fstatat(at.get(), steps.back().c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
        return unless_absent();
    if (owner && st.st_uid != *owner)
        return not_owner_error();
    return remove_looked_at(at.get(), steps.back(), st, 0);
}

const std::error_code &not_owner_error() {
    static const RemoveCategory category;
    static const std::error_code code(1, category);
    return code;
}

}  // namespace slurm_ai
