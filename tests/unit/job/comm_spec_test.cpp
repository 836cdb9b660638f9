#include "slurm_ai/job/comm_spec.hpp"

#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "slurm_ai/job/job_hints.hpp"

using namespace slurm_ai;

namespace {

// A spec in which every field the table has is given.
CommSpec every_field() {
    CommSpec c;
    c.pattern = CommPattern::kPipeline;
    c.bytes = 3ull << 30;
    c.stages = 4;
    c.microbatches = 8;
    c.tp_size = 2;
    c.experts = 16;
    c.servers = 3;
    c.algo = "ring";
    c.compute_ms = 1600;
    return c;
}

}  // namespace

TEST_CASE("a spec prints as --ai-comm takes it and parses back", "[comm]") {
    CHECK(to_string(*parse_comm("pipeline:bytes=64M,stages=4,microbatches=8")) ==
          "pipeline:stages=4,microbatches=8,bytes=64M");
    CHECK(to_string(*parse_comm("allreduce:bytes=1.5G,algo=tree,compute=1.6s")) ==
          "allreduce:bytes=1536M,algo=tree,compute=1600ms");
    CHECK(to_string(*parse_comm("tp:size=8,bytes=1000")) == "tp:size=8,bytes=1000");
    CHECK(to_string(*parse_comm("allreduce:algo=auto")) == "allreduce");
    CHECK(to_string(*parse_comm("none")) == "none");
    for (const char *text :
         {"allreduce:bytes=2T,compute=1h", "moe:experts=64,bytes=2GiB", "ps:servers=2,bytes=1536",
          "pipeline:stages=4096,microbatches=1048576", "tp:size=2,compute=1ms"}) {
        auto spec = parse_comm(text);
        INFO(text);
        REQUIRE(spec);
        auto back = parse_comm(to_string(*spec));
        REQUIRE(back);
        CHECK(*back == *spec);
    }
}

TEST_CASE("every field of the table has its JSON name, and JSON reads back", "[comm]") {
    const CommSpec c = every_field();
    nlohmann::json j = c;
    CHECK(j.size() == comm_fields().size() + 1);  // and the pattern
    for (const auto &f : comm_fields()) {
        INFO(f.key);
        CHECK(f.given(c));
        CHECK(j.contains(std::string(f.json)));
    }
    CHECK(j["tp_size"] == 2);
    CHECK(j["compute_ms"] == 1600);
    CHECK(j.get<CommSpec>() == c);
    // Fields not given are left out.
    CHECK(nlohmann::json(CommSpec{}) == nlohmann::json{{"pattern", "allreduce"}});
    CHECK_THROWS(nlohmann::json{{"pattern", "allgather"}}.get<CommSpec>());
}

TEST_CASE("each pattern takes the table's keys for it, and only those", "[comm]") {
    for (auto p : {CommPattern::kAllReduce, CommPattern::kPipeline, CommPattern::kTensorParallel,
                   CommPattern::kMoE, CommPattern::kParameterServer, CommPattern::kNone}) {
        CHECK(comm_pattern_named(to_string(p)) == p);
        for (const auto &f : comm_fields()) {
            const std::string text = std::string(to_string(p)) + ":" + std::string(f.key) + "=" +
                                     (f.unit == CommUnit::kChoice ? "tree" : "4");
            auto spec = parse_comm(text);
            INFO(text);
            CHECK(spec.ok() == f.used_by(p));
            if (!spec)
                CHECK_THAT(spec.error().expected, Catch::Contains(std::string(f.key)));
        }
    }
    CHECK_FALSE(comm_pattern_named("allgather"));
}

TEST_CASE("a bad value names its field and the value", "[comm]") {
    for (const auto &f : comm_fields()) {
        if (f.unit != CommUnit::kCount)
            continue;
        for (auto p : {CommPattern::kPipeline, CommPattern::kTensorParallel, CommPattern::kMoE,
                       CommPattern::kParameterServer}) {
            if (!f.used_by(p))
                continue;
            const std::string value = std::to_string(f.max + 1ull);
            const std::string key = std::string(f.key);
            auto spec = parse_comm(std::string(to_string(p)) + ":" + key + "=" + value);
            REQUIRE_FALSE(spec);
            CHECK_THAT(spec.error().field, Catch::Contains("'" + key + "'"));
            CHECK(spec.error().value == value);
        }
    }
    auto algo = parse_comm("allreduce:algo=butterfly");
    REQUIRE_FALSE(algo);
    CHECK(algo.error().value == "butterfly");
    CHECK(algo.error().expected == "one of ring, tree, hierarchical, auto");
}

TEST_CASE("the help of --ai-comm lists every pattern with its keys", "[comm]") {
    const std::string help = comm_help();
    CHECK_THAT(help, Catch::StartsWith("allreduce[:bytes=SIZE,algo=ring|tree|hierarchical|auto,"
                                       "compute=TIME], pipeline[:stages=N,microbatches=N,"));
    CHECK_THAT(help, Catch::Contains(", none; compute: a step's computation on one GPU"));
    CHECK_THAT(std::string(hint_options()[0].usage), Catch::EndsWith(help));
}
