// How the command-line tools turn a parser's InputError into their exit: take() unwraps a
// Parsed value or throws BadInput with the error's message, which main() prints as
// "<tool>: <message>" and exits 1. Only the tools use this; libraries never throw on
// bad input.
#pragma once

#include <string>
#include <utility>

#include "slurm_ai/common/input_error.hpp"

namespace slurm_ai::cli {

struct BadInput {
    std::string message;
};

template <class T>
T take(Parsed<T> p) {
    if (!p)
        throw BadInput{p.error().message()};
    return std::move(p).value();
}

}  // namespace slurm_ai::cli
