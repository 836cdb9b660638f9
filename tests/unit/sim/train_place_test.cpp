// ai-sim train-place (bench/ai-sim/train_place.hpp): the SRR terms by hand and against
// finite differences, the windows' dates, and a short training on two days of Philly on
// two NVL72 racks whose model file records what it did.
#include <cmath>
#include <random>
#include <sstream>

#include <catch2/catch.hpp>

#include "scenario.hpp"
#include "train_place.hpp"

using namespace slurm_ai;
using namespace slurm_ai::sim;

TEST_CASE("train-place: the SRR terms, by hand and against finite differences",
          "[sim][learned]") {
    // Two rows of width 2: means (1, 0), variances (1, 1), covariance -1 (u2 = -u1 + c).
    // KL: 0.5 (1 + 1 - 0 - 1) + 0.5 (0 + 1 - 0 - 1) = 0.5; decorrelation: 2 x (-1)^2 = 2.
    std::vector<std::vector<double>> u = {{0, 1}, {2, -1}};
    std::vector<std::vector<double>> du(2, std::vector<double>(2, 0.0));
    CHECK(srr_terms(u, du) == Approx(2.5));
    // One row is no batch: nothing.
    std::vector<std::vector<double>> one = {{3, 4}}, none(1, std::vector<double>(2, 0.0));
    CHECK(srr_terms(one, none) == 0);

    std::mt19937_64 rng(3);
    std::normal_distribution<double> n01(0, 1);
    std::vector<std::vector<double>> x(6, std::vector<double>(3));
    for (auto &row : x)
        for (double &v : row)
            v = 0.5 + n01(rng);
    std::vector<std::vector<double>> g(6, std::vector<double>(3, 0.0)), scratch = g;
    srr_terms(x, g);
    for (std::size_t r = 0; r < x.size(); ++r)
        for (std::size_t i = 0; i < 3; ++i) {
            auto up = x, down = x;
            up[r][i] += 1e-6;
            down[r][i] -= 1e-6;
            auto s1 = scratch, s2 = scratch;
            const double numeric = (srr_terms(up, s1) - srr_terms(down, s2)) / 2e-6;
            INFO("row " << r << " feature " << i);
            CHECK(g[r][i] == Approx(numeric).margin(1e-5));
        }
}

TEST_CASE("train-place: windows follow one another by date or by seconds", "[sim][learned]") {
    CHECK(shift_start("2017-09-24", 8) == "2017-10-02");
    CHECK(shift_start("2017-12-30", 3) == "2018-01-02");
    CHECK(shift_start("3600", 1) == "90000");
}

TEST_CASE("train-place: a short training records its judgement in the model's file",
          "[sim][learned]") {
    TrainPlaceOptions o;
    o.spec.start = "2017-09-24";
    o.spec.max_jobs = 120;
    o.spec.cluster.shape_of = data_dir() + "/fabric/topograph/nvl72.yaml";
    o.spec.cluster.nodes = {std::string(SLURM_AI_TEST_INPUTS) + "/gb200-tray-topo.xml"};
    o.spec.cluster.hosts = 36;
    o.spec.cluster.host_gbps = 400;
    o.spec = with_defaults(o.spec);
    o.sim.engine = deterministic_engine_options();
    o.sim.contention = true;
    o.windows = 2;
    o.validation = 2;
    std::ostringstream none;
    auto refused = train_place(o, none);
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().field == "--validation");
    o.validation = 1;  // one window to train on, one to choose the round
    o.held_out = 1;
    o.sizes = {2};
    o.imitation_epochs = 5;
    o.rounds = 1;
    o.threads = 1;
    std::ostringstream log;
    auto m = train_place(o, log);
    INFO(log.str());
    REQUIRE(m.ok());
    // The engine's decisions were recorded and imitated, and each size judged on its own
    // held-out window.
    CHECK(m->info.decisions > 0);
    CHECK_THAT(log.str(), Catch::Contains("imitation epoch 5"));
    CHECK_THAT(log.str(), Catch::Contains("validation window 2 (2017-09-25)"));
    REQUIRE(m->info.judged.size() == 1);
    CHECK(m->info.judged[0].hosts == 72);
    CHECK(m->info.judged[0].windows == 1);
    CHECK(m->info.judged[0].engine_mean_jct_h > 0);
    CHECK(m->info.judged[0].mean_jct_h > 0);
    CHECK_THAT(log.str(), Catch::Contains("judged at 72 hosts, window 2017-09-26"));
    // What it writes reads back with the same verdict and scores.
    auto back = LearnedPlacement::parse(m->to_json(), "trained");
    REQUIRE(back.ok());
    CHECK(back->info.beats_engine() == m->info.beats_engine());
    CHECK(back->w == m->w);
    CHECK(back->mean_candidate == m->mean_candidate);
}
