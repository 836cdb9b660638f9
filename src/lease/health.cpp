#include "slurm_ai/lease/health.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>

#include "slurm_ai/common/unique_fd.hpp"

namespace slurm_ai::lease {

const std::vector<int> &fatal_xids() {
    static const std::vector<int> xids = {48, 61, 62, 64, 74, 79, 95, 119, 120, 140};
    return xids;
}

std::optional<HealthEvent> fatal_xid(std::string_view line) {
    const auto at = line.find("Xid (");
    if (at == std::string_view::npos)
        return std::nullopt;
    const auto close = line.find("):", at);
    if (close == std::string_view::npos)
        return std::nullopt;
    HealthEvent e;
    e.device = std::string(line.substr(at + 5, close - at - 5));
    std::string_view rest = line.substr(close + 2);
    while (!rest.empty() && rest.front() == ' ')
        rest.remove_prefix(1);
    auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), e.xid);
    if (ec != std::errc() || (end != rest.data() + rest.size() && *end != ','))
        return std::nullopt;
    const auto &fatal = fatal_xids();
    if (std::find(fatal.begin(), fatal.end(), e.xid) == fatal.end())
        return std::nullopt;
    std::string_view text = line.substr(at);
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
        text.remove_suffix(1);
    e.text = std::string(text);
    return e;
}

FileTail::FileTail(std::string path) : path_(std::move(path)) {}

std::vector<std::string> FileTail::new_lines() {
    std::vector<std::string> out;
    const UniqueFd fd(::open(path_.c_str(), O_RDONLY | O_CLOEXEC));
    struct stat st {};
    if (fd.get() < 0 || ::fstat(fd.get(), &st) != 0) {
        if (offset_ < 0)
            offset_ = 0;  // written later: read it all then
        return out;
    }
    if (offset_ < 0) {
        offset_ = st.st_size;
    } else if (st.st_ino != inode_ || st.st_size < offset_) {
        offset_ = 0;
        partial_.clear();
    }
    inode_ = st.st_ino;
    char buf[65536];
    for (ssize_t n; (n = ::pread(fd.get(), buf, sizeof buf, offset_)) > 0; offset_ += n)
        partial_.append(buf, static_cast<std::size_t>(n));
    for (std::size_t nl; (nl = partial_.find('\n')) != std::string::npos;) {
        out.push_back(partial_.substr(0, nl));
        partial_.erase(0, nl + 1);
    }
    if (partial_.size() > (1u << 20))
        partial_.clear();  // no line is that long: not a log
    return out;
}

}  // namespace slurm_ai::lease
