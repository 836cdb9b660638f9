// Scanning the suite's plain-text inputs (topology.conf, GUID maps, ai_select.conf,
// option values): lines with their numbers, and the trimming and case folding every
// Key=Value parser needs. Header-only; no allocation except lower().
#pragma once

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>
#include <vector>

namespace slurm_ai::text {

// Blanks between fields of the line-based files (not newlines: lines are split first).
inline bool is_blank(char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}
inline bool is_hex(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

inline std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
        s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
        s.remove_suffix(1);
    return s;
}

// `s` with every byte outside printable ASCII as '?': for comments in the config files
// the suite writes, and for JSON (nlohmann::json refuses to dump what is not UTF-8).
inline std::string printable(std::string_view s) {
    std::string out(s);
    for (char &c : out) {
        auto u = static_cast<unsigned char>(c);
        if (u < 0x20 || u >= 0x7f)
            c = '?';
    }
    return out;
}

// `s` in double quotes, '"' and '\\' escaped with a backslash: as Graphviz and YAML read
// a quoted string.
inline std::string quoted(std::string_view s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\')
            out += '\\';
        out += c;
    }
    return out + "\"";
}

inline std::string lower(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

// Text made safe for XML content and attribute values (&, <, >, ").
inline std::string xml_escape(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
        switch (c) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '"':
                out += "&quot;";
                break;
            default:
                out += c;
        }
    }
    return out;
}

// The fields of "a,b,,c" split at sep, empty ones kept; an empty text has one empty field.
inline std::vector<std::string_view> split(std::string_view s, char sep) {
    std::vector<std::string_view> out;
    for (std::size_t start = 0;;) {
        auto end = s.find(sep, start);
        out.push_back(s.substr(start, end == std::string_view::npos ? end : end - start));
        if (end == std::string_view::npos)
            return out;
        start = end + 1;
    }
}

// The lines of a text without their '\n', numbered from 1, so that a parser can return
// an error naming the line from inside its loop:
//   LineReader lines(text);
//   for (std::string_view line; lines.next(line);) { ... lines.number() ... }
// A last line without '\n' is read; an empty text has no lines.
class LineReader {
  public:
    explicit LineReader(std::string_view text) : text_(text) {}
    bool next(std::string_view &line) {
        if (pos_ >= text_.size())
            return false;
        auto end = text_.find('\n', pos_);
        if (end == std::string_view::npos)
            end = text_.size();
        line = text_.substr(pos_, end - pos_);
        pos_ = end + 1;
        ++number_;
        return true;
    }
    int number() const { return number_; }

  private:
    std::string_view text_;
    std::size_t pos_ = 0;
    int number_ = 0;
};

// Device names in natural order: digit runs compare as numbers, so mlx5_2 < mlx5_10 and
// HCA-1 < HCA-2; an empty name (unknown) after every named one.
inline bool natural_less(std::string_view a, std::string_view b) {
    if (a.empty() != b.empty())
        return b.empty();
    auto digit = [](char c) { return c >= '0' && c <= '9'; };
    std::size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        if (digit(a[i]) && digit(b[j])) {
            std::size_t ie = i, je = j;
            while (ie < a.size() && digit(a[ie]))
                ++ie;
            while (je < b.size() && digit(b[je]))
                ++je;
            std::string_view na = a.substr(i, ie - i), nb = b.substr(j, je - j);
            while (na.size() > 1 && na.front() == '0')
                na.remove_prefix(1);
            while (nb.size() > 1 && nb.front() == '0')
                nb.remove_prefix(1);
            if (na.size() != nb.size())
                return na.size() < nb.size();
            if (na != nb)
                return na < nb;
            i = ie;
            j = je;
        } else {
            if (a[i] != b[j])
                return a[i] < b[j];
            ++i;
            ++j;
        }
    }
    return a.size() - i < b.size() - j;
}

}  // namespace slurm_ai::text
