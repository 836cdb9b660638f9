// GUID-to-hostname maps: the "H-<guid> hostname" files tools like ibmap2slurm read, and
// OFED node-name-maps ("0x<guid> \"name\"").
#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "slurm_ai/common/hostlist.hpp"
#include "slurm_ai/common/text_scan.hpp"
#include "slurm_ai/topology/fabric.hpp"

namespace slurm_ai {
using text::is_blank;
using text::is_hex;

Parsed<std::string> parse_guid(std::string_view text, std::string_view field) {
    std::string_view hex = text;
    if (hex.size() > 2 && (hex[0] == 'H' || hex[0] == 'S' || hex[0] == 'R') && hex[1] == '-')
        hex.remove_prefix(2);
    else if (hex.size() > 2 && hex[0] == '0' && (hex[1] == 'x' || hex[1] == 'X'))
        hex.remove_prefix(2);
    if (hex.empty() || hex.size() > 16 || !std::all_of(hex.begin(), hex.end(), is_hex)) {
        return InputError{std::string(field), std::string(text),
                          "a GUID: up to 16 hex digits, bare or as 0x<hex> or H-/S-/R-<hex>", "",
                          0};
    }
    std::string out(16 - hex.size(), '0');
    for (char c : hex)
        out += static_cast<char>(c >= 'A' && c <= 'F' ? c - 'A' + 'a' : c);
    return out;
}

Parsed<GuidMap> parse_guid_map(std::string_view text, std::string_view source) {
    GuidMap map;
    std::map<std::string, int> first_line;
    text::LineReader lines(text);
    for (std::string_view line; lines.next(line);) {
        const int line_no = lines.number();

        auto fail = [&](std::string field, std::string_view value, std::string expected) {
            return InputError{std::move(field), std::string(value), std::move(expected),
                              std::string(source), line_no};
        };

        // Hostnames cannot hold '#', so the first one starts a comment wherever it is.
        if (auto hash = line.find('#'); hash != std::string_view::npos)
            line = line.substr(0, hash);
        std::size_t i = 0;
        auto skip_blanks = [&] {
            while (i < line.size() && is_blank(line[i]))
                ++i;
        };
        skip_blanks();
        if (i == line.size())
            continue;

        std::size_t start = i;
        while (i < line.size() && !is_blank(line[i]))
            ++i;
        std::string_view guid_text = line.substr(start, i - start);
        auto guid = parse_guid(guid_text, "guid");
        if (!guid)
            return fail("guid", guid_text, guid.error().expected);

        skip_blanks();
        std::string_view host;
        if (i < line.size() && line[i] == '"') {
            std::size_t close = line.find('"', i + 1);
            if (close == std::string_view::npos)
                return fail("hostname", line.substr(i), "a closing '\"'");
            host = line.substr(i + 1, close - i - 1);
            i = close + 1;
        } else {
            start = i;
            while (i < line.size() && !is_blank(line[i]))
                ++i;
            host = line.substr(start, i - start);
            if (host.empty())
                return fail("hostname", host, "a hostname after the GUID");
        }
        if (!is_host_name(host)) {
            return fail("hostname", host,
                        "a hostname of printable characters without blanks or any of "
                        "[ ] , # = \" ' \\");
        }
        skip_blanks();
        if (i != line.size())
            return fail("line", line.substr(i), "nothing after the hostname but a # comment");

        auto [it, inserted] = map.emplace(guid.value(), std::string(host));
        if (!inserted && it->second != host) {
            return fail("guid", guid_text,
                        "each GUID once: line " + std::to_string(first_line[guid.value()]) +
                            " maps it to " + it->second);
        }
        if (inserted)
            first_line[guid.value()] = line_no;
    }
    return map;
}

Parsed<GuidMap> load_guid_map(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return InputError{"file", path, "a readable GUID map file", path, 0};
    std::ostringstream text;
    text << in.rdbuf();
    return parse_guid_map(text.str(), path);
}

}  // namespace slurm_ai
