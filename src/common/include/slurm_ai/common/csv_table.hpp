// One CSV file with a header naming its columns, read row by row: the measurement files
// ai-fit fits the cost model to, the job traces ai-sim replays and the select plugin's
// ShapeProfile. Cells are plain
// (no quoting: none of these files uses it); blank lines are skipped. Every error names
// the file, the line, the field and what was expected.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "slurm_ai/common/input_error.hpp"

namespace slurm_ai {

class CsvTable {
  public:
    CsvTable(std::string path, std::string text);

    // Reads the header line; the column names, trimmed. Call once, before select().
    const std::vector<std::string> &read_header();
    // Picks the columns rows return, in this order. Each column lists the names it may
    // have (the first one the header has wins); an optional column the header lacks comes
    // back as an empty cell. The error names the first required column missing.
    struct Column {
        std::vector<std::string> names;
        bool required = true;
    };
    std::optional<InputError> select(const std::vector<Column> &columns);
    // read_header() and select() for required columns of one name each.
    std::optional<InputError> header(const std::vector<std::string> &wanted);
    // Whether select() found column i (optional columns may be absent).
    bool has(std::size_t i) const { return i < columns_.size() && columns_[i] != kAbsent; }

    // The next data row's selected cells; false at the end of the file.
    bool row(std::vector<std::string_view> &out);
    // An error unless the last row had as many cells as the header.
    std::optional<InputError> check_width(std::string_view row_text) const;

    Parsed<double> number(std::string_view field, std::string_view text, bool positive) const;
    Parsed<int> count(std::string_view field, std::string_view text, int lo, int hi) const;
    InputError error(std::string_view field, std::string_view value, std::string expected) const;

    const std::string &path() const { return path_; }
    int line() const { return line_no_; }

  private:
    static constexpr std::size_t kAbsent = static_cast<std::size_t>(-1);
    std::string_view next_line();

    std::string path_;
    std::string text_;
    std::size_t pos_ = 0;
    int line_no_ = 0;
    std::string header_line_;
    std::vector<std::string> names_;
    std::vector<std::size_t> columns_;
    std::size_t width_ = 0;
    std::size_t cells_ = 0;
};

}  // namespace slurm_ai
