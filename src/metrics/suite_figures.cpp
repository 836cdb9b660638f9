#include "slurm_ai/metrics/suite_figures.hpp"

#include "slurm_ai/checkpoint/checkpoint_recovery.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <set>

namespace slurm_ai::metrics {
namespace {

const std::vector<double> kDecisionBounds{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
                                          0.01,   0.025,   0.05,   0.1,   0.25,   1};
const std::vector<double> kEfficiencyBounds{0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 1};
const std::vector<double> kSpanBounds{1, 2, 4, 8, 16, 32, 64};
const std::vector<double> kRecoveryBounds{5, 10, 20, 30, 60, 120, 300, 600, 1800};
constexpr const char *kNone = "none";  // the label of a host outside every leaf or domain

// The hosts by name, made once for the figures that look up running jobs' hosts.
using HostIndex = std::map<std::string, const HostNow *>;

void decisions(Registry &r, const std::vector<JobRecord> &records) {
    auto &started = r.add("slurm_ai_jobs_started", Type::kCounter, "",
                          "Jobs the select plugin saw start, by what placed them: engine (the "
                          "suite's placement) or cons_tres (Slurm's own)");
    auto &fallbacks = r.add("slurm_ai_engine_fallbacks", Type::kCounter, "",
                            "Jobs the engine was asked to place and left to cons_tres, by why");
    auto &seconds = r.add("slurm_ai_decision_seconds", Type::kHistogram, "seconds",
                          "Time the engine took to place each job it placed");
    Histogram &time = r.histogram(seconds, {}, kDecisionBounds);
    double engine = 0, plain = 0, unclassified = 0;
    std::vector<double> by_class(std::size(kFallbackClassNames), 0);
    for (const auto &rec : records) {
        if (rec.decision) {
            ++engine;
            time.observe(rec.decision->decision_ms / 1000.0);
        } else {
            ++plain;
        }
        if (rec.fell_back && rec.fallback_class)
            ++by_class[static_cast<std::size_t>(*rec.fallback_class)];
        else if (rec.fell_back)
            ++unclassified;
    }
    r.set(started, {{"placed_by", "engine"}}, engine);
    r.set(started, {{"placed_by", "cons_tres"}}, plain);
    for (std::size_t i = 0; i < by_class.size(); ++i)
        r.set(fallbacks, {{"reason", std::string(kFallbackClassNames[i])}}, by_class[i]);
    r.set(fallbacks, {{"reason", "unclassified"}}, unclassified);
}

// Placement efficiency and spans of the running jobs.
void running(Registry &r, const SuiteInputs &in, const HostIndex &host_of) {
    std::map<std::uint32_t, const JobRecord *> record_of;
    for (const auto &rec : in.records)
        record_of[rec.job_id] = &rec;
    auto &eff = r.add("slurm_ai_placement_efficiency_ratio", Type::kHistogram, "ratio",
                      "Running multi-GPU jobs the engine placed, by the model's placement "
                      "efficiency: communication time on the ideal placement over that on "
                      "the job's (1: as good as any)");
    Histogram &efficiency = r.histogram(eff, {}, kEfficiencyBounds);
    auto &cluster = r.add("slurm_ai_cluster_placement_efficiency_ratio", Type::kGauge, "ratio",
                          "Placement efficiency of the running multi-GPU jobs the engine "
                          "placed, weighted by their GPUs (no sample while none runs)");
    auto &leaves = r.add("slurm_ai_job_leaf_switches", Type::kHistogram, "",
                         "Running jobs by the number of leaf switches their nodes sit under");
    auto &domains = r.add("slurm_ai_job_nvlink_domains", Type::kHistogram, "",
                          "Running jobs on NVLink-domain hosts by the number of domains they "
                          "span");
    Histogram &leaf_span = r.histogram(leaves, {}, kSpanBounds);
    Histogram &domain_span = r.histogram(domains, {}, kSpanBounds);
    double weighted = 0, gpus = 0;
    for (const auto &job : in.jobs) {
        if (!job.running || job.hosts.empty())
            continue;
        std::set<std::string> job_leaves, job_domains;
        for (const auto &name : job.hosts)
            if (auto it = host_of.find(name); it != host_of.end()) {
                if (!it->second->leaf.empty())
                    job_leaves.insert(it->second->leaf);
                if (!it->second->domain.empty())
                    job_domains.insert(it->second->domain);
            }
        if (!job_leaves.empty())
            leaf_span.observe(static_cast<double>(job_leaves.size()));
        if (!job_domains.empty())
            domain_span.observe(static_cast<double>(job_domains.size()));
        const double job_gpus = static_cast<double>(job.gpus_per_node) *
                                static_cast<double>(job.hosts.size());
        auto rec = record_of.find(job.job_id);
        if (job_gpus < 2 || rec == record_of.end() || !rec->second->decision)
            continue;
        const double e = rec->second->decision->efficiency;
        efficiency.observe(e);
        weighted += e * job_gpus;
        gpus += job_gpus;
    }
    if (gpus > 0)
        r.set(cluster, {}, weighted / gpus);
}

// Two gauges per place (a leaf switch, an NVLink domain): its free GPUs and, of those,
// the stranded ones. places: name -> (free, stranded).
void place_gauges(Registry &r, const std::string &prefix, const std::string &label,
                  const std::string &what,
                  const std::map<std::string, std::pair<double, double>> &places) {
    auto &free = r.add(prefix + "_free_gpus", Type::kGauge, "",
                       "Free GPUs on the usable hosts of each " + what);
    auto &stranded = r.add(prefix + "_stranded_gpus", Type::kGauge, "",
                           "Free GPUs of each " + what +
                               " on hosts with fewer free than any pending GPU job asks per node");
    for (const auto &[name, v] : places) {
        r.set(free, {{label, name}}, v.first);
        r.set(stranded, {{label, name}}, v.second);
    }
}

// Free GPUs per leaf and per domain, and those no pending job could use: on a host whose
// free GPUs are fewer than every pending GPU job asks per node.
void free_gpus(Registry &r, const SuiteInputs &in) {
    std::uint32_t smallest_need = 0;  // the fewest GPUs per node a pending job asks; 0: none
    for (const auto &job : in.jobs)
        if (!job.running && job.gpus_per_node > 0)
            smallest_need = smallest_need ? std::min(smallest_need, job.gpus_per_node)
                                          : job.gpus_per_node;
    std::map<std::string, std::pair<double, double>> leaf, domain;  // name -> (free, stranded)
    for (const auto &h : in.hosts) {
        const double free = h.usable ? h.free_gpus : 0;
        const double stranded = smallest_need && free > 0 && free < smallest_need ? free : 0;
        auto &l = leaf[h.leaf.empty() ? kNone : h.leaf];
        l.first += free;
        l.second += stranded;
        if (!h.domain.empty()) {
            auto &d = domain[h.domain];
            d.first += free;
            d.second += stranded;
        }
    }
    place_gauges(r, "slurm_ai_leaf", "leaf", "leaf switch", leaf);
    place_gauges(r, "slurm_ai_nvlink_domain", "domain", "NVLink domain", domain);
}

// Each leaf's uplinks: the running jobs whose collective traffic leaves the leaf (hosts
// under it and hosts elsewhere, not all in one NVLink domain), and the demand they can put
// on the uplinks, each of their hosts under the leaf sending at its cable's rate (as a
// ring all-reduce does), over the uplinks' capacity.
void uplinks(Registry &r, const SuiteInputs &in, const HostIndex &host_of) {
    auto &jobs = r.add("slurm_ai_leaf_uplink_jobs", Type::kGauge, "",
                       "Running jobs whose traffic crosses the uplinks of each leaf switch");
    auto &load = r.add("slurm_ai_leaf_uplink_demand_ratio", Type::kGauge, "ratio",
                       "Demand the running jobs can put on each leaf switch's uplinks (their "
                       "hosts under it at line rate) over the uplinks' capacity; above 1 the "
                       "uplinks are oversubscribed");
    std::map<std::string, std::pair<double, double>> per_leaf;  // leaf -> (jobs, GB/s)
    for (const auto &job : in.jobs) {
        if (!job.running || job.hosts.size() < 2)
            continue;
        std::set<std::string> domains;
        std::map<std::string, std::pair<std::size_t, double>> under;  // leaf -> (hosts, GB/s)
        for (const auto &name : job.hosts) {
            auto it = host_of.find(name);
            if (it == host_of.end())
                continue;
            domains.insert(it->second->domain);
            std::set<std::string> seen;  // a host with two cables to a leaf counts once
            for (const auto &[leaf, gbs] : it->second->ports) {
                auto &u = under[leaf];
                u.first += seen.insert(leaf).second ? 1 : 0;
                u.second += gbs;
            }
        }
        if (domains.size() == 1 && !domains.begin()->empty())
            continue;  // one NVLink domain: its traffic never reaches a switch
        for (const auto &[leaf, u] : under)
            if (u.first < job.hosts.size()) {
                per_leaf[leaf].first += 1;
                per_leaf[leaf].second += u.second;
            }
    }
    for (const auto &leaf : in.leaves) {
        const Labels labels{{"leaf", leaf.name}, {"rail", leaf.rail.empty() ? kNone : leaf.rail}};
        const auto it = per_leaf.find(leaf.name);
        const auto [n, gbs] = it == per_leaf.end() ? std::pair(0.0, 0.0) : it->second;
        r.set(jobs, labels, n);
        if (leaf.uplink_gbs > 0)  // a leaf that is its fabric's root has no uplinks
            r.set(load, labels, gbs / leaf.uplink_gbs);
    }
}

// What ai-recover did about node failures, how long jobs took to run again, resizes.
void recoveries(Registry &r, const SuiteInputs &in) {
    auto &failures = r.add("slurm_ai_node_failures", Type::kCounter, "",
                           "Node failures under checkpointing jobs, by what ai-recover did: "
                           "requeue, shrink, exclude, none or failed");
    auto &requests = r.add("slurm_ai_checkpoint_requests", Type::kCounter, "",
                           "Checkpoints ai-recover asked jobs for (time limit, on demand)");
    auto &again = r.add("slurm_ai_recovery_seconds", Type::kHistogram, "seconds",
                        "Time from a node going DOWN to its job running again");
    auto &resizes = r.add("slurm_ai_elastic_resizes", Type::kCounter, "",
                          "Node-list changes of resizable jobs, by direction: grow, shrink, "
                          "or replace (nodes swapped one for one)");
    Histogram &time = r.histogram(again, {}, kRecoveryBounds);
    // ai-recover's actions (checkpoint::Action), and "failed" when it could not act.
    std::map<std::string, double> by_action{{"failed", 0}};
    for (auto a : {checkpoint::Action::kNone, checkpoint::Action::kShrink,
                   checkpoint::Action::kRequeue, checkpoint::Action::kExclude})
        by_action.emplace(std::string(checkpoint::to_string(a)), 0);
    double asked = 0;
    for (const auto &rec : in.restarts) {
        if (rec.event == "node_failure") {
            auto it = by_action.find(rec.action);
            (it != by_action.end() ? it->second : by_action["failed"]) += 1;
        } else if (rec.event == "checkpoint_request") {
            ++asked;
        } else if (rec.event == "running_again" && rec.down_s > 0) {
            time.observe(rec.down_s);
        }
    }
    for (const auto &[action, n] : by_action)
        r.set(failures, {{"action", action}}, n);
    r.set(requests, {}, asked);
    r.set(resizes, {{"direction", "grow"}}, static_cast<double>(in.grows));
    r.set(resizes, {{"direction", "shrink"}}, static_cast<double>(in.shrinks));
    r.set(resizes, {{"direction", "replace"}}, static_cast<double>(in.replaces));
    auto &recent = r.add("slurm_ai_recent_failures", Type::kGauge, "",
                         "Node failures of about the last week by class, as the select plugin "
                         "counts them to steer placements away: weekly counts decayed with a "
                         "half-life of 7 days, summed over nodes");
    std::array<double, kFailureClasses> by_class{};
    for (const auto &[host, h] : in.failures) {
        const HostFailures now = h.as_of(in.now_s);
        for (int c = 0; c < kFailureClasses; ++c)
            by_class[static_cast<std::size_t>(c)] += now.by_class[static_cast<std::size_t>(c)];
    }
    for (int c = 0; c < kFailureClasses; ++c)
        r.set(recent, {{"class", std::string(to_string(static_cast<FailureClass>(c)))}},
              by_class[static_cast<std::size_t>(c)]);
}

// The leases (docs/checkpoint.md), from ai-recover's saved book; no sample without one.
void leases(Registry &r, const SuiteInputs &in) {
    auto &nodes = r.add("slurm_ai_lease_nodes", Type::kGauge, "",
                        "Nodes whose ai-lease agent renews a lease with --ai-checkpoint jobs "
                        "on the node, as ai-recover last saved its lease book");
    auto &revoked = r.add("slurm_ai_lease_revoked_jobs", Type::kGauge, "",
                          "Jobs ai-recover took over from a failed node whose tasks there are "
                          "not yet known to be gone (the agent kills them when it is back)");
    if (!in.leases)
        return;
    r.set(nodes, {}, static_cast<double>(in.leases->nodes));
    r.set(revoked, {}, static_cast<double>(in.leases->revoked_jobs));
}

}  // namespace

void add_suite_figures(Registry &registry, const SuiteInputs &in) {
    decisions(registry, in.records);
    HostIndex host_of;
    for (const auto &h : in.hosts)
        host_of[h.name] = &h;
    running(registry, in, host_of);
    free_gpus(registry, in);
    uplinks(registry, in, host_of);
    recoveries(registry, in);
    leases(registry, in);
}

}  // namespace slurm_ai::metrics
