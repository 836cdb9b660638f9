// Why a pending job waits, on topograph's GB200 NVL72 racks (4 NVLink domains of 18
// trays, 4 GPUs each): the constraint in the fabric's terms, when the running jobs' ends
// free enough, and the requests that would start now.
#include <string>

#include <catch2/catch.hpp>

#include "placement/placement_fixtures.hpp"
#include "search_budget.hpp"
#include "slurm_ai/elastic/elastic_plan.hpp"
#include "slurm_ai/placement/wait_explanation.hpp"

using namespace slurm_ai;

namespace {

struct Racks {
    ClusterGraph g = test::nvl72_racks();
    PlacementEngine engine{g, {}, {}, test::unhurried()};
    ClusterState state{g};
    std::vector<std::string> domain;  // per domain index: its name
    std::vector<std::vector<int>> hosts;  // per domain: its hosts
    Racks() {
        for (int d = 0; d < 4; ++d) {
            const int h = g.domain_hosts(d).front();
            domain.push_back(g.fabric().nvlink_domains[static_cast<std::size_t>(
                                                           g.nvlink_domain(h))]
                                 .name);
            hosts.push_back(g.domain_hosts(g.nvlink_domain(h)));
        }
    }
    // 6, 5, 4 and 3 trays free in domains 0 to 3: 18 in all, no domain with 7.
    void crowd() {
        for (int d = 0; d < 4; ++d)
            keep_free(d, static_cast<std::size_t>(6 - d));
    }
    // Leaves `free` trays of domain d free, the others busy.
    void keep_free(int d, std::size_t free) {
        for (std::size_t i = free; i < hosts[static_cast<std::size_t>(d)].size(); ++i)
            state.free_gpus[static_cast<std::size_t>(hosts[static_cast<std::size_t>(d)][i])] = 0;
    }
};

JobDemand demand(std::uint32_t nodes, bool hard) {
    JobHints hints;
    hints.locality = LocalitySpec{hard, 0};
    return make_demand(JobRequest{nodes, nodes, 4, 4 * nodes, nodes}, hints);
}

}  // namespace

TEST_CASE("wait explanation: one NVLink domain too few, when it frees, what starts now",
          "[placement][wait]") {
    Racks r;
    r.crowd();
    // Job 100 holds 3 busy trays of domain 0 and ends last; job 101 frees 2 trays of
    // domain 3 first, which is not enough.
    const auto &d0 = r.hosts[0];
    const auto &d3 = r.hosts[3];
    std::vector<RunningJobEnd> running{{100, {d0[6], d0[7], d0[8]}, 2000000000},
                                       {101, {d3[3], d3[4]}, 1900000000},
                                       {102, {d0[9]}, 0}};
    WaitRequest req{demand(9, true), 4, 9, demand_at_size};
    const WaitExplanation w = explain_wait(r.engine, req, r.state, running);
    CHECK(w.holds == "needs 9 nodes with 4 free GPUs each (36 GPUs) in one NVLink domain "
                     "(--ai-locality=hard); the largest free is 6 nodes with 4 free GPUs each "
                     "(24 GPUs), in " + r.domain[0]);
    CHECK_FALSE(w.fits_now);
    CHECK(w.frees_with_job == 100);
    CHECK(w.frees_at == 2000000000);
    CHECK(w.frees == "at 2033-05-18 03:33 UTC, when job 100 ends");
    REQUIRE(w.starts_now.size() == 3);
    CHECK(w.starts_now[0] == "6 nodes, within its --ai-elastic=4:9");
    CHECK_THAT(w.starts_now[1], Catch::StartsWith("--ai-locality=soft: over "));
    // 9 = 3 groups of 3: domains 0 (2 groups), 1, 2 and 3 (1 each) have room for 5.
    CHECK(w.starts_now[2] ==
          "--segment=3: 3 groups of 3 nodes, each in one NVLink domain (topology/block)");
}

TEST_CASE("wait explanation: too few nodes anywhere, and a job that fits now",
          "[placement][wait]") {
    Racks r;
    r.crowd();
    WaitRequest big{demand(20, false), 0, 0, nullptr};
    const WaitExplanation w = explain_wait(r.engine, big, r.state, {});
    CHECK(w.holds == "needs 20 nodes with 4 free GPUs each (80 GPUs); 18 nodes have that now "
                     "(the most in one NVLink domain: 6, in " + r.domain[0] + ")");
    CHECK(w.frees.empty());  // no running job with an end time
    CHECK(w.starts_now.empty());
    // A drained tray does not count, whatever its GPUs.
    r.state.usable[static_cast<std::size_t>(r.hosts[0][0])] = 0;
    CHECK_THAT(explain_wait(r.engine, big, r.state, {}).holds,
               Catch::Contains("17 nodes have that now"));

    WaitRequest small{demand(2, false), 0, 0, nullptr};
    const WaitExplanation fits = explain_wait(r.engine, small, r.state, {});
    CHECK(fits.fits_now);
    CHECK_THAT(fits.holds, Catch::StartsWith("it fits now (2 nodes"));
}
