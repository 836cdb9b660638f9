// Whole-file reads and atomic whole-file writes: every file the suite reads or writes
// (topology files, job records, state files) goes through these two.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "slurm_ai/common/input_error.hpp"

namespace slurm_ai {

// The whole file as text, or an InputError naming the path and the reason, under `field`
// (the option or key that named the file, where one did).
Parsed<std::string> read_text_file(const std::string &path, std::size_t limit = 256u << 20,
                                   std::string_view field = "file");

// Writes `text` beside `path` (PATH.tmp.<pid>) and renames it over `path`: a reader sees
// the old file or the new one, never part of one. `prepare`, when given, runs on the
// written temporary file before the rename (permissions, owner). Throws
// std::runtime_error naming the file; the temporary file does not outlive a failure.
void write_text_file_atomically(const std::string &path, std::string_view text,
                                const std::function<void(const std::string &)> &prepare = {});

}  // namespace slurm_ai
