#include "slurm_ai/job/task_dag.hpp"

#include <filesystem>
#include <fstream>
#include <iterator>

#include <catch2/catch.hpp>

using namespace slurm_ai;

namespace {
const char *kDag = R"({
  "tasks": [
    {"name": "embed", "gpus": 2},
    {"name": "stage1", "gpus": 4, "compute_s": 0.02},
    {"name": "head", "compute_s": 0.01}
  ],
  "edges": [
    {"from": "embed", "to": "stage1", "bytes": "64M"},
    {"from": "stage1", "to": "head", "bytes": 1048576}
  ]
})";
}

TEST_CASE("a task DAG is read with sizes and defaults", "[dag]") {
    auto dag = parse_task_dag(kDag, "dag.json");
    REQUIRE(dag.ok());
    REQUIRE(dag->tasks.size() == 3);
    CHECK(dag->tasks[2].gpus == 1);
    CHECK(dag->tasks[1].compute_s == Approx(0.02));
    CHECK(dag->total_gpus() == 7);
    REQUIRE(dag->edges.size() == 2);
    CHECK(dag->edges[0].bytes == 64ull << 20);
    CHECK(dag->edges[1].from == 1);
    CHECK(dag->topological_order() == std::vector<std::uint32_t>{0, 1, 2});
}

TEST_CASE("the compact form reads back to the same DAG", "[dag]") {
    auto dag = parse_task_dag(kDag, "dag.json");
    REQUIRE(dag.ok());
    auto compact = compact_task_dag(dag.value());
    CHECK(compact.find('\n') == std::string::npos);
    CHECK(compact.size() < std::string(kDag).size());
    auto again = parse_task_dag(compact, "env");
    REQUIRE(again.ok());
    CHECK(again.value() == dag.value());
}

TEST_CASE("bad DAG files are rejected naming the field", "[dag]") {
    struct Case {
        const char *json, *field, *value;
    };
    const Case cases[] = {
        {R"({"tasks": []})", "tasks", "[]"},
        {R"({"tasks": [{"name": "a", "gpus": 0}]})", "tasks[0].gpus", "0"},
        {R"({"tasks": [{"name": "a"}, {"name": "a"}]})", "tasks[1].name", "a"},
        {R"({"tasks": [{"name": "a", "colour": 1}]})", "tasks[0].colour", "colour"},
        {R"({"tasks": [{"name": "a"}], "edges": [{"from": "a", "to": "b"}]})", "edges[0].to", "b"},
        {R"({"tasks": [{"name": "a"}, {"name": "b"}], "edges": [{"from": "a", "to": "b", "bytes": "1Q"}]})",
         "edges[0].bytes", "1Q"},
        {R"({"tasks": [{"name": "a"}], "nodes": []})", "nodes", "nodes"},
        {R"({"tasks": [{"name": "a", "compute_s": -1}]})", "tasks[0].compute_s", "-1"},
    };
    for (const auto &c : cases) {
        INFO(c.json);
        auto dag = parse_task_dag(c.json, "bad.json");
        REQUIRE_FALSE(dag.ok());
        CHECK(dag.error().field == c.field);
        CHECK(dag.error().value == c.value);
        CHECK(dag.error().source == "bad.json");
    }
}

TEST_CASE("cycles and broken JSON are reported", "[dag]") {
    auto cycle = parse_task_dag(R"({"tasks": [{"name": "a"}, {"name": "b"}],
        "edges": [{"from": "a", "to": "b"}, {"from": "b", "to": "a"}]})",
                                "cycle.json");
    REQUIRE_FALSE(cycle.ok());
    CHECK_THAT(cycle.error().message(), Catch::Contains("acyclic"));

    auto broken =
        parse_task_dag("{\n  \"tasks\": [\n    {\"name\": \"a\",}\n  ]\n}", "broken.json");
    REQUIRE_FALSE(broken.ok());
    CHECK(broken.error().line == 3);
    CHECK(broken.error().source == "broken.json");

    CHECK_FALSE(load_task_dag("/nonexistent/dag.json").ok());
}

TEST_CASE("inputs the fuzzer once crashed on are rejected cleanly", "[dag]") {
    namespace fs = std::filesystem;
    auto dir = fs::path(SLURM_AI_TEST_INPUTS) / ".." / "fuzz" / "regressions" / "task_dag";
    int seen = 0;
    for (const auto &entry : fs::directory_iterator(dir)) {
        std::ifstream in(entry.path(), std::ios::binary);
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        INFO(entry.path().string());
        auto dag = parse_task_dag(text, entry.path().string());
        CHECK_FALSE(dag.ok());
        ++seen;
    }
    CHECK(seen >= 1);
}
