#include "slurm_ai/placement/failure_risk.hpp"

#include <catch2/catch.hpp>

#include "placement/placement_fixtures.hpp"

using namespace slurm_ai;
using namespace slurm_ai::test;

namespace {

JobDemand pattern(CommPattern p, std::uint32_t nodes, std::uint32_t stages = 0) {
    CommSpec c;
    c.stages = stages;
    return pattern_demand(p, nodes, 0, c);
}

}  // namespace

TEST_CASE("a ring self-limits: a host failure loses only that host", "[risk]") {
    auto g = fat_tree(2, 4, 100, 100);
    RiskConstants c{1.0, 0.0, 0.0};  // host failures only, one per day each
    RiskModel model(g, c);
    auto r = model.estimate(pattern(CommPattern::kAllReduce, 4),
                            hosts_only(g, {"h1", "h2", "h3", "h4"}));
    CHECK(r.graph == "cyclic");
    CHECK(r.per_day == Approx(4 * 0.25));
    CHECK(r.worst_impact == Approx(0.25));
}

TEST_CASE("a pipeline cascades: a stage's failure loses every stage before it", "[risk]") {
    auto g = fat_tree(2, 4, 100, 100);
    RiskModel model(g, RiskConstants{1.0, 0.0, 0.0});
    auto r = model.estimate(pattern(CommPattern::kPipeline, 4, 4),
                            hosts_only(g, {"h1", "h2", "h3", "h4"}));
    CHECK(r.graph == "cascade");
    // Losing stage k (0-based) loses stages 0..k: (1 + 2 + 3 + 4) / 4 per day.
    CHECK(r.per_day == Approx((1 + 2 + 3 + 4) / 4.0));
    CHECK(r.worst_impact == Approx(1.0));
    CHECK(r.worst_domain == "h4");  // the last stage: nothing downstream survives
}

TEST_CASE("switch domains and recent failures raise the risk", "[risk]") {
    auto g = fat_tree(2, 4, 100, 100);
    RiskModel model(g);  // default rates
    auto d = pattern(CommPattern::kPipeline, 4, 4);
    // Cascading graph: the sink's leaf takes everything with it, the other leaf only
    // the stages before the boundary, so one leaf is no riskier than two here...
    auto packed = model.estimate(d, hosts_only(g, {"h1", "h2", "h3", "h4"}));
    auto split = model.estimate(d, hosts_only(g, {"h1", "h2", "h5", "h6"}));
    CHECK(split.per_day > packed.per_day);
    // ... and a host that failed recently makes a placement on it riskier.
    ClusterState s(g);
    s.failures[host(g, "h2")] = 2.0;
    CHECK(model.estimate(d, hosts_only(g, {"h1", "h2", "h3", "h4"}), &s).per_day > packed.per_day);
    // A switch that lost hosts recently counts for the other hosts below it as well.
    ClusterState t(g);
    t.failures[host(g, "h8")] = 2.0;
    CHECK(model.estimate(d, hosts_only(g, {"h5", "h6", "h7"}), &t).per_day >
          model.estimate(d, hosts_only(g, {"h5", "h6", "h7"})).per_day);
}

// ---- the failure history and the learned model (failure_class/history, learned_risk) ----

#include <cmath>

#include "slurm_ai/placement/failure_class.hpp"
#include "slurm_ai/placement/failure_history.hpp"
#include "slurm_ai/placement/learned_risk.hpp"

TEST_CASE("failure classes: Slurm's reasons and a trace's words land in their class",
          "[risk][failures]") {
    CHECK(classify_failure("GPU Xid 79: fallen off the bus") == FailureClass::kGpu);
    CHECK(classify_failure("dcgm health: double-bit ECC") == FailureClass::kGpu);
    CHECK(classify_failure("mlx5_0 IB port down") == FailureClass::kNetwork);
    CHECK(classify_failure("Cable link down on HCA 2") == FailureClass::kNetwork);
    CHECK(classify_failure("PSU 1 failed") == FailureClass::kPower);
    CHECK(classify_failure("Fan speed low") == FailureClass::kCooling);
    CHECK(classify_failure("Kernel panic - not syncing") == FailureClass::kSoftware);
    CHECK(classify_failure("Kill task failed") == FailureClass::kSoftware);
    CHECK(classify_failure("Not responding") == FailureClass::kOther);
    CHECK(classify_failure("") == FailureClass::kOther);
    // The GPU's words come first: a GPU's NVLink is the GPU's, not the fabric's.
    CHECK(classify_failure("NVLink link down") == FailureClass::kGpu);
    CHECK(takes_link(FailureClass::kNetwork));
    CHECK_FALSE(takes_link(FailureClass::kGpu));
    CHECK(to_string(FailureClass::kCooling) == "cooling");
}

TEST_CASE("failure history: counts halve with their half-lives, a flap counts once",
          "[risk][failures]") {
    HostFailures h;
    CHECK_FALSE(h.any());
    h.note(0, FailureClass::kGpu);
    CHECK(h.any());
    CHECK(h.day == 1);
    // A week later: the weekly count and the class counts at half, the daily at 2^-7.
    const HostFailures w = h.as_of(7 * kDaySeconds);
    CHECK(w.week == Approx(0.5));
    CHECK(w.day == Approx(std::exp2(-7.0)));
    CHECK(w.month == Approx(std::exp2(-7.0 / 30)));
    CHECK(w.by_class[static_cast<std::size_t>(FailureClass::kGpu)] == Approx(0.5));
    CHECK(h.as_of(-5) == h);  // earlier than its counts: unchanged
    // Thirty minutes on, the node is seen DOWN again for its NIC: the same failure, but
    // its class is remembered.
    h.note(1800, FailureClass::kNetwork);
    CHECK(h.day == 1);
    CHECK(h.last == 0);
    CHECK(h.by_class[static_cast<std::size_t>(FailureClass::kNetwork)] == 1);
    // Two hours after the first: a second failure.
    h.note(7200, FailureClass::kGpu);
    CHECK(h.day == Approx(std::exp2(-2.0 / 24) + 1));
    CHECK(h.week == Approx(std::exp2(-2.0 / (7 * 24)) + 1));
    CHECK(h.by_class[static_cast<std::size_t>(FailureClass::kGpu)] ==
          Approx(std::exp2(-2.0 / (7 * 24)) + 1));
    CHECK(h.last == 7200);
}

TEST_CASE("learned risk: hand-set weights give the hand-computed rate", "[risk][learned]") {
    LearnedRisk m;  // all weights 0: a rate of softplus(0) = ln 2 a day
    RiskInputs x{};
    CHECK(m.rate_per_day(x) == Approx(std::log(2.0)));
    CHECK(m.probability(x, 1) == Approx(0.5));
    CHECK(m.probability(x, 2) == Approx(0.75));
    CHECK(m.probability(x, 0) == 0);
    // The output bias alone: ln(e - 1) is a rate of 1 a day.
    constexpr int kB2 = LearnedRisk::kParameters - 1, kW2 = kB2 - kRiskHidden,
                  kB1 = kW2 - kRiskHidden;
    m.w[kB2] = std::log(std::exp(1.0) - 1);
    CHECK(m.rate_per_day(x) == Approx(1.0));
    // One hidden unit reading input 0, standardised by mean 1 and scale 2:
    // z = ln(e - 1) + 2 tanh(0.5 + (x0 - 1) / 2).
    m.w[0] = 1;  // w1[0][0]
    m.w[kB1] = 0.5;
    m.w[kW2] = 2;
    m.mean[0] = 1;
    m.scale[0] = 2;
    x[0] = 2;
    const double z = std::log(std::exp(1.0) - 1) + 2 * std::tanh(0.5 + 0.5);
    CHECK(m.rate_per_day(x) == Approx(std::log1p(std::exp(z))));
    CHECK(m.probability(x, 0.5) == Approx(1 - std::exp(-0.5 * std::log1p(std::exp(z)))));
}

TEST_CASE("learned risk: a placement's inputs, from its shape and its hosts' history",
          "[risk][learned]") {
    auto g = fat_tree(2, 4, 100, 100);  // h1-h4 under one leaf, h5-h8 under the other
    // A week ago: a GPU failure of h2, a NIC of h6, a power supply of h7.
    RiskHistory history(g, 7 * kDaySeconds);
    for (auto [name, kind] : {std::pair{"h2", FailureClass::kGpu},
                              {"h6", FailureClass::kNetwork}, {"h7", FailureClass::kPower}}) {
        HostFailures f;
        f.note(0, kind);
        history.add(host(g, name), f);
    }
    CHECK(history.leaf(g.host_leaf(host(g, "h6"))).first == Approx(1.0));
    CHECK(history.leaf(g.host_leaf(host(g, "h6"))).second == 2);
    const std::vector<int> on{host(g, "h1"), host(g, "h2"), host(g, "h5")};
    REQUIRE(risk_graph(pattern(CommPattern::kAllReduce, 3), 3) == RiskGraph::kCyclic);
    const auto x = placement_risk_inputs(g, RiskGraph::kCyclic, on, history);
    CHECK(x[0] == 1);
    CHECK(x[1] == 0);
    CHECK(x[2] == Approx(std::log(3.0)));
    CHECK(x[3] == Approx(std::log(2.0)));
    CHECK(x[4] == 0);  // no NVLink domain
    CHECK(x[5] == Approx(std::log(4.0)));
    CHECK(x[6] == 0);
    CHECK(x[7] == Approx(std::log1p(std::exp2(-7.0))));  // h2's day count, a week on
    CHECK(x[8] == Approx(std::log1p(0.5)));
    CHECK(x[10] == Approx(std::log1p(0.5)));  // GPU
    CHECK(x[11] == 0);                        // no network failure on h1, h2, h5
    CHECK(x[12] == 0);
    CHECK(x[13] == Approx(std::exp(-1.0)));  // a week since h2's
    // The other hosts of the two leaves: h3, h4 (nothing), h6, h7, h8 (two failures).
    CHECK(x[14] == Approx(std::log1p(1.0)));
    CHECK(x[15] == Approx(2.0 / 5));
    // A pipeline cascades; one host of a ring is independent.
    CHECK(risk_graph(pattern(CommPattern::kPipeline, 2, 2), 2) == RiskGraph::kCascade);
    CHECK(risk_graph(pattern(CommPattern::kAllReduce, 1), 1) == RiskGraph::kIndependent);
    const auto alone = placement_risk_inputs(g, RiskGraph::kIndependent, {host(g, "h3")}, history);
    CHECK(alone[0] == 0);
    CHECK(alone[2] == 0);
    CHECK(alone[8] == 0);
    CHECK(alone[14] == Approx(std::log1p(0.5)));  // h2's week, from h3's leaf
    CHECK(alone[15] == Approx(1.0 / 3));
}

TEST_CASE("learned risk: in use, it is the placement's score", "[risk][learned]") {
    auto g = fat_tree(2, 4, 100, 100);
    LearnedRisk m;
    m.w[0 * kRiskInputs + 2] = 1;  // w1[0][2]: the hosts spanned
    m.w[LearnedRisk::kParameters - 1 - kRiskHidden] = 3;  // w2[0]
    ClusterState s(g);
    s.learned = std::make_shared<LearnedRiskView>(LearnedRiskView{&m, RiskHistory(g, 0)});
    RiskModel model(g);
    auto d = pattern(CommPattern::kAllReduce, 4);
    auto four = hosts_only(g, {"h1", "h2", "h3", "h4"}), two = hosts_only(g, {"h1", "h2"});
    const auto r = model.estimate(d, four, &s);
    CHECK(r.per_day == Approx(m.rate_per_day(placement_risk_inputs(
                           g, RiskGraph::kCyclic, four.hosts, s.learned->history))));
    CHECK(r.per_day == Approx(std::log1p(std::exp(3 * std::tanh(std::log(4.0))))));
    CHECK(r.per_day > model.estimate(pattern(CommPattern::kAllReduce, 2), two, &s).per_day);
    CHECK(r.graph == "cyclic");
    // The domains are not walked: nothing in placement reads them past the score.
    CHECK(r.worst_domain.empty());
    CHECK(r.worst_impact == 0);
    CHECK_FALSE(model.estimate(d, four).worst_domain.empty());
}

TEST_CASE("learned risk: backprop is the likelihood's gradient", "[risk][learned]") {
    LearnedRisk m;
    for (int i = 0; i < LearnedRisk::kParameters; ++i)
        m.w[static_cast<std::size_t>(i)] = 0.3 * std::sin(1.7 * i + 0.4);
    RiskInputs x{};
    for (int i = 0; i < kRiskInputs; ++i)
        x[static_cast<std::size_t>(i)] = 0.2 * i - 0.5;
    m.mean[3] = 0.2;
    m.scale[5] = 1.5;
    std::array<double, LearnedRisk::kParameters> grad{};
    const double loss = m.backprop(x, 1.5, 2, 5, grad);  // 2 of 5 stopped within 1.5 days
    const double r = m.rate_per_day(x);
    CHECK(loss == Approx(-2 * std::log(1 - std::exp(-1.5 * r)) + 3 * 1.5 * r));
    for (int i : {0, 50, 191, 192, 203, 204, 215, 216}) {
        LearnedRisk a = m, b = m;
        const double eps = 1e-6;
        a.w[static_cast<std::size_t>(i)] += eps;
        b.w[static_cast<std::size_t>(i)] -= eps;
        std::array<double, LearnedRisk::kParameters> unused{};
        const double numeric =
            (a.backprop(x, 1.5, 2, 5, unused) - b.backprop(x, 1.5, 2, 5, unused)) / (2 * eps);
        INFO("parameter " << i);
        CHECK(grad[static_cast<std::size_t>(i)] == Approx(numeric).margin(1e-6));
    }
}

TEST_CASE("learned risk: the file reads back as written, a bad one names its field",
          "[risk][learned]") {
    LearnedRisk m;
    for (int i = 0; i < LearnedRisk::kParameters; ++i)
        m.w[static_cast<std::size_t>(i)] = 0.01 * i - 0.5;
    m.mean[2] = 0.25;
    m.scale[4] = 3;
    m.info.trace = "trace.json";
    m.info.jobs = "philly.csv";
    m.info.auc = 0.71;
    m.info.auc_hand_written = 0.70;
    m.info.log_loss = 0.025;
    m.info.log_loss_hand_written = 0.026;
    m.info.pairs_accuracy = 0.6;  // and none for the hand-written: no pair measured
    m.info.beats_hand_written = true;
    const std::string text = m.to_json();
    auto back = LearnedRisk::parse(text, "model.json");
    REQUIRE(back.ok());
    CHECK(back->w == m.w);
    CHECK(back->mean == m.mean);
    CHECK(back->scale == m.scale);
    CHECK(back->info.beats_hand_written);
    CHECK(back->info.auc == Approx(0.71));
    CHECK(back->info.jobs == "philly.csv");
    CHECK(back->info.pairs_accuracy == 0.6);
    CHECK_FALSE(back->info.pairs_accuracy_hand_written);

    auto broken = [&](const std::string &from, const std::string &to) {
        std::string t = text;
        const auto at = t.find(from);
        REQUIRE(at != std::string::npos);
        t.replace(at, from.size(), to);
        return LearnedRisk::parse(t, "model.json");
    };
    auto e = broken("\"hidden\": 12", "\"hidden\": 16");
    REQUIRE_FALSE(e.ok());
    CHECK(e.error().field == "hidden");
    CHECK(e.error().value == "16");
    CHECK(e.error().source == "model.json");
    e = broken("\"scale\": [\n    1.0", "\"scale\": [\n    0.0");
    REQUIRE_FALSE(e.ok());
    CHECK(e.error().field == "scale[0]");
    e = broken("\"format\": \"slurm-ai learned risk model\"", "\"format\": \"onnx\"");
    REQUIRE_FALSE(e.ok());
    CHECK(e.error().field == "format");
    CHECK(e.error().value == "onnx");
    // Header fields of another JSON type are refused, not thrown (a fuzzer's find).
    e = broken("\"format\": \"slurm-ai learned risk model\"", "\"format\": [1]");
    REQUIRE_FALSE(e.ok());
    CHECK(e.error().field == "format");
    CHECK(e.error().value == "[1]");
    e = broken("\"hidden\": 12", "\"hidden\": \"12\"");
    REQUIRE_FALSE(e.ok());
    CHECK(e.error().field == "hidden");
    // A per-host model of version 1 is refused with what to do.
    e = broken("\"version\": 2", "\"version\": 1");
    REQUIRE_FALSE(e.ok());
    CHECK(e.error().field == "version");
    CHECK_THAT(e.error().expected, Catch::Contains("train-risk"));
    CHECK_FALSE(LearnedRisk::parse("{", "model.json").ok());
    CHECK(LearnedRisk::load("/nonexistent/model.json").error().field == "RiskModel");
}
