// The lease messages and both sides' books: text that reads back, errors that name the
// field, replays refused, a lapse reported once and only for nodes running checkpointing
// jobs, fencing never before a first grant and before the lease can lapse.
#include <catch2/catch.hpp>

#include "slurm_ai/lease/lease.hpp"

using namespace slurm_ai::lease;

TEST_CASE("lease messages read back, and bad ones name the field", "[lease]") {
    const Renewal r{"c1", 1795732147000, 42, {7, 9}};
    CHECK(to_text(r) == "slurm-ai-lease/1 renew node=c1 boot=1795732147000 seq=42 jobs=7,9");
    CHECK(parse_renewal(to_text(r)).value() == r);
    const Renewal idle{"gpu-017", 1, 1, {}};
    CHECK(parse_renewal(to_text(idle)).value() == idle);
    const Grant g{"c1", 1795732147000, 42, {}};
    CHECK(parse_grant(to_text(g)).value() == g);

    CHECK(parse_renewal(to_text(g)).error().field == "message");  // a grant is no renewal
    CHECK(parse_renewal("slurm-ai-lease/1 renew node=c1 boot=1 seq=x jobs=").error().field ==
          "seq");
    CHECK(parse_renewal("slurm-ai-lease/1 renew node=c1 boot=1 seq=2 jobs=3,,4").error().field ==
          "jobs");
    CHECK(parse_renewal("slurm-ai-lease/1 renew node=c1 boot=1 seq=2").error().field == "jobs");
    CHECK(parse_renewal("slurm-ai-lease/1 renew node=c1 node=c2 boot=1 seq=2 jobs=")
              .error()
              .field == "node");
    CHECK(parse_grant("slurm-ai-lease/2 grant node=c1 boot=1 seq=2").error().field == "message");
    CHECK_THAT(parse_grant("").error().message(), Catch::Contains("slurm-ai-lease/1 grant"));
}

TEST_CASE("lease times: the node fences before its lease can lapse", "[lease]") {
    CHECK_FALSE(check(LeaseTimes{}));
    CHECK(check(LeaseTimes{1, 3, 3, 30})->field == "LeaseLapse");
    CHECK(check(LeaseTimes{2, 2, 3, 30})->field == "LeaseFence");
    CHECK(check(LeaseTimes{0, 2, 3, 30})->field == "LeasePeriod");
    CHECK(check(LeaseTimes{1, 2, 3, -1})->field == "LeaseKill");
}

TEST_CASE("ai-recover's book: renewals, replays, lapses", "[lease]") {
    LeaseBook book(LeaseTimes{});
    CHECK(book.renewed({"c1", 100, 1, {7}}, 10.0));
    CHECK(book.renewed({"c2", 100, 1, {}}, 10.0));
    CHECK_FALSE(book.renewed({"c1", 100, 1, {7}}, 10.5));  // the same renewal again
    CHECK_FALSE(book.renewed({"c1", 99, 5, {7}}, 10.5));   // an earlier run of the agent
    CHECK(book.last_renewal("c1") == 10.0);
    CHECK(book.newly_lapsed(12.9).empty());
    // c1 ran a checkpointing job: its lapse is reported once; c2 ran none.
    CHECK(book.newly_lapsed(13.1) == std::vector<std::string>{"c1"});
    CHECK(book.newly_lapsed(20.0).empty());
    CHECK(book.jobs_of("c1") == std::vector<std::uint32_t>{7});
    // A new run of the agent (a reboot) renews with sequence numbers from 1 again.
    CHECK(book.renewed({"c1", 200, 1, {8}}, 21.0));
    CHECK(book.newly_lapsed(24.5) == std::vector<std::string>{"c1"});
    CHECK_FALSE(book.last_renewal("c9"));
}

TEST_CASE("the agent's side: grants renew, fencing waits for a first grant", "[lease]") {
    LeaseHolder h(LeaseTimes{}, "c1", 100, 0.0);
    CHECK_FALSE(h.must_fence(60.0));  // no ai-recover has ever granted: nothing to fence
    const Renewal r1 = h.next({7});
    CHECK(r1.seq == 1);
    CHECK_FALSE(h.granted({"c1", 100, 2, {}}, 1.0));  // a renewal never sent
    CHECK_FALSE(h.granted({"c2", 100, 1, {}}, 1.0));  // another node's
    CHECK_FALSE(h.granted({"c1", 99, 1, {}}, 1.0));   // another run's
    CHECK(h.granted({"c1", 100, 1, {}}, 1.0));
    CHECK_FALSE(h.granted({"c1", 100, 1, {}}, 1.5));  // the same grant again renews nothing
    CHECK(h.granted_at() == 1.0);
    h.next({7});
    CHECK_FALSE(h.must_fence(2.9));
    CHECK(h.must_fence(3.1));  // 2 s after the last grant, before ai-recover's 3 s lapse
    CHECK_FALSE(h.must_kill(32.9));
    CHECK(h.must_kill(33.1));
    CHECK(h.granted({"c1", 100, 2, {}}, 3.2));  // a late grant thaws
    CHECK_FALSE(h.must_fence(3.3));
}
