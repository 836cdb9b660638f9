// The learned placement scorer (learned_placement.hpp): its forward pass by hand on a
// network of width 1, its backward pass against finite differences, its inputs by hand on
// the NVL72 racks of nvl72.yaml, its file, and the engine letting it choose.
#include <cmath>
#include <random>

#include <catch2/catch.hpp>

#include "placement/placement_fixtures.hpp"
#include "slurm_ai/placement/learned_placement.hpp"
#include "slurm_ai/placement/placement_engine.hpp"
#include "slurm_ai/placement/placement_terms.hpp"
#include "search_budget.hpp"

using namespace slurm_ai;
using namespace slurm_ai::test;

namespace {

// Offsets of the weight blocks for width d (the order of learned_placement.hpp).
struct At {
    explicit At(std::size_t d)
        : bq(d * kPlaceJobInputs), wh(bq + d), bh(wh + d * kPlaceCandidateInputs),
          wk(bh + d), wv(wk + d * kPlaceRegionInputs), bv(wv + d * kPlaceRegionInputs),
          beta(bv + d) {}
    std::size_t bq, wh, bh, wk, wv, bv, beta;
};

PlaceRegionInputs region(double free_before, double share) {
    return {0, free_before, 0, share, 0};
}

// Only the named trays are usable, every GPU of each free.
ClusterState only(const ClusterGraph &g, std::initializer_list<const char *> free) {
    ClusterState s(g);
    for (int h = 0; h < g.host_count(); ++h) {
        s.usable[h] = 0;
        s.free_gpus[h] = 0;
    }
    for (const char *name : free) {
        s.usable[host(g, name)] = 1;
        s.free_gpus[host(g, name)] = 0xf;
    }
    return s;
}

}  // namespace

TEST_CASE("learned placement: the forward pass, by hand at width 1", "[placement][learned]") {
    LearnedPlacement m(1);
    const At at(1);
    REQUIRE(m.w.size() == LearnedPlacement::parameter_count(1));
    REQUIRE(m.w.size() == 6 + 1 + 8 + 1 + 5 + 5 + 1 + 8);
    m.w[0] = 1;            // Wq[0][0]: q = tanh(job[0])
    m.w[at.wh] = 2;        // Wh[0][0]: h = tanh(2 x candidate[0])
    m.w[at.wk + 1] = 1;    // Wk[0][1]: k = the region's free share before
    m.w[at.wv + 3] = 1;    // Wv[0][3]: v = tanh(the job's share there)
    m.w[at.beta] = 1;      // beta[0]: + candidate[0]
    m.mean_job[0] = 0.5;   // job[0] 1.5 standardizes to (1.5 - 0.5) / 2 = 0.5
    m.scale_job[0] = 2;

    PlaceDecision d;
    d.job[0] = 1.5;
    PlaceCandidate a;  // split over two regions: one empty before, one full
    a.x[0] = 0.5;
    a.regions = {region(1.0, 0.75), region(0.0, 0.25)};
    PlaceCandidate b;  // in one region
    b.x[0] = 0;
    b.regions = {region(0.5, 1.0)};
    d.candidates = {a, b};

    const double q = std::tanh(0.5);
    // a: h = tanh(1); logits h x 1 and h x 0; u = h + a1 tanh(0.75) + a2 tanh(0.25).
    const double ha = std::tanh(1.0);
    const double a1 = std::exp(ha) / (std::exp(ha) + 1), a2 = 1 - a1;
    const double ua = ha + a1 * std::tanh(0.75) + a2 * std::tanh(0.25);
    // b: h = 0, one region (weight 1): u = tanh(1).
    const double ub = std::tanh(1.0);
    const auto s = m.scores(d);
    REQUIRE(s.size() == 2);
    CHECK(s[0] == Approx(q * ua + 0.5));
    CHECK(s[1] == Approx(q * ub));
    CHECK(m.choose(d) == 0);
    m.w[at.beta] = -3;  // now a's own input counts against it: q ua - 1.5 < q ub
    CHECK(m.choose(d) == 1);
    // The pass keeps what backward needs: the attention weights sum to 1.
    const auto pass = m.forward(d);
    CHECK(pass.candidates[0].a[0] == Approx(a1));
    CHECK(pass.candidates[0].a[0] + pass.candidates[0].a[1] == Approx(1));
}

TEST_CASE("learned placement: the backward pass matches finite differences",
          "[placement][learned]") {
    std::mt19937_64 rng(7);
    std::normal_distribution<double> n01(0, 1);
    LearnedPlacement m(3);
    for (double &w : m.w)
        w = 0.5 * n01(rng);
    PlaceDecision d;
    for (double &x : d.job)
        x = n01(rng);
    for (int c = 0; c < 3; ++c) {
        PlaceCandidate pc;
        for (double &x : pc.x)
            x = n01(rng);
        for (int r = 0; r <= c; ++r) {
            PlaceRegionInputs z;
            for (double &x : z)
                x = n01(rng);
            pc.regions.push_back(z);
        }
        d.candidates.push_back(pc);
    }
    // A loss linear in the scores and in the features u: sum ds_c s_c + du_c . u_c.
    std::vector<double> ds = {0.3, -1.2, 0.7};
    std::vector<std::vector<double>> du = {{0.1, -0.2, 0.3}, {0.0, 0.5, -0.4}, {0.2, 0.2, 0.2}};
    auto loss = [&](const LearnedPlacement &net) {
        const auto p = net.forward(d);
        double l = 0;
        for (std::size_t c = 0; c < 3; ++c) {
            l += ds[c] * p.scores[c];
            for (std::size_t i = 0; i < 3; ++i)
                l += du[c][i] * p.candidates[c].u[i];
        }
        return l;
    };
    std::vector<double> grad(m.w.size(), 0.0);
    m.backward(m.forward(d), ds, du, grad);
    for (std::size_t i = 0; i < m.w.size(); ++i) {
        LearnedPlacement up = m, down = m;
        up.w[i] += 1e-6;
        down.w[i] -= 1e-6;
        INFO("parameter " << i);
        CHECK(grad[i] == Approx((loss(up) - loss(down)) / 2e-6).margin(1e-6));
    }
}

TEST_CASE("learned placement: a decision's inputs, by hand on NVL72 racks",
          "[placement][learned]") {
    const ClusterGraph g = nvl72_racks();
    PlacementEngine engine(g, {}, {}, test::unhurried());
    // Rack 11xx: two whole trays free; rack 12xx: three. An 8-GPU job waits.
    ClusterState s = only(g, {"node1101", "node1102", "node1201", "node1202", "node1203"});
    s.wanted = {{8, 1}};
    const JobDemand four = make_demand(JobRequest{1, 1, 4, 4, 1}, JobHints{});
    Placement in_a, in_b;
    in_a.hosts = {host(g, "node1101")};
    in_a.gpus = {{0, 1, 2, 3}};
    in_b.hosts = {host(g, "node1201")};
    in_b.gpus = {{0, 1, 2, 3}};
    engine.score(four, &s, in_a);
    engine.score(four, &s, in_b);
    const double rate = engine.risk_model().constants().host_per_day;
    const double ideal = engine.lower_bound(four);
    const auto d = placement_inputs(g, s, four, ideal, rate,
                                    {{&in_a, 1.0, destroyed_capacity(s, in_a)},
                                     {&in_b, 1.0, destroyed_capacity(s, in_b)}});
    CHECK(d.job[0] == Approx(std::log1p(4)));
    CHECK(d.job[1] == Approx(std::log1p(1)));
    CHECK(d.job[2] == Approx(std::log1p(ideal * 1e3)));
    CHECK(d.job[3] == 0);  // no time limit
    CHECK(d.job[4] == 0);  // not waited
    CHECK(d.job[5] == Approx(std::log1p(8.0 / 4)));
    REQUIRE(d.candidates.size() == 2);
    const auto &a = d.candidates[0], &b = d.candidates[1];
    CHECK(a.x[0] == Approx(0).margin(1e-12));  // objective 1
    CHECK(a.x[1] == Approx(1 - in_a.efficiency));
    CHECK(a.x[2] == Approx(std::log1p(8.0 / 4)));  // takes one 8-GPU job's room from rack 11
    CHECK(b.x[2] == Approx(0));                    // rack 12 keeps it
    CHECK(a.x[3] == Approx(std::log1p(in_a.risk / rate)));
    CHECK(a.x[4] == 0);
    CHECK(a.x[5] == 0);
    CHECK(a.x[6] == 0);
    CHECK(a.x[7] == 0);
    // One region each, the rack (an NVLink domain of 18 trays, 72 GPUs).
    REQUIRE(a.regions.size() == 1);
    CHECK(a.regions[0][0] == Approx(std::log1p(72)));
    CHECK(a.regions[0][1] == Approx(8.0 / 72));
    CHECK(a.regions[0][2] == Approx(4.0 / 72));
    CHECK(a.regions[0][3] == Approx(1));
    CHECK(b.regions[0][1] == Approx(12.0 / 72));
    CHECK(b.regions[0][2] == Approx(8.0 / 72));
}

TEST_CASE("learned placement: the engine lets a model choose among its candidates",
          "[placement][learned][engine]") {
    const ClusterGraph g = nvl72_racks();
    ClusterState s = only(g, {"node1101", "node1102", "node1201", "node1202", "node1203"});
    s.wanted = {{8, 1}};
    const JobDemand four = make_demand(JobRequest{1, 1, 4, 4, 1}, JobHints{});
    // Without a model the engine keeps rack 12 whole enough for the 8-GPU job.
    auto plain = PlacementEngine(g, {}, {}, test::unhurried()).place(four, s);
    REQUIRE(plain.placement);
    CHECK(g.host_name(plain.placement->hosts[0]).starts_with("node12"));
    // A model that likes taking room from the sizes waiting (beta on input 2) takes rack 11;
    // one that dislikes it agrees with the engine.
    for (double weight : {5.0, -5.0}) {
        auto model = std::make_shared<LearnedPlacement>(2);
        model->w[At(2).beta + 2] = weight;
        EngineOptions o;
        o.placement_model = model;
        auto learned = PlacementEngine(g, {}, {}, test::unhurried(o)).place(four, s);
        REQUIRE(learned.placement);
        CHECK(g.host_name(learned.placement->hosts[0]).starts_with(weight > 0 ? "node11"
                                                                               : "node12"));
        CHECK(learned.placement->efficiency == Approx(1));
    }
}

TEST_CASE("learned placement: the file, its verdict and its errors", "[placement][learned]") {
    LearnedPlacement m(2);
    for (std::size_t i = 0; i < m.w.size(); ++i)
        m.w[i] = 0.01 * static_cast<double>(i) - 0.2;
    m.scale_region[4] = 0.3125;
    m.info = {"nvl72 (nvl72.yaml), philly.csv", "imitation of a lookahead", 144, 4, 1200, 30,
              0.1, {{288, 3, 7.9, 8.1}, {576, 3, 6.2, 6.3}}};
    CHECK(m.info.beats_engine());
    const std::string text = m.to_json();
    auto back = LearnedPlacement::parse(text, "model.json");
    REQUIRE(back.ok());
    CHECK(back->w == m.w);
    CHECK(back->scale_region == m.scale_region);
    CHECK(back->width() == 2);
    CHECK(back->info.judged.size() == 2);
    CHECK(back->info.beats_engine());
    CHECK_THAT(back->info.judged_text(),
               Catch::Contains("7.900 h against the engine's 8.100 h at 288 hosts"));

    // A loss at one judged size is no win, nor a tie (within 0.5%: 6.28 against 6.3), nor
    // never having been judged.
    LearnedPlacement lost = m;
    lost.info.judged[1].mean_jct_h = 6.28;
    CHECK_FALSE(lost.info.beats_engine());
    lost.info.judged[1].mean_jct_h = 6.4;
    CHECK_FALSE(lost.info.beats_engine());
    lost.info.judged.clear();
    CHECK_FALSE(lost.info.beats_engine());
    CHECK(lost.info.judged_text() == "never judged");

    auto error_field = [](const std::string &json) {
        auto p = LearnedPlacement::parse(json, "model.json");
        REQUIRE_FALSE(p.ok());
        CHECK(p.error().source == "model.json");
        return p.error().field;
    };
    auto edited = [&](const std::string &from, const std::string &to) {
        std::string t = text;
        const auto at = t.find(from);
        REQUIRE(at != std::string::npos);
        return t.replace(at, from.size(), to);
    };
    CHECK(error_field("not json") == "JSON");
    CHECK(error_field(R"({"format": "slurm-ai learned risk model"})") == "format");
    CHECK(error_field(edited("\"version\": 1", "\"version\": 2")) == "version");
    CHECK(error_field(edited("\"width\": 2", "\"width\": 0")) == "width");
    CHECK(error_field(edited("\"width\": 2", "\"width\": 3")) == "parameters");  // too few
    CHECK(error_field(edited("0.3125", "0.0")) == "scale/region[4]");
    CHECK(error_field(edited("\"beats_engine\": true", "\"beats_engine\": 1")) == "beats_engine");
    // A verdict the figures do not give is refused, not believed.
    CHECK(error_field(edited("\"mean_jct_h\": 7.9", "\"mean_jct_h\": 8.2")) == "beats_engine");
    CHECK(error_field(edited("\"judged\"", "\"judgd\"")) == "trained/judged");
}
