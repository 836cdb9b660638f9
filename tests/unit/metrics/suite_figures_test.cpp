// The suite's figures from its records and Slurm's jobs and hosts: who placed the jobs and
// why the engine fell back, the decision time, the running jobs' placement efficiency and
// spans, and free and stranded GPUs per leaf and NVLink domain.
#include <string>

#include <catch2/catch.hpp>

#include "slurm_ai/metrics/suite_figures.hpp"

using namespace slurm_ai;
using namespace slurm_ai::metrics;

namespace {

JobRecord placed(std::uint32_t id, double efficiency, double decision_ms) {
    JobRecord r;
    r.job_id = id;
    r.decision = JobDecision{};
    r.decision->efficiency = efficiency;
    r.decision->decision_ms = decision_ms;
    return r;
}

const Family &family(const Registry &r, const std::string &name) {
    for (const auto &f : r.families())
        if (f.name == name)
            return f;
    FAIL("no family " << name);
    throw;
}

double value(const Registry &r, const std::string &name, const Labels &labels = {}) {
    for (const auto &[l, v] : family(r, name).samples)
        if (l == labels)
            return v;
    FAIL("no sample of " << name);
    return 0;
}

SuiteInputs cluster() {
    SuiteInputs in;
    in.records = {placed(1, 0.5, 2), placed(2, 1.0, 0.05), JobRecord{}, JobRecord{}};
    in.records[2].job_id = 3;
    in.records[2].fell_back = true;
    in.records[2].fallback_class = FallbackClass::kOutsideFabric;
    in.records[3].job_id = 4;  // a plain job: never asked the engine
    // Two leaves of two hosts, one NVLink domain over a1 and a2; 4 GPUs a host.
    in.hosts = {{"a1", "leaf-a", "nvl-1", 0, true, {}}, {"a2", "leaf-a", "nvl-1", 1, true, {}},
                {"b1", "leaf-b", "", 4, true, {}},      {"b2", "leaf-b", "", 4, false, {}}};
    // Job 1: 8 GPUs on a1 and b1 (two leaves); job 2: 3 GPUs on a2; job 5 waits for 2/node.
    in.jobs = {{1, true, {"a1", "b1"}, 4}, {2, true, {"a2"}, 3}, {5, false, {}, 2}};
    return in;
}

}  // namespace

TEST_CASE("suite figures: decisions by who placed, fallbacks by class, decision time",
          "[metrics]") {
    Registry r;
    add_suite_figures(r, cluster());
    CHECK(value(r, "slurm_ai_jobs_started", {{"placed_by", "engine"}}) == 2);
    CHECK(value(r, "slurm_ai_jobs_started", {{"placed_by", "cons_tres"}}) == 2);
    CHECK(value(r, "slurm_ai_engine_fallbacks", {{"reason", "outside_fabric"}}) == 1);
    CHECK(value(r, "slurm_ai_engine_fallbacks", {{"reason", "invalid_hint"}}) == 0);
    CHECK(value(r, "slurm_ai_engine_fallbacks", {{"reason", "unclassified"}}) == 0);
    const auto &time = family(r, "slurm_ai_decision_seconds").histograms.at(0).second;
    CHECK(time.count() == 2);
    CHECK(time.cumulative().front() == 1);  // 0.05 ms within the first bucket (0.1 ms)
}

TEST_CASE("suite figures: running jobs' efficiency, weighted by GPUs, and their spans",
          "[metrics]") {
    Registry r;
    add_suite_figures(r, cluster());
    const auto &eff = family(r, "slurm_ai_placement_efficiency_ratio").histograms.at(0).second;
    CHECK(eff.count() == 2);
    // Job 1: 8 GPUs at 0.5, job 2: 3 GPUs at 1.0.
    CHECK(value(r, "slurm_ai_cluster_placement_efficiency_ratio") ==
          Approx((0.5 * 8 + 1.0 * 3) / 11));
    const auto &leaves = family(r, "slurm_ai_job_leaf_switches").histograms.at(0).second;
    CHECK(leaves.count() == 2);
    CHECK(leaves.cumulative().front() == 1);  // job 2 under one leaf, job 1 under two
    const auto &domains = family(r, "slurm_ai_job_nvlink_domains").histograms.at(0).second;
    CHECK(domains.count() == 2);  // both touch nvl-1; b1 is in no domain
    CHECK(domains.sum() == 2);

    // Without running multi-GPU jobs of the engine's, the cluster figure has no sample.
    SuiteInputs idle = cluster();
    idle.jobs.clear();
    Registry empty;
    add_suite_figures(empty, idle);
    CHECK(family(empty, "slurm_ai_cluster_placement_efficiency_ratio").samples.empty());
}

TEST_CASE("suite figures: free GPUs per leaf and domain, stranded where no pending job fits",
          "[metrics]") {
    Registry r;
    add_suite_figures(r, cluster());
    // b2 is down: its GPUs are not free. a2's one free GPU is fewer than job 5's 2 a node.
    CHECK(value(r, "slurm_ai_leaf_free_gpus", {{"leaf", "leaf-a"}}) == 1);
    CHECK(value(r, "slurm_ai_leaf_free_gpus", {{"leaf", "leaf-b"}}) == 4);
    CHECK(value(r, "slurm_ai_leaf_stranded_gpus", {{"leaf", "leaf-a"}}) == 1);
    CHECK(value(r, "slurm_ai_leaf_stranded_gpus", {{"leaf", "leaf-b"}}) == 0);
    CHECK(value(r, "slurm_ai_nvlink_domain_free_gpus", {{"domain", "nvl-1"}}) == 1);
    CHECK(value(r, "slurm_ai_nvlink_domain_stranded_gpus", {{"domain", "nvl-1"}}) == 1);
    // Nothing pending: nothing is stranded.
    SuiteInputs calm = cluster();
    calm.jobs.pop_back();
    Registry q;
    add_suite_figures(q, calm);
    CHECK(value(q, "slurm_ai_leaf_stranded_gpus", {{"leaf", "leaf-a"}}) == 0);
    // Every family is valid exposition in both formats.
    CHECK_THAT(write_exposition(r.families(), Format::kOpenMetrics), Catch::EndsWith("# EOF\n"));
}

TEST_CASE("suite figures: node failures by action, time to running again, resizes",
          "[metrics]") {
    SuiteInputs in = cluster();
    auto event = [](std::string what, std::string action, double down_s) {
        checkpoint::RestartRecord r;
        r.event = std::move(what);
        r.action = std::move(action);
        r.down_s = down_s;
        return r;
    };
    in.restarts = {event("node_failure", "requeue", 0), event("node_failure", "requeue", 0),
                   event("node_failure", "shrink", 0),  event("node_failure", "odd", 0),
                   event("checkpoint_request", "", 0),  event("running_again", "", 42),
                   event("running_again", "", 0)};
    in.grows = 2;
    in.shrinks = 1;
    Registry r;
    add_suite_figures(r, in);
    CHECK(value(r, "slurm_ai_node_failures", {{"action", "requeue"}}) == 2);
    CHECK(value(r, "slurm_ai_node_failures", {{"action", "shrink"}}) == 1);
    CHECK(value(r, "slurm_ai_node_failures", {{"action", "failed"}}) == 1);  // unknown action
    CHECK(value(r, "slurm_ai_node_failures", {{"action", "exclude"}}) == 0);
    CHECK(value(r, "slurm_ai_checkpoint_requests") == 1);
    CHECK(value(r, "slurm_ai_elastic_resizes", {{"direction", "grow"}}) == 2);
    CHECK(value(r, "slurm_ai_elastic_resizes", {{"direction", "shrink"}}) == 1);
    CHECK(value(r, "slurm_ai_elastic_resizes", {{"direction", "replace"}}) == 0);
    const auto &again = family(r, "slurm_ai_recovery_seconds").histograms.at(0).second;
    CHECK(again.count() == 1);  // a run again without a DOWN time is not a recovery
    CHECK(again.sum() == 42);
    // No lease book (LeaseWatch=no, or an older ai-recover): the lease families, no sample.
    CHECK(family(r, "slurm_ai_lease_nodes").samples.empty());
    in.leases = SuiteInputs::Leases{3, 2};
    Registry with;
    add_suite_figures(with, in);
    CHECK(value(with, "slurm_ai_lease_nodes") == 3);
    CHECK(value(with, "slurm_ai_lease_revoked_jobs") == 2);
}

TEST_CASE("suite figures: uplink load of each leaf from the jobs that leave it", "[metrics]") {
    SuiteInputs in = cluster();
    // a1, a2 under leaf-a and b1, b2 under leaf-b, 50 GB/s cables; a2 has a second cable,
    // to leaf-b. Uplinks: 100 GB/s each.
    for (auto &h : in.hosts)
        h.ports = {{h.leaf, 50.0}};
    in.hosts[1].ports.push_back({"leaf-b", 50.0});
    in.leaves = {{"leaf-a", "0", 100}, {"leaf-b", "", 100}, {"root", "", 0}};
    // Job 1 (a1, b1) crosses both leaves; job 6 on a1 and a2 stays in one NVLink domain;
    // job 7 on a2 and b1 reaches leaf-b from both hosts (a2's second cable) but leaf-a
    // from one of two.
    in.jobs.push_back({6, true, {"a1", "a2"}, 1});
    in.jobs.push_back({7, true, {"a2", "b1"}, 1});
    Registry r;
    add_suite_figures(r, in);
    CHECK(value(r, "slurm_ai_leaf_uplink_jobs", {{"leaf", "leaf-a"}, {"rail", "0"}}) == 2);
    CHECK(value(r, "slurm_ai_leaf_uplink_jobs", {{"leaf", "leaf-b"}, {"rail", "none"}}) == 1);
    // leaf-a: a1 of job 1 and a2 of job 7, 50 GB/s each, over 100.
    CHECK(value(r, "slurm_ai_leaf_uplink_demand_ratio", {{"leaf", "leaf-a"}, {"rail", "0"}}) ==
          Approx(1.0));
    CHECK(value(r, "slurm_ai_leaf_uplink_demand_ratio", {{"leaf", "leaf-b"}, {"rail", "none"}}) ==
          Approx(0.5));
    CHECK(value(r, "slurm_ai_leaf_uplink_jobs", {{"leaf", "root"}, {"rail", "none"}}) == 0);
    for (const auto &[labels, v] : family(r, "slurm_ai_leaf_uplink_demand_ratio").samples)
        CHECK(labels.at(0).second != "root");  // no uplinks: no ratio
}

TEST_CASE("suite figures: recent failures by class from the plugin's history", "[metrics]") {
    SuiteInputs in = cluster();
    in.failures["a1"].note(0, FailureClass::kGpu);
    in.failures["a2"].note(0, FailureClass::kGpu);
    in.failures["b1"].note(0, FailureClass::kNetwork);
    in.now_s = 7 * kDaySeconds;  // one half-life later
    Registry r;
    add_suite_figures(r, in);
    CHECK(value(r, "slurm_ai_recent_failures", {{"class", "gpu"}}) == Approx(1.0));
    CHECK(value(r, "slurm_ai_recent_failures", {{"class", "network"}}) == Approx(0.5));
    CHECK(value(r, "slurm_ai_recent_failures", {{"class", "power"}}) == 0);
}
