#include "slurm_ai/common/csv_table.hpp"

#include <algorithm>
#include <charconv>
#include <system_error>

#include "slurm_ai/common/text_scan.hpp"

namespace slurm_ai {
using text::split;
using text::trim;

CsvTable::CsvTable(std::string path, std::string text)
    : path_(std::move(path)), text_(std::move(text)) {}

const std::vector<std::string> &CsvTable::read_header() {
    std::string_view line = next_line();
    header_line_ = std::string(line);
    names_.clear();
    for (auto n : split(line, ','))
        names_.emplace_back(trim(n));
    width_ = names_.size();
    return names_;
}

std::optional<InputError> CsvTable::select(const std::vector<Column> &columns) {
    columns_.clear();
    for (const auto &c : columns) {
        std::size_t found = kAbsent;
        for (const auto &name : c.names) {
            auto it = std::find(names_.begin(), names_.end(), name);
            if (it != names_.end()) {
                found = static_cast<std::size_t>(it - names_.begin());
                break;
            }
        }
        if (found == kAbsent && c.required) {
            std::string expected = "a CSV header with a column named " + c.names.front();
            for (std::size_t i = 1; i < c.names.size(); ++i)
                expected += (i + 1 == c.names.size() ? " or " : ", ") + c.names[i];
            return InputError{"header", header_line_, expected, path_, line_no_};
        }
        columns_.push_back(found);
    }
    return std::nullopt;
}

std::optional<InputError> CsvTable::header(const std::vector<std::string> &wanted) {
    read_header();
    std::vector<Column> columns;
    for (const auto &w : wanted)
        columns.push_back({{w}, true});
    return select(columns);
}

bool CsvTable::row(std::vector<std::string_view> &out) {
    std::string_view line;
    do {
        if (pos_ >= text_.size())
            return false;
        line = trim(next_line());
    } while (line.empty());
    auto cells = split(line, ',');
    out.clear();
    for (auto c : columns_)
        out.push_back(c < cells.size() ? trim(cells[c]) : std::string_view());
    cells_ = cells.size();
    return true;
}

std::optional<InputError> CsvTable::check_width(std::string_view row_text) const {
    if (cells_ != width_)
        return error("row", row_text,
                     std::to_string(width_) + " comma-separated cells, as the header has");
    return std::nullopt;
}

Parsed<double> CsvTable::number(std::string_view field, std::string_view text,
                                bool positive) const {
    double v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size() || !(v >= 0) ||
        (positive && v == 0))
        return error(field, text, positive ? "a positive number" : "a number >= 0");
    return v;
}

Parsed<int> CsvTable::count(std::string_view field, std::string_view text, int lo, int hi) const {
    int v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size() || v < lo || v > hi)
        return error(field, text,
                     "a whole number from " + std::to_string(lo) + " to " + std::to_string(hi));
    return v;
}

InputError CsvTable::error(std::string_view field, std::string_view value,
                           std::string expected) const {
    return InputError{std::string(field), std::string(value), std::move(expected), path_, line_no_};
}

std::string_view CsvTable::next_line() {
    std::string_view all(text_);
    auto end = all.find('\n', pos_);
    auto line = all.substr(pos_, end == std::string_view::npos ? all.npos : end - pos_);
    pos_ = end == std::string_view::npos ? all.size() : end + 1;
    ++line_no_;
    return line;
}

}  // namespace slurm_ai
