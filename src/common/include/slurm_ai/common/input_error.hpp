// The suite's error contract for everything a user or an admin writes: job options, DAG
// files, topology files, plugin configuration. Parsers never throw for bad input; they
// return Parsed<T>, which holds either the value or an InputError that names where the
// input came from, the field, the offending value and what would have been accepted.
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
