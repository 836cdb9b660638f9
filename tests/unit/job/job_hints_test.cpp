#include "slurm_ai/job/job_hints.hpp"

#include <csignal>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using namespace slurm_ai;

TEST_CASE("comm option accepts each pattern with its keys", "[hints]") {
    auto ar = parse_comm("allreduce:bytes=1.5G,algo=tree");
    REQUIRE(ar.ok());
    CHECK(ar->pattern == CommPattern::kAllReduce);
    CHECK(ar->bytes == 1610612736ull);
    CHECK(ar->algo == "tree");

    auto pp = parse_comm("pipeline:stages=4,bytes=64M,microbatches=8");
    REQUIRE(pp.ok());
    CHECK(pp->stages == 4);
    CHECK(pp->bytes == 64ull << 20);
    CHECK(pp->microbatches == 8);

    CHECK(parse_comm("tp:size=8")->tp_size == 8);
    CHECK(parse_comm("moe:experts=64,bytes=2GiB")->bytes == 2ull << 30);
    CHECK(parse_comm("ps:servers=2")->servers == 2);
    CHECK(parse_comm("none")->pattern == CommPattern::kNone);
    CHECK(parse_comm("ALLREDUCE")->pattern == CommPattern::kAllReduce);
    CHECK(parse_comm("allreduce:algo=auto")->algo.empty());
}

TEST_CASE("comm option: compute= is a step's computation on one GPU, in ms", "[hints]") {
    CHECK(parse_comm("allreduce:bytes=1G,compute=1.6s")->compute_ms == 1600);
    CHECK(parse_comm("allreduce:compute=250ms")->compute_ms == 250);
    CHECK(parse_comm("pipeline:stages=4,compute=2")->compute_ms == 2000);
    CHECK(parse_comm("tp:size=8,compute=1m")->compute_ms == 60000);
    CHECK(parse_comm("allreduce")->compute_ms == 0);
    for (const char *bad : {"allreduce:compute=0", "allreduce:compute=2h", "allreduce:compute=fast",
                            "allreduce:compute=5d", "allreduce:compute=-1s", "none:compute=1s"}) {
        auto r = parse_comm(bad);
        INFO(bad);
        REQUIRE_FALSE(r.ok());
    }
    auto e = parse_comm("moe:compute=3x");
    REQUIRE_FALSE(e.ok());
    CHECK(e.error().value == "3x");
    CHECK_THAT(e.error().field, Catch::Contains("compute"));
    // It survives the job record's JSON.
    JobHints h;
    h.comm = *parse_comm("allreduce:compute=750ms");
    nlohmann::json j = h;
    JobHints back;
    from_json(j, back);
    REQUIRE(back.comm);
    CHECK(back.comm->compute_ms == 750);
}

TEST_CASE("comm option rejects bad values naming the field", "[hints]") {
    auto bad = parse_comm("allgather");
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().field == "--ai-comm");
    CHECK(bad.error().value == "allgather");
    CHECK_THAT(bad.error().message(), Catch::Contains("allreduce, pipeline, tp, moe, ps, none"));

    auto wrong_key = parse_comm("tp:stages=4");
    REQUIRE_FALSE(wrong_key.ok());
    CHECK_THAT(wrong_key.error().message(), Catch::Contains("size, bytes"));

    auto bad_size = parse_comm("allreduce:bytes=12Q");
    REQUIRE_FALSE(bad_size.ok());
    CHECK(bad_size.error().value == "12Q");
    CHECK_THAT(bad_size.error().field, Catch::Contains("bytes"));

    CHECK_FALSE(parse_comm("pipeline:stages=1").ok());
    CHECK_FALSE(parse_comm("pipeline:stages").ok());
    CHECK_FALSE(parse_comm("none:bytes=1G").ok());
    CHECK_FALSE(parse_comm("allreduce:algo=butterfly").ok());
    CHECK_FALSE(parse_comm("").ok());
}

TEST_CASE("sizes and durations", "[hints]") {
    CHECK(parse_size("x", "4096").value() == 4096);
    CHECK(parse_size("x", "512k").value() == 512ull << 10);
    CHECK(parse_size("x", "100MB").value() == 100ull << 20);
    CHECK(parse_size("x", "1T").value() == 1ull << 40);
    CHECK_FALSE(parse_size("x", "0").ok());
    CHECK_FALSE(parse_size("x", "-1G").ok());
    CHECK_FALSE(parse_size("x", "1.2.3G").ok());
    CHECK_FALSE(parse_size("x", "2GBB").ok());
    CHECK_FALSE(parse_size("x", "9999P").ok());

    CHECK(parse_duration("x", "90").value() == 90);
    CHECK(parse_duration("x", "15m").value() == 900);
    CHECK(parse_duration("x", "2h").value() == 7200);
    CHECK(parse_duration("x", "1d").value() == 86400);
    CHECK_FALSE(parse_duration("x", "5w").ok());
    CHECK_FALSE(parse_duration("x", "m").ok());
    CHECK_FALSE(parse_duration("x", "400d").ok());
}

TEST_CASE("elastic gang and locality options", "[hints]") {
    CHECK(parse_elastic("4:16").value() == ElasticSpec{4, 16});
    CHECK_FALSE(parse_elastic("16:4").ok());
    CHECK_FALSE(parse_elastic("0:4").ok());
    CHECK_FALSE(parse_elastic("4").ok());
    CHECK_FALSE(parse_elastic("4:x").ok());

    auto g = parse_gang("train-a:3:10m");
    REQUIRE(g.ok());
    CHECK(g->name == "train-a");
    CHECK(g->size == 3);
    CHECK(g->timeout_s == 600);
    CHECK(parse_gang("g:2")->timeout_s == 0);
    CHECK_FALSE(parse_gang("g:1").ok());
    CHECK_FALSE(parse_gang("bad name:2").ok());
    CHECK_FALSE(parse_gang(":2").ok());
    CHECK_FALSE(parse_gang("g:2:10m:x").ok());

    CHECK(parse_locality("hard")->hard);
    auto soft = parse_locality("soft:5m");
    REQUIRE(soft.ok());
    CHECK_FALSE(soft->hard);
    CHECK(soft->wait_s == 300);
    CHECK_FALSE(parse_locality("hard:5m").ok());
    CHECK_FALSE(parse_locality("strict").ok());
}

TEST_CASE("checkpoint and dag options", "[hints]") {
    auto c = parse_checkpoint("/scratch/ckpt,signal=USR2@120,keep=5");
    REQUIRE(c.ok());
    CHECK(c->dir == "/scratch/ckpt");
    CHECK(c->signal == SIGUSR2);
    CHECK(c->signal_before_s == 120);
    CHECK(c->keep == 5);
    CHECK(parse_checkpoint("/d,signal=SIGTERM")->signal == SIGTERM);
    CHECK(parse_checkpoint("/d")->signal == SIGUSR1);
    CHECK_FALSE(parse_checkpoint("relative/dir").ok());
    CHECK_FALSE(parse_checkpoint("/d,signal=NOPE").ok());
    CHECK_FALSE(parse_checkpoint("/d,keep=0").ok());
    CHECK_FALSE(parse_checkpoint("/d,every=5").ok());

    CHECK(parse_dag_path("/home/u/dag.json").value() == "/home/u/dag.json");
    CHECK_FALSE(parse_dag_path("dag.json").ok());
}

TEST_CASE("apply_hint knows every option of the table and no other", "[hints]") {
    JobHints h;
    for (const auto &opt : hint_options())
        CHECK(apply_hint(h, opt.name, "").has_value());  // an empty value is never valid
    auto unknown = apply_hint(h, "ai-colour", "red");
    REQUIRE(unknown);
    CHECK(unknown->value == "ai-colour");
    CHECK_FALSE(apply_hint(h, "--ai_comm", "tp:size=4"));
    CHECK(h.comm->tp_size == 4);
}

TEST_CASE("sizes print back readably", "[hints]") {
    CHECK(format_size(1ull << 30) == "1 GiB");
    CHECK(format_size(64ull << 20) == "64 MiB");
    CHECK(format_size(1536) == "1.5 KiB");
    CHECK(format_size(300) == "300 B");
    CHECK(parse_size("x", format_size(3ull << 40)).value() == 3ull << 40);
}

TEST_CASE("an elastic range is clamped into the node range Slurm accepts", "[hints][elastic]") {
    const ElasticSpec asked{2, 8, SIGUSR2};
    // No --nodes: Slurm accepts 1 or more (its cap is 500000), the range stands.
    CHECK(elastic_within(asked, {1, 0}) == asked);
    CHECK(elastic_within(asked, {1, 500000}) == asked);
    // -N2-4 with 1:8: starts, grows and shrinks within 2..4; the signal is kept.
    CHECK(elastic_within({1, 8, SIGUSR2}, {2, 4}) == ElasticSpec{2, 4, SIGUSR2});
    // -N14 with 2:2: the ranges do not meet; Slurm's request wins, the job is not resized.
    CHECK(elastic_within({2, 2, 0}, {14, 14}) == ElasticSpec{14, 14, 0});
    // -N2-3 with 6:8 (above Slurm's maximum): Slurm's maximum.
    CHECK(elastic_within({6, 8, 0}, {2, 3}) == ElasticSpec{3, 3, 0});
    // A minimum of 0 from slurmctld reads as 1; a maximum below the minimum as the minimum.
    CHECK(elastic_within({1, 1, 0}, {0, 0}) == ElasticSpec{1, 1, 0});
    CHECK(elastic_within({1, 9, 0}, {4, 2}) == ElasticSpec{4, 4, 0});

    CHECK(to_string(NodeRange{14, 14}) == "14");
    CHECK(to_string(NodeRange{2, 4}) == "2-4");
    CHECK(to_string(NodeRange{1, 500000}) == "1 or more");
    CHECK(to_string(NodeRange{3, 0}) == "3 or more");
}
