// What the reliability work (fuzzing, fault tests) found and fixed in the select plugin's
// state and decisions, and the fuzz regressions of the select targets replayed: a state
// file that would poison the failure history, a lost state file, and a placement with
// fewer nodes than the job asked for.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <unistd.h>
#include <catch2/catch.hpp>

#include "fuzz/select_decide_input.hpp"
#include "slurm_ai/select_ai/select_service.hpp"
#include "slurm_ai/topology/fabric.hpp"
#include "scratch_dir.hpp"
#include "search_budget.hpp"

using namespace slurm_ai;
namespace fs = std::filesystem;

namespace {

const fs::path kRegressions = fs::path(SLURM_AI_TEST_INPUTS).parent_path() / "fuzz" / "regressions";
const std::string kX5 = std::string(SLURM_AI_DATA_DIR) + "/fabric/X5.topology.conf";

void write(const fs::path &path, const std::string &text) {
    std::ofstream(path) << text;
}

std::string read(const fs::path &path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

// The X5 fabric's hosts, as slurm.conf would name them, and a service loaded on it with
// the mini-cluster's node (4 GPUs) in every host.
std::vector<std::string> x5_hosts() {
    auto f = load_topology_conf(kX5);
    REQUIRE(f.ok());
    std::vector<std::string> names;
    for (int h : f->hosts())
        names.push_back(f->nodes[h].name);
    return names;
}

void load_x5(SelectService &s, const fs::path &dir, const std::vector<std::string> &names) {
    write(dir / "ai_select.conf", "Fabric=" + kX5 +
                                      "\nNodeTopology=" SLURM_AI_TEST_INPUTS
                                      "/minicluster-node.xml\nTimeBudgetMs=1\n");
    REQUIRE_FALSE(s.load((dir / "ai_select.conf").string(), kX5, names));
}

}  // namespace

TEST_CASE("a state file with unusable failure counts is rejected, naming the node", "[service]") {
    test::ScratchDir dir("reliability-state");
    struct Bad {
        const char *entry, *named;
    };
    for (auto b : {Bad{R"({"count": -2, "at": 1700000000})", "failures.r422node7.count='-2'"},
                   Bad{R"({"count": 1e999, "at": 1700000000})", "number overflow"},
                   Bad{R"({"count": 1, "at": -1e999})", "number overflow"}}) {
        INFO(b.entry);
        write(dir.path / "ai_select_state.json",
              std::string(R"({"version": 1, "failures": {"r422node7": )") + b.entry + "}}");
        SelectService s({}, test::kUnhurriedSearch);
        s.note_failure("sentinel", 1.7e9);
        auto err = s.restore_state(dir.path.string());
        REQUIRE(err);
        CHECK_THAT(err->message(), Catch::Contains(b.named) && Catch::Contains("starting clean") &&
                                       Catch::Contains("ai_select_state.json"));
        CHECK(s.failures("r422node7", 1.7e9) == 0);
        CHECK(s.failures("sentinel", 1.7e9) == 1);  // the history before it, as it was
    }
}

TEST_CASE("the failure history's text is parsed and written without the file system",
          "[service]") {
    // Version 1 (the weekly count alone) reads as version 2 with the class unknown.
    auto v1 = parse_failure_history(R"({"version": 1, "failures": {"n1": {"count": 2, "at": 5}}})",
                                    "state.json");
    REQUIRE(v1);
    const HostFailures &n1 = v1->at("n1");
    CHECK(n1.day == 2);
    CHECK(n1.month == 2);
    CHECK(n1.by_class[static_cast<std::size_t>(FailureClass::kOther)] == 2);
    CHECK(n1.last == 5);
    const std::string text = dump_failure_history(v1.value());
    CHECK_THAT(text, Catch::Contains(R"("version": 2)") && Catch::Contains(R"("other": 2.0)"));
    auto v2 = parse_failure_history(text, "again");
    REQUIRE(v2);
    CHECK(v2.value() == v1.value());
    // Errors name the source they were given and the field.
    for (auto [bad, named] :
         {std::pair<const char *, const char *>{R"({"version": 3, "failures": {}})",
                                                "state.json: version='3': expected 1 or 2"},
          {"[", "state.json: json="},
          {R"({"version": 2, "failures": {"n1": {"day": 1, "week": 1, "month": 1, "at": 1,
             "last": 1, "classes": {"gpu": -1}}}})",
           "state.json: failures.n1.classes.gpu='-1'"}}) {
        INFO(bad);
        auto p = parse_failure_history(bad, "state.json");
        REQUIRE_FALSE(p);
        CHECK_THAT(p.error().message(), Catch::StartsWith(named));
    }
}

TEST_CASE("a failure dated in the future counts as a failure now", "[service]") {
    test::ScratchDir dir("reliability-future");
    write(dir.path / "ai_select_state.json",
          R"({"version": 1, "failures": {"n1": {"count": 2, "at": 1.3e24}}})");
    SelectService s({}, test::kUnhurriedSearch);
    REQUIRE_FALSE(s.restore_state(dir.path.string()));
    CHECK(s.failures("n1", 1.7e9) == Approx(2.0));
}

TEST_CASE("a state file missing beside slurmctld's own state is reported", "[service]") {
    test::ScratchDir dir("reliability-missing");
    CHECK_FALSE(SelectService().restore_state(dir.path.string()));  // a first start
    write(dir.path / "job_state", "");
    auto err = SelectService().restore_state(dir.path.string());
    REQUIRE(err);
    CHECK_THAT(err->message(), Catch::Contains("ai_select_state.json: file='missing'"));
}

TEST_CASE("a job with fewer GPUs than nodes is placed on all of its nodes", "[service]") {
    test::ScratchDir dir("reliability-fewer-gpus");
    auto names = x5_hosts();
    SelectService s({}, test::kUnhurriedSearch);
    load_x5(s, dir.path, names);
    std::vector<SelectNode> view(names.size(), SelectNode{true, 0xf, 1, 0});
    for (std::uint32_t nodes : {2u, 4u, 16u}) {
        INFO(nodes << " nodes, 2 GPUs");
        // sbatch -N<nodes> --gpus=2: two GPUs for the whole job, the other nodes without.
        SelectJob job{nodes, nodes, nodes, 0, 2, 2, 0, {}};
        auto out = s.decide(job, view);
        REQUIRE(out.kind == SelectOutcome::Kind::kPlaced);
        CHECK(out.nodes.size() == nodes);
        CHECK(std::set<int>(out.nodes.begin(), out.nodes.end()).size() == nodes);
        s.forget(job.job_id);
    }
}

// The kept crash inputs of the two select fuzz targets, run the way their targets run them.
TEST_CASE("fuzz regressions of the select plugin's state file are handled", "[service][fuzz]") {
    int replayed = 0;
    for (const auto &entry : fs::directory_iterator(kRegressions / "select_state")) {
        INFO(entry.path().string());
        auto history = parse_failure_history(read(entry.path()), entry.path().string());
        if (!history)
            continue;  // rejected with a message: fine
        for (const auto &[name, h] : history.value()) {
            const double f = h.as_of(1.7e9).week;
            CHECK(std::isfinite(f));
            CHECK(f >= 0);
        }
        auto again = parse_failure_history(dump_failure_history(history.value()), "again");
        REQUIRE(again);
        CHECK(again.value() == history.value());
        ++replayed;
    }
    CHECK(replayed > 0);
}

TEST_CASE("fuzz regressions of the select plugin's decisions are handled", "[service][fuzz]") {
    test::ScratchDir dir("reliability-replay-decide");
    auto names = x5_hosts();
    names.push_back("not-in-the-fabric");
    SelectService s({}, test::kUnhurriedSearch);
    load_x5(s, dir.path, names);
    int replayed = 0;
    for (const auto &entry : fs::directory_iterator(kRegressions / "select_decide")) {
        INFO(entry.path().string());
        const std::string text = read(entry.path());
        REQUIRE(text.size() >= 8);
        auto in = fuzz::decide_input(text, names.size());
        REQUIRE(in);
        const SelectJob &job = in->job;
        const std::vector<SelectNode> &view = in->view;
        auto out = s.decide(job, view);
        if (out.kind == SelectOutcome::Kind::kPlaced) {
            // The same oracle: within the node range slurmctld accepts for the job.
            CHECK(out.nodes.size() >= job.min_nodes);
            CHECK(out.nodes.size() <= job.max_nodes);
            for (int n : out.nodes)
                CHECK(view.at(static_cast<std::size_t>(n)).usable);
            if (out.min_nodes) {
                CHECK(out.min_nodes >= job.min_nodes);
                CHECK(out.max_nodes <= job.max_nodes);
                CHECK(out.req_nodes >= out.min_nodes);
                CHECK(out.req_nodes <= out.max_nodes);
            }
        }
        s.forget(job.job_id);
        ++replayed;
    }
    CHECK(replayed > 0);
}
