#include "slurm_ai/common/gres_text.hpp"

#include <charconv>
#include <string_view>

namespace slurm_ai {

std::uint32_t gres_gpu_count(std::string_view gres) {
    std::uint32_t total = 0;
    std::size_t start = 0;
    int depth = 0;
    for (std::size_t i = 0; i <= gres.size(); ++i) {
        const char c = i < gres.size() ? gres[i] : ',';
        depth += c == '(' ? 1 : c == ')' ? -1 : 0;
        if ((c != ',' && c != ';') || depth > 0)
            continue;
        // [gres: or gres/]name[:type]:count[(...)]
        std::string_view entry = gres.substr(start, i - start);
        start = i + 1;
        entry = entry.substr(0, entry.find('('));
        if (entry.starts_with("gres:") || entry.starts_with("gres/"))
            entry.remove_prefix(5);
        const std::size_t colon = entry.rfind(':');
        if (!entry.starts_with("gpu") || (entry.size() > 3 && entry[3] != ':') ||
            colon == std::string_view::npos)
            continue;
        std::uint32_t count = 0;
        const auto digits = entry.substr(colon + 1);
        auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), count);
        if (ec == std::errc() && end == digits.data() + digits.size())
            total += count;
    }
    return total;
}

}  // namespace slurm_ai
