#include "slurm_ai/placement/failure_risk.hpp"

#include <catch2/catch.hpp>

#include "placement_fixtures.hpp"

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
