// Whole numbers read back from the suite's JSON files (json_number.hpp): a value that is
// not a whole number of the type, or does not fit it, is a type_error naming the field,
// never a cast.
#include "slurm_ai/common/json_number.hpp"

#include <cstdint>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using namespace slurm_ai;
using nlohmann::json;

TEST_CASE("json_whole: whole numbers that fit, and a clear error for the rest", "[common][json]") {
    const json j = json::parse(R"({"id": 77, "neg": -3, "big": 18446744073709551615,
                                   "huge": 1e300, "half": 2.5, "text": "77", "ids": [1, 2, 2],
                                   "bad_ids": [1, -1], "not_ids": {"a": 1}})");
    CHECK(json_whole<std::uint32_t>(j, "id") == 77);
    CHECK(json_whole<std::int64_t>(j, "neg") == -3);
    CHECK(json_whole<std::uint64_t>(j, "big") == UINT64_MAX);
    CHECK(json_whole<std::uint32_t>(j, "absent", 5) == 5);
    CHECK(json_whole_set<std::uint32_t>(j, "ids") == std::set<std::uint32_t>{1, 2});
    // Out of range, negative into unsigned, a fraction, a float beyond any integer, text.
    for (const char *key : {"big", "neg", "half", "huge", "text"}) {
        INFO(key);
        CHECK_THROWS_WITH(json_whole<std::uint32_t>(j, key),
                          Catch::Contains(std::string(key) + " must be a whole number"));
    }
    CHECK_THROWS_AS(json_whole<std::int64_t>(j, "big"), json::type_error);
    CHECK_THROWS_AS(json_whole<std::uint32_t>(j, "absent"), json::out_of_range);
    CHECK_THROWS_WITH(json_whole_set<std::uint32_t>(j, "bad_ids"), Catch::Contains("not -1"));
    CHECK_THROWS_WITH(json_whole_set<std::uint32_t>(j, "not_ids"), Catch::Contains("an array"));
}
