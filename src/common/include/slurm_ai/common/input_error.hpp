// The suite's one error contract for input, written down here and nowhere else.
//
// Input is anything a user or an admin writes, or a file the suite reads back: job
// options, DAG files, topology files, ai_select.conf, job records, the gang file, state
// files. For all of it:
//
//   1. A parser or a loader returns Parsed<T>: the value, or an InputError. It never
//      throws for bad input, never prints, never exits, and leaves no half-built state.
//   2. A function that only checks or applies input (no value to return) returns
//      std::optional<InputError>: nothing, or the error.
//   3. An InputError names where the input came from, the field, the rejected value
//      verbatim and what would have been accepted; message() prints it in one form,
//      "file:line: field='value': expected ...", in every tool, daemon and plugin log.
//   4. Not input errors, and not reported this way: an I/O failure writing a file (the
//      writer throws std::runtime_error naming the file), slurmctld refusing or not
//      answering an RPC (slurm_ai::SlurmError), and a broken invariant (a bug).
//   5. At the C boundary (c_boundary.hpp) each of them becomes a negative return and the
//      message in the caller's buffer; no exception reaches Slurm.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace slurm_ai {

struct InputError {
    std::string field;     // e.g. "--ai-comm", "bytes", "SwitchName"
    std::string value;     // the text that was rejected, verbatim
    std::string expected;  // what would have been accepted, in words
    std::string source;    // file the input came from; empty for options
    int line = 0;          // 1-based line in source; 0 when not from a file

    // "file:line: field=value: expected ...", the form every tool and plugin prints.
    std::string message() const {
        std::string out;
        if (!source.empty()) {
            out += source;
            out += ':';
            if (line > 0) {
                out += std::to_string(line);
                out += ':';
            }
            out += ' ';
        }
        out += field;
        out += "=";
        out += value.empty() ? std::string("''") : "'" + value + "'";
        out += ": expected ";
        out += expected;
        return out;
    }
};

template <class T>
class Parsed {
  public:
    Parsed(T value) : v_(std::move(value)) {}           // NOLINT: implicit by design
    Parsed(InputError error) : v_(std::move(error)) {}  // NOLINT: implicit by design

    bool ok() const { return v_.index() == 0; }
    explicit operator bool() const { return ok(); }

    const T &value() const & { return std::get<0>(v_); }
    T &value() & { return std::get<0>(v_); }
    T &&value() && { return std::get<0>(std::move(v_)); }
    const T *operator->() const { return &std::get<0>(v_); }
    const T &operator*() const { return std::get<0>(v_); }

    const InputError &error() const { return std::get<1>(v_); }

  private:
    std::variant<T, InputError> v_;
};

}  // namespace slurm_ai
