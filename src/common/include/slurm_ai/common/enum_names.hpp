// An enum's names from one table, in the order of its values (an enum that counts from 0
// with no gaps): the one way the suite's enums become text and back. The tables are
// string literals, so a name's data() is also a C string.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace slurm_ai {

template <class E, std::size_t N>
constexpr std::string_view enum_name(E value, const std::string_view (&names)[N]) {
    const auto i = static_cast<std::size_t>(value);
    return i < N ? names[i] : std::string_view("?");
}

template <class E, std::size_t N>
constexpr std::optional<E> enum_from_name(std::string_view text,
                                          const std::string_view (&names)[N]) {
    for (std::size_t i = 0; i < N; ++i)
        if (names[i] == text)
            return static_cast<E>(i);
    return std::nullopt;
}

// "a, b, c or d": every name, for a message that says what was expected.
template <std::size_t N>
std::string enum_names_list(const std::string_view (&names)[N]) {
    std::string out;
    for (std::size_t i = 0; i < N; ++i)
        out.append(i == 0 ? "" : i + 1 == N ? " or " : ", ").append(names[i]);
    return out;
}

}  // namespace slurm_ai
