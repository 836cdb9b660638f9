#include "slurm_ai/common/hostlist.hpp"

#include <random>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

using namespace slurm_ai;

namespace {

std::vector<std::string> expand(std::string_view expr) {
    auto names = expand_hostlist(expr, "Nodes");
    INFO(expr);
    REQUIRE(names.ok());
    return names.value();
}

using Names = std::vector<std::string>;

}  // namespace

TEST_CASE("hostlist expands ranges and keeps zero padding", "[hostlist]") {
    CHECK(expand("n[08-10]") == Names{"n08", "n09", "n10"});
    CHECK(expand("n[8-10]") == Names{"n8", "n9", "n10"});
    CHECK(expand("n[098-100]") == Names{"n098", "n099", "n100"});
    CHECK(expand("a,b[1-2]") == Names{"a", "b1", "b2"});
    CHECK(expand("sl390lin[1-5,7-11]").size() == 10);
    CHECK(expand("n[1-2]-ib") == Names{"n1-ib", "n2-ib"});
    CHECK(expand("[1-2]") == Names{"1", "2"});
    CHECK(expand("n5") == Names{"n5"});
    CHECK(expand("").empty());
    // Blanks separate like commas, as in Slurm's hostlist_create().
    CHECK(expand("a b,,c") == Names{"a", "b", "c"});
}

TEST_CASE("hostlist expands several bracket groups as a product", "[hostlist]") {
    CHECK(expand("rack[1-2]n[1-3]") ==
          Names{"rack1n1", "rack1n2", "rack1n3", "rack2n1", "rack2n2", "rack2n3"});
    CHECK(expand("r[1,3]-n[01-02].ib") ==
          Names{"r1-n01.ib", "r1-n02.ib", "r3-n01.ib", "r3-n02.ib"});
}

TEST_CASE("hostlist rejects malformed expressions naming the field", "[hostlist]") {
    struct Case {
        const char *expr;
        const char *says;
    };
    for (const auto &c :
         {Case{"n[1-3", "never closed"}, Case{"n1-3]", "closes no '['"}, Case{"n[3-1]", "low end"},
          Case{"n[a-b]", "a number"}, Case{"n[1-2x]", "',' or ']'"}, Case{"n[]", "a number"},
          Case{"n[1-]", "a number"}, Case{"n[-2]", "a number"}, Case{"n[1,,2]", "a number"},
          Case{"n[1[2]]", "',' or ']'"}, Case{"n[1234567890123456789]", "at most 18 digits"},
          Case{"bad\x01name", "byte 1"}, Case{"a#b", "'#'"}, Case{"caf\xc3\xa9", "byte 195"}}) {
        auto r = expand_hostlist(c.expr, "Nodes");
        INFO(c.expr);
        REQUIRE_FALSE(r.ok());
        CHECK(r.error().field == "Nodes");
        CHECK(r.error().value == c.expr);
        CHECK_THAT(r.error().expected, Catch::Contains(c.says));
        CHECK_THAT(r.error().message(), Catch::StartsWith("Nodes='"));
    }
}

TEST_CASE("hostlist expansion stops at its limit", "[hostlist]") {
    CHECK(expand_hostlist("n[1-10]", "Nodes", 10).ok());
    auto over = expand_hostlist("n[1-10],m", "Nodes", 10);
    REQUIRE_FALSE(over.ok());
    CHECK_THAT(over.error().expected, Catch::Contains("at most 10 names"));
    // A product too large to count in 64 bits is refused before anything is built.
    auto huge = expand_hostlist("a[0-999999999999999999]b[0-999999999999999999]", "Nodes");
    REQUIRE_FALSE(huge.ok());
    CHECK_THAT(huge.error().expected, Catch::Contains("at most"));
}

TEST_CASE("hostlist compresses to Slurm's form", "[hostlist]") {
    CHECK(compress_hostlist({"n3", "n1", "n2", "n5"}) == "n[1-3,5]");
    CHECK(compress_hostlist({"n08", "n09", "n10"}) == "n[08-10]");
    CHECK(compress_hostlist({"n8", "n9", "n10"}) == "n[8-10]");
    CHECK(compress_hostlist({"n8", "n09"}) == "n[8,09]");
    CHECK(compress_hostlist({"n5"}) == "n5");
    CHECK(compress_hostlist({"n2", "n1", "n2"}) == "n[1-2]");
    CHECK(compress_hostlist({"login", "n1", "n2"}) == "login,n[1-2]");
    CHECK(compress_hostlist({"n1-ib", "n2-ib", "n1-eth"}) == "n1-eth,n[1-2]-ib");
    CHECK(compress_hostlist({}).empty());
    CHECK(compress_hostlist({"sl390lin22", "sl390lin28", "H-78e7d1030024535c", "sl390lin34",
                             "sl390lin37"}) == "H-78e7d1030024535c,sl390lin[22,28,34,37]");
}

TEST_CASE("hostlist compression expands back to the same names", "[hostlist]") {
    std::mt19937 rng(12345);
    const std::vector<std::string> prefixes{"n", "gpu", "rack1-n", "", "x5570comp", "a.b"};
    const std::vector<std::string> suffixes{"", "-ib", "x"};
    for (int round = 0; round < 200; ++round) {
        std::set<std::string> names;
        int count = static_cast<int>(rng() % 40);
        for (int i = 0; i < count; ++i) {
            std::string num = std::to_string(rng() % 120);
            if (rng() % 4 == 0)
                num.insert(0, rng() % 3, '0');
            names.insert(prefixes[rng() % prefixes.size()] + num +
                         suffixes[rng() % suffixes.size()]);
        }
        if (rng() % 5 == 0)
            names.insert("login");
        std::string compressed = compress_hostlist({names.begin(), names.end()});
        auto back = expand_hostlist(compressed, "Nodes");
        INFO(compressed);
        REQUIRE(back.ok());
        CHECK(std::set<std::string>(back->begin(), back->end()) == names);
        CHECK(back->size() == names.size());
    }
}

TEST_CASE("hostlist names that config files can carry", "[hostlist]") {
    CHECK(is_host_name("sl390lin1"));
    CHECK(is_host_name("H-78e7d1030024535c"));
    CHECK(is_host_name("node.example_1"));
    CHECK_FALSE(is_host_name(""));
    CHECK_FALSE(is_host_name("a b"));
    CHECK_FALSE(is_host_name("a,b"));
    CHECK_FALSE(is_host_name("n[1]"));
    CHECK_FALSE(is_host_name("a#b"));
    CHECK_FALSE(is_host_name("a=b"));
    CHECK_FALSE(is_host_name(std::string(256, 'a')));
}
