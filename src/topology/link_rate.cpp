// InfiniBand link rates as ibnetdiscover prints them ("4xQDR") and as admins write them.
#include <array>
#include <cctype>
#include <string>

#include "slurm_ai/topology/fabric.hpp"

namespace slurm_ai {
namespace {

struct LaneSpeed {
    std::string_view name;
    double gbps;  // per lane, after 8b/10b (SDR-QDR) or 64b/66b (FDR10 and later) encoding
};

constexpr std::array<LaneSpeed, 9> kSpeeds{{{"SDR", 2},
                                            {"DDR", 4},
                                            {"QDR", 8},
                                            {"FDR10", 10},
                                            {"FDR", 13.64},
                                            {"EDR", 25},
                                            {"HDR", 50},
                                            {"NDR", 100},
                                            {"XDR", 200}}};

InputError rate_error(std::string_view text) {
    return InputError{"rate", std::string(text),
                      "a link rate such as 4xQDR: an optional width 1x, 2x, 4x, 8x or 12x and a "
                      "speed SDR, DDR, QDR, FDR10, FDR, EDR, HDR, NDR or XDR",
                      "", 0};
}

bool is_space(char c) {
    return c == ' ' || c == '\t';
}

}  // namespace

Parsed<LinkRate> parse_link_rate(std::string_view text) {
    std::string_view s = text;
    while (!s.empty() && is_space(s.front()))
        s.remove_prefix(1);
    while (!s.empty() && is_space(s.back()))
        s.remove_suffix(1);

    LinkRate rate;
    std::size_t digits = 0;
    while (digits < s.size() && digits < 3 && s[digits] >= '0' && s[digits] <= '9')
        ++digits;
    if (digits > 0) {
        if (digits == s.size() || (s[digits] != 'x' && s[digits] != 'X'))
            return rate_error(text);
        int width = 0;
        for (std::size_t i = 0; i < digits; ++i)
            width = width * 10 + (s[i] - '0');
        if (width != 1 && width != 2 && width != 4 && width != 8 && width != 12)
            return rate_error(text);
        rate.width = width;
        s.remove_prefix(digits + 1);
        while (!s.empty() && is_space(s.front()))
            s.remove_prefix(1);
    }

    std::string upper(s);
    for (char &c : upper)
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    for (const auto &speed : kSpeeds) {
        if (upper == speed.name) {
            rate.speed = std::string(speed.name);
            rate.gbps = speed.gbps * rate.width;
            return rate;
        }
    }
    return rate_error(text);
}

}  // namespace slurm_ai
