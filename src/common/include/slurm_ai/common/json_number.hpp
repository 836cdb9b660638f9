// Whole numbers read back from a JSON document the suite wrote (job records, gang files,
// restart logs, elastic views, state files), which a crash, a full disk or a hand edit may
// have left with any value. nlohmann's get<T>() converts a fraction or a number out of T's
// range with a cast: undefined behaviour from a float, a wrapped value from a negative
// into an unsigned. These throw the library's own type_error instead, naming the field
// and the value, which every reader already turns into a clear error for the file.
// Header-only, so that slurm_ai::common needs no JSON library: Json is nlohmann::json.
#pragma once

#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <string_view>

namespace slurm_ai {

// `v` as a T, or a type_error when it is not a whole number that T holds.
template <class T, class Json>
T json_whole_value(const Json &v, std::string_view field) {
    bool fits = false;
    if (v.is_number_unsigned())
        fits = v.template get<std::uint64_t>() <=
               static_cast<std::uint64_t>(std::numeric_limits<T>::max());
    else if (v.is_number_integer()) {
        const auto i = v.template get<std::int64_t>();
        fits = i >= static_cast<std::int64_t>(std::numeric_limits<T>::min()) &&
               (i < 0 || static_cast<std::uint64_t>(i) <=
                             static_cast<std::uint64_t>(std::numeric_limits<T>::max()));
    }
    if (!fits)
        throw Json::type_error::create(
            302, std::string(field) + " must be a whole number that fits, not " + v.dump(), &v);
    return v.is_number_unsigned() ? static_cast<T>(v.template get<std::uint64_t>())
                                  : static_cast<T>(v.template get<std::int64_t>());
}

// The member `key` of object `j` as a T (out_of_range when it is missing).
template <class T, class Json>
T json_whole(const Json &j, const char *key) {
    return json_whole_value<T>(j.at(key), key);
}

// The member `key` of object `j` as a T, or `fallback` when it is missing.
template <class T, class Json>
T json_whole(const Json &j, const char *key, T fallback) {
    return j.contains(key) ? json_whole_value<T>(j.at(key), key) : fallback;
}

// The member `key` of object `j`, an array of whole numbers, as a set of T (out_of_range
// when it is missing).
template <class T, class Json>
std::set<T> json_whole_set(const Json &j, const char *key) {
    std::set<T> out;
    const Json &a = j.at(key);
    if (!a.is_array())
        throw Json::type_error::create(
            302, std::string(key) + " must be an array of whole numbers, not " + a.dump(), &a);
    for (const auto &v : a)
        out.insert(json_whole_value<T>(v, key));
    return out;
}

}  // namespace slurm_ai
