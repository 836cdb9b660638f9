// Slurm hostlist expressions: expansion of "prefix[ranges]suffix" items and the inverse.
// Several bracket groups in one item ("rack[1-2]n[1-3]") expand to their cartesian
// product, as Slurm's multi-dimensional hostlists do.
#include "slurm_ai/common/hostlist.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <tuple>

namespace slurm_ai {
namespace {

// 18 digits always fit in uint64_t, so hi + 1 never overflows while expanding.
constexpr std::size_t kMaxDigits = 18;

bool is_separator(char c) {
    return c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

// The characters beyond these would end a value or start a comment or a quote in Slurm's
// config files, or are hostlist syntax.
bool is_name_char(char c) {
    auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7f)
        return false;
    switch (c) {
        case '[':
        case ']':
        case ',':
        case '#':
        case '=':
        case '"':
        case '\'':
        case '\\':
            return false;
        default:
            return true;
    }
}

InputError hostlist_error(std::string_view field, std::string_view expr, std::string detail) {
    return InputError{std::string(field), std::string(expr),
                      "a hostlist such as node[01-16,20],login1: " + std::move(detail), "", 0};
}

std::string padded(std::uint64_t n, std::size_t width) {
    std::string digits = std::to_string(n);
    if (digits.size() < width)
        digits.insert(0, width - digits.size(), '0');
    return digits;
}

// "lo" or "lo-hi" inside brackets; names are printed with at least lo's digit count, which
// is how "n[08-10]" keeps its zero padding.
struct Range {
    std::uint64_t lo = 0;
    std::uint64_t hi = 0;
    std::size_t width = 0;
};

// One comma-separated item: literals[0] group[0] literals[1] ... group[n-1] literals[n].
struct Item {
    std::vector<std::string> literals{std::string()};
    std::vector<std::vector<Range>> groups;
};

class Parser {
  public:
    Parser(std::string_view expr, std::string_view field) : expr_(expr), field_(field) {}

    Parsed<std::vector<Item>> items() {
        std::vector<Item> out;
        while (pos_ < expr_.size()) {
            if (is_separator(expr_[pos_])) {
                ++pos_;
                continue;
            }
            auto item = parse_item();
            if (!item)
                return item.error();
            out.push_back(std::move(item).value());
        }
        return out;
    }

  private:
    InputError error(std::string detail) const {
        return hostlist_error(field_, expr_, std::move(detail));
    }
    std::string at() const { return " at offset " + std::to_string(pos_); }
    static std::string describe(char c) {
        auto u = static_cast<unsigned char>(c);
        if (u < 0x20 || u >= 0x7f)
            return "byte " + std::to_string(u);
        return std::string("'") + c + "'";
    }

    Parsed<Item> parse_item() {
        Item item;
        while (pos_ < expr_.size() && !is_separator(expr_[pos_])) {
            char c = expr_[pos_];
            if (c == '[') {
                ++pos_;
                auto group = parse_group();
                if (!group)
                    return group.error();
                item.groups.push_back(std::move(group).value());
                item.literals.emplace_back();
            } else if (c == ']') {
                return error("']'" + at() + " closes no '['");
            } else if (!is_name_char(c)) {
                return error("a host name character, not " + describe(c) + at());
            } else {
                item.literals.back() += c;
                ++pos_;
            }
        }
        return item;
    }

    Parsed<std::uint64_t> parse_number(std::size_t &width) {
        std::size_t start = pos_;
        while (pos_ < expr_.size() && expr_[pos_] >= '0' && expr_[pos_] <= '9')
            ++pos_;
        width = pos_ - start;
        if (width == 0)
            return error("a number" + at());
        if (width > kMaxDigits)
            return error("a number of at most 18 digits" + at());
        std::uint64_t n = 0;
        for (std::size_t i = start; i < pos_; ++i)
            n = n * 10 + static_cast<std::uint64_t>(expr_[i] - '0');
        return n;
    }

    Parsed<std::vector<Range>> parse_group() {
        std::size_t open = pos_ - 1;
        std::vector<Range> ranges;
        for (;;) {
            if (pos_ >= expr_.size())
                return error("'[' at offset " + std::to_string(open) + " is never closed");
            Range r;
            auto lo = parse_number(r.width);
            if (!lo)
                return lo.error();
            r.lo = r.hi = lo.value();
            if (pos_ < expr_.size() && expr_[pos_] == '-') {
                ++pos_;
                std::size_t hi_width = 0;
                auto hi = parse_number(hi_width);
                if (!hi)
                    return hi.error();
                r.hi = hi.value();
                if (r.hi < r.lo)
                    return error("a range whose low end is not above its high end" + at());
            }
            ranges.push_back(r);
            if (pos_ >= expr_.size())
                return error("'[' at offset " + std::to_string(open) + " is never closed");
            char c = expr_[pos_++];
            if (c == ']')
                return ranges;
            if (c != ',')
                return error("',' or ']' inside brackets, not " + describe(c) + " at offset " +
                             std::to_string(pos_ - 1));
        }
    }

    std::string_view expr_;
    std::string_view field_;
    std::size_t pos_ = 0;
};

// Number of names an item expands to, or nullopt past `limit`.
std::optional<std::size_t> item_count(const Item &item, std::size_t limit) {
    std::size_t total = 1;
    for (const auto &group : item.groups) {
        std::size_t n = 0;
        for (const auto &r : group) {
            std::uint64_t span = r.hi - r.lo;  // +1 below, after the limit check
            if (span >= limit || n + span + 1 > limit)
                return std::nullopt;
            n += static_cast<std::size_t>(span + 1);
        }
        if (n != 0 && total > limit / n)
            return std::nullopt;
        total *= n;
    }
    return total;
}

void expand_item(const Item &item, std::size_t group, std::string &name,
                 std::vector<std::string> &out) {
    if (group == item.groups.size()) {
        out.push_back(name);
        return;
    }
    std::size_t keep = name.size();
    for (const auto &r : item.groups[group]) {
        for (std::uint64_t n = r.lo;; ++n) {
            name += padded(n, r.width);
            name += item.literals[group + 1];
            expand_item(item, group + 1, name, out);
            name.resize(keep);
            if (n == r.hi)
                break;
        }
    }
}

// A name split around its last run of digits: "sl390lin22" -> "sl390lin", 22, "".
// Names without digits (or with a run too long for a number) are literal and never merge.
struct SplitName {
    std::string prefix;
    std::string suffix;
    bool numbered = false;
    std::uint64_t num = 0;
    std::string digits;

    auto key() const { return std::tie(prefix, suffix, numbered, num, digits); }
};

SplitName split_name(std::string name) {
    SplitName s;
    std::size_t end = name.size();
    while (end > 0 && !(name[end - 1] >= '0' && name[end - 1] <= '9'))
        --end;
    std::size_t begin = end;
    while (begin > 0 && name[begin - 1] >= '0' && name[begin - 1] <= '9')
        --begin;
    if (end == 0 || end - begin > kMaxDigits) {
        s.prefix = std::move(name);
        return s;
    }
    s.numbered = true;
    s.digits = name.substr(begin, end - begin);
    for (char c : s.digits)
        s.num = s.num * 10 + static_cast<std::uint64_t>(c - '0');
    s.suffix = name.substr(end);
    name.resize(begin);
    s.prefix = std::move(name);
    return s;
}

}  // namespace

Parsed<std::vector<std::string>> expand_hostlist(std::string_view expr, std::string_view field,
                                                 std::size_t limit) {
    auto items = Parser(expr, field).items();
    if (!items)
        return items.error();
    std::size_t total = 0;
    for (const auto &item : items.value()) {
        auto n = item_count(item, limit);
        if (!n || total + *n > limit)
            return hostlist_error(field, expr,
                                  "at most " + std::to_string(limit) + " names in all");
        total += *n;
    }
    std::vector<std::string> out;
    out.reserve(total);
    for (const auto &item : items.value()) {
        std::string name = item.literals[0];
        expand_item(item, 0, name, out);
    }
    return out;
}

bool is_host_name(std::string_view name) {
    return !name.empty() && name.size() <= 255 &&
           std::all_of(name.begin(), name.end(), is_name_char);
}

std::string compress_hostlist(std::vector<std::string> names) {
    std::vector<SplitName> split;
    split.reserve(names.size());
    for (auto &name : names)
        split.push_back(split_name(std::move(name)));
    std::sort(split.begin(), split.end(),
              [](const SplitName &a, const SplitName &b) { return a.key() < b.key(); });
    split.erase(
        std::unique(split.begin(), split.end(),
                    [](const SplitName &a, const SplitName &b) { return a.key() == b.key(); }),
        split.end());

    std::string out;
    std::size_t i = 0;
    while (i < split.size()) {
        if (!out.empty())
            out += ',';
        const SplitName &first = split[i];
        if (!first.numbered) {
            out += first.prefix;
            ++i;
            continue;
        }
        // All names with this prefix and suffix, as runs of consecutive numbers that print
        // with the padding of the run's first number.
        std::string ranges;
        std::size_t count = 0;
        std::size_t j = i;
        while (j < split.size() && split[j].numbered && split[j].prefix == first.prefix &&
               split[j].suffix == first.suffix) {
            std::size_t width = split[j].digits.size();
            std::size_t last = j;
            while (last + 1 < split.size() && split[last + 1].numbered &&
                   split[last + 1].prefix == first.prefix &&
                   split[last + 1].suffix == first.suffix &&
                   split[last + 1].num == split[last].num + 1 &&
                   split[last + 1].digits == padded(split[last + 1].num, width))
                ++last;
            if (!ranges.empty())
                ranges += ',';
            ranges += split[j].digits;
            if (last != j) {
                ranges += '-';
                ranges += split[last].digits;
            }
            count += last - j + 1;
            j = last + 1;
        }
        out += first.prefix;
        if (count == 1) {
            out += ranges;
        } else {
            out += '[';
            out += ranges;
            out += ']';
        }
        out += first.suffix;
        i = j;
    }
    return out;
}

}  // namespace slurm_ai
