// Whole-file reads and atomic whole-file writes: every file the suite reads or writes
// (topology files, job records, state files) goes through these two; logs are appended
// to (append_to_file). And the removal of what a job's user may have put in the way
// (remove_beneath).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

#include "slurm_ai/common/input_error.hpp"

namespace slurm_ai {

// The whole file as text, or an InputError naming the path and the reason, under `field`
// (the option or key that named the file, where one did).
Parsed<std::string> read_text_file(const std::string &path, std::size_t limit = 256u << 20,
                                   std::string_view field = "file");

// Writes `text` beside `path` (PATH.tmp.<pid>) and renames it over `path`: a reader sees
// the old file or the new one, never part of one. `prepare`, when given, runs on the
// written temporary file's descriptor before the rename (fchmod, fchown). Throws
// std::runtime_error naming the file; the temporary file does not outlive a failure.
// Neither `path` nor the temporary name is followed where it is a symbolic link: the link
// at `path` is replaced, one at the temporary name removed. The daemons and slurmstepd
// write as root into directories a job's user may write too (its view, /tmp), where
// following a link would write wherever it points. Output files that should follow
// links use write_output_file.
void write_text_file_atomically(const std::string &path, std::string_view text,
                                const std::function<void(int)> &prepare = {});

// A command's output file (--output, --json, --map): written with
// write_text_file_atomically, keeping the mode of a file it replaces, where `path` names a
// regular file or nothing yet. Through a symbolic link, the file the link names is
// replaced and the link stays. A path that names something else (a terminal, a pipe,
// /dev/stdout) is written in place: there is no file to replace there, and renaming over
// it would put a regular file where the device or link was. Throws std::runtime_error
// naming the file.
void write_output_file(const std::string &path, std::string_view text);

// Appends `text` to `path` (made, and its directories, where missing) in one write() on an
// O_APPEND descriptor, so that writers at once never interleave inside it: a log's line.
// The error names the path (nullopt: written). For files only the daemons' user writes
// (StateSaveLocation, an admin's log path): a link at `path` is followed.
std::optional<std::string> append_to_file(const std::string &path, std::string_view text);

// Removes `relative` beneath the directory `dir` ("NAME" or "NAME/.../LAST"), with all it
// holds where it is a directory, and never through a symbolic link below `dir`: each step
// opens the next entry relative to the directory before it, without following, so a link
// is removed and never what it names, also one swapped in for an entry while the walk
// runs. A link on the way to LAST stops the removal (ELOOP or ENOTDIR). With `owner`, a
// LAST that belongs to another uid is left (not_owner_error()): the daemons remove, as
// SlurmUser, in directories a job's user writes, and a user who swaps such a directory
// for a link to the daemon's own must not have it remove the daemon's files. Nothing at
// `relative` is no error; a directory more than 256 deep is left (ELOOP). `dir` itself is
// opened as named. Other failures are the system's errno (EACCES, EPERM, ...).
std::error_code remove_beneath(const std::string &dir, std::string_view relative,
                               std::optional<std::uint32_t> owner = std::nullopt);

// remove_beneath's answer for a LAST of another uid than `owner`; no errno means that.
const std::error_code &not_owner_error();

}  // namespace slurm_ai
