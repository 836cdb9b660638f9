// ai-sim's simulator (bench/ai-sim): the trace readers on the real traces of
// ../shared/data/comm-measurements, the measured step times, the fabric in the shape of the
// X5 dump, and the scheduling itself on small clusters of the real g4dn and DGX-2 node
// files: backfill, fragmentation, failures, determinism, and the engine against Slurm's
// best fit.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include "metrics.hpp"
#include "scenario.hpp"
#include "sim_cluster.hpp"
#include "simulator.hpp"
#include "slurm_ai/topology/fabric.hpp"
#include "slurm_ai/topology/topology_file.hpp"
#include "step_times.hpp"
#include "svg_chart.hpp"
#include "testbed/measurements.hpp"
#include "testbed/synthetic_fabric.hpp"
#include "trace.hpp"
#include "fault_trace.hpp"
#include "train_risk.hpp"
#include "slurm_ai/placement/failure_class.hpp"
#include "scratch_dir.hpp"

using namespace slurm_ai;
using namespace slurm_ai::sim;

namespace {

const std::string kData = SLURM_AI_DATA_DIR;
const std::string kMeasured = kData + "/comm-measurements";
const std::string kG4dn = std::string(SLURM_AI_TEST_INPUTS) + "/g4dn-12xlarge-topo.xml";

// A file in a scratch directory of its own, removed at the end of the test.
struct TempFile {
    TempFile(const std::string &name, const std::string &text) : path(dir / name) {
        std::ofstream(path) << text;
    }
    test::ScratchDir dir{"sim"};
    std::string path;
};

// `hosts` g4dn.12xlarge nodes (4 T4 GPUs each) under one switch, as the testbed.
SimCluster g4dn_cluster(int hosts) {
    ClusterSpec spec;
    spec.nodes = {kG4dn};
    spec.hosts = hosts;
    spec.host_gbps = 50;
    auto c = build_cluster(spec);
    INFO((c ? std::string() : c.error().message()));
    REQUIRE(c.ok());
    return std::move(c).value();
}

// A job that asks exactly this (make_demand as the plugin does), with its time limit.
SimJob job(double submit, int gpus, double duration, double limit, std::uint32_t nodes = 1) {
    SimJob j;
    j.name = "j" + std::to_string(static_cast<int>(submit));
    j.submit_s = submit;
    j.gpus = gpus;
    j.work_s = duration;
    j.limit_s = limit;
    auto g = static_cast<std::uint32_t>(gpus);
    j.demand = make_demand(JobRequest{nodes, nodes, nodes > 1 ? g / nodes : 0, g, g}, {});
    j.regime = gpus > 1 ? Regime::kCyclic : Regime::kNone;
    return j;
}

SimOptions options() {
    SimOptions o;
    o.engine = deterministic_engine_options();
    return o;
}

const StepTimes &cost_only() {
    static const StepTimes steps(0.3);
    return steps;
}

}  // namespace

TEST_CASE("the X5 dump's building block, measured and repeated", "[sim]") {
    auto map = load_guid_map(kData + "/fabric/X5.map");
    REQUIRE(map.ok());
    auto x5 = load_ibnetdiscover(kData + "/fabric/X5.topofile", &map.value());
    REQUIRE(x5.ok());
    auto shape = testbed::measure_shape(x5.value());
    REQUIRE(shape.ok());
    // ai-topo show: the fullest leaves hold 24 hosts at 768 Gb/s down and 384 up.
    CHECK(shape->hosts_per_leaf == 24);
    CHECK(shape->leaf_oversubscription == Approx(2.0));
    CHECK(shape->spines_per_leaf == 4);
    CHECK(shape->leaves_per_spine == 6);
    CHECK(shape->spine_oversubscription == Approx(416.0 / 96.0));
    CHECK(shape->cores == 1);

    // 300 hosts: 13 leaves, three spine groups of up to 6 leaves, so a core joins them.
    auto fabric = parse_topology_conf(testbed::shaped_topology_conf(shape.value(), 300, 100), "t");
    REQUIRE(fabric.ok());
    int leaves = 0, spines = 0, cores = 0;
    for (int sw : fabric->switches()) {
        const auto &name = fabric->nodes[sw].name;
        leaves += name.rfind("leaf", 0) == 0;
        spines += name.rfind("spine", 0) == 0;
        cores += name.rfind("core", 0) == 0;
    }
    CHECK(fabric->hosts().size() == 300);
    CHECK(leaves == 13);
    CHECK(spines == 12);
    CHECK(cores == 1);
    // The leaves keep the dump's 2:1: 24 hosts x 100 Gb/s down, 4 links of 300 up.
    int leaf1 = fabric->find("leaf1");
    REQUIRE(leaf1 >= 0);
    auto stats = fabric->switch_stats(leaf1);
    CHECK(stats.down_gbps == Approx(2400));
    CHECK(stats.up_gbps == Approx(1200));
}

TEST_CASE("the Philly trace is read with its dates, sorted by submission", "[sim]") {
    auto t = load_trace(kMeasured + "/philly.csv");
    INFO((t ? std::string() : t.error().message()));
    REQUIRE(t.ok());
    CHECK(t->format == "philly");
    CHECK(t->jobs.size() == 82247);
    CHECK(format_date(t->epoch_unix) == "2017-09-04 10:30:41");
    CHECK(t->jobs.front().submit_s == 0);
    CHECK(std::is_sorted(t->jobs.begin(), t->jobs.end(), [](const TraceJob &a, const TraceJob &b) {
        return a.submit_s < b.submit_s;
    }));
    int max_gpus = 0;
    for (const auto &j : t->jobs) {
        REQUIRE(j.has_duration);
        max_gpus = std::max(max_gpus, j.gpus);
    }
    CHECK(max_gpus == 128);

    // One day from 2017-10-10, then that day with the three after it laid over it.
    double start = 0;
    REQUIRE(parse_date("2017-10-10 00:00:00", start));
    start -= t->epoch_unix;
    auto one = slice(t.value(), {start, 86400, 1, 0});
    auto four = slice(t.value(), {start, 86400, 4, 0});
    CHECK(one.jobs.size() == 2442);  // the jobs the trace dates 2017-10-10
    CHECK(four.jobs.size() > 3 * one.jobs.size());
    for (const auto &j : four.jobs) {
        REQUIRE(j.submit_s >= 0);
        REQUIRE(j.submit_s < 86400);
    }
}

TEST_CASE("a Pollux workload gets durations from Philly jobs of its GPU counts", "[sim]") {
    auto w = load_trace(kMeasured + "/workloads/workload-1.csv");
    REQUIRE(w.ok());
    CHECK(w->format == "pollux workload");
    REQUIRE(w->jobs.size() == 160);
    CHECK(w->jobs.front().name == "cifar10-0");
    CHECK(w->jobs.front().model == "cifar10");
    CHECK(w->jobs.front().gpus == 6);
    CHECK(w->jobs.front().batch_size == 2048);
    CHECK_FALSE(w->jobs.front().has_duration);

    auto philly = load_trace(kMeasured + "/philly.csv");
    REQUIRE(philly.ok());
    std::map<int, std::set<double>> by_gpus;
    for (const auto &j : philly->jobs)
        by_gpus[j.gpus].insert(j.duration_s);
    Trace a = w.value(), b = w.value();
    REQUIRE(draw_durations(a, philly.value(), 7).value() == 160);
    REQUIRE(draw_durations(b, philly.value(), 7).value() == 160);
    for (std::size_t i = 0; i < a.jobs.size(); ++i) {
        const auto &j = a.jobs[i];
        CHECK(j.duration_s == b.jobs[i].duration_s);  // same seed, same draw
        // 6 GPUs: Philly has none, the nearest counts are 4 and 8 (4 on the tie).
        int from = j.gpus == 6 ? 4 : j.gpus;
        INFO(j.name << " " << j.gpus);
        CHECK(by_gpus[from].count(j.duration_s) == 1);
    }
}

TEST_CASE("trace errors name the file, line, field and value", "[sim]") {
    TempFile no_gpus_file("nogpus.csv", "submit,duration\n1,2\n");
    auto no_gpus = load_trace(no_gpus_file.path);
    REQUIRE_FALSE(no_gpus.ok());
    CHECK(no_gpus.error().field == "header");
    CHECK(no_gpus.error().expected.find("gpus") != std::string::npos);

    TempFile bad_file("bad.csv", "submit,gpus,duration\n1,2,3\n5,x,3\n");
    auto bad = load_trace(bad_file.path);
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().field == "gpus");
    CHECK(bad.error().value == "x");
    CHECK(bad.error().line == 3);

    TempFile mixed_file("mixed.csv",
                        "timestamp,num_gpus,duration\n2017-10-01 00:00:00,1,5\n12,1,5\n");
    auto mixed = load_trace(mixed_file.path);
    REQUIRE_FALSE(mixed.ok());
    CHECK(mixed.error().message().find("YYYY-MM-DD") != std::string::npos);

    TempFile generic_file("ok.csv", "job,submit_s,gpus,run_time\na,30,2,60\nb,10,1,5\n");
    auto generic = load_trace(generic_file.path);
    REQUIRE(generic.ok());
    CHECK(generic->format == "csv");
    REQUIRE(generic->jobs.size() == 2);
    CHECK(generic->jobs[0].name == "b");  // sorted by submission, from 0
    CHECK(generic->jobs[0].submit_s == 0);
    CHECK(generic->jobs[1].submit_s == 20);
}

TEST_CASE("measured step times: a measured placement gives the file's figures", "[sim]") {
    auto m = testbed::load_measurements(kMeasured);
    REQUIRE(m.ok());
    // The row of bert/placements.csv for placement 44 at local_bsz 8.
    const testbed::Measurement *row = nullptr;
    for (const auto &r : m->rows)
        if (r.model == "bert" && r.source == "placements.csv" &&
            r.gpus_per_node == std::vector<int>{4, 4} && r.local_bsz == 8)
            row = &r;
    REQUIRE(row != nullptr);
    StepTimes steps(m.value(), 4, 16, 0);
    auto e = steps.from_measurements("bert", 8, {4, 4});
    CHECK(e.source == StepSource::kMeasured);
    CHECK(e.step_s == Approx(row->step_s));
    CHECK(e.comm_s == Approx(row->sync_s));
    CHECK(e.ideal_step_s <= e.step_s);
    // Placements are looked up rotated, as Pollux does: 424 is 244.
    CHECK(placement_key({4, 2, 4}) == "244");
    CHECK(steps.from_measurements("bert", 8, {4, 2, 4}).step_s ==
          Approx(steps.from_measurements("bert", 8, {2, 4, 4}).step_s));
    // Five nodes of 4, 4, 4, 3, 1 were never measured.
    CHECK(steps.from_measurements("bert", 8, {4, 4, 4, 3, 1}).source == StepSource::kNearestShape);
    CHECK(steps.measured("bert"));
    CHECK_FALSE(steps.measured("resnet"));
}

TEST_CASE("measured step times: the ideal is the best placement the request allows", "[sim]") {
    auto m = testbed::load_measurements(kMeasured);
    REQUIRE(m.ok());
    StepTimes steps(m.value(), 4, 16, 0);
    // On the testbed, 8 GPUs of bert run faster spread over more nodes than as 4 + 4: a
    // job asking --gpus=8 could have had that placement.
    const auto flexible = steps.from_measurements("bert", 8, {4, 4});
    REQUIRE(flexible.source == StepSource::kMeasured);
    CHECK(flexible.ideal_step_s < flexible.step_s);
    // One asking -N 2 --gpus-per-node=4 could not: its ideal is this placement.
    const auto fixed = steps.from_measurements("bert", 8, {4, 4}, {2, 2, 4});
    CHECK(fixed.ideal_step_s == Approx(fixed.step_s));
    CHECK(fixed.step_s == Approx(flexible.step_s));
    // Two to four nodes of any split: no better than the best of those, no worse than here.
    const auto ranged = steps.from_measurements("bert", 8, {4, 4}, {2, 4, 0});
    CHECK(ranged.ideal_step_s >= flexible.ideal_step_s);
    CHECK(ranged.ideal_step_s <= ranged.step_s);
}

TEST_CASE("cost-model step times keep the stated communication share", "[sim]") {
    StepTimes steps(0.25);
    Placement p;
    p.lower_bound_s = 1.0;
    p.comm_s = 3.0;
    auto e = steps.from_cost_model(p);
    // Computation 3 s makes 1 s of communication 25% of the ideal 4 s step.
    CHECK(e.ideal_step_s == Approx(4.0));
    CHECK(e.step_s == Approx(6.0));
    CHECK(e.slowdown() == Approx(1.5));
    CHECK(e.efficiency() == Approx(1.0 / 3));
    Placement none;  // a single GPU: no communication, no slowdown
    CHECK(steps.from_cost_model(none).slowdown() == 1.0);
}

TEST_CASE("backfill starts a small job early without delaying the head job's reservation",
          "[sim]") {
    auto c = g4dn_cluster(2);  // 2 hosts x 4 GPUs
    std::vector<SimJob> jobs{
        job(0, 4, 100, 100),    // runs on one host until 100, its time limit
        job(1, 8, 50, 100, 2),  // the head: both hosts, so not before 100
        job(2, 1, 30, 60),      // fits beside the first job and ends by its limit at 90
        job(3, 1, 30, 120),     // would still run at 100
    };
    auto r = simulate(c, jobs, cost_only(), options(), "tree-bestfit");
    CHECK(r.jobs[0].start_s == 0);
    CHECK(r.jobs[1].start_s == 100);  // when the first job ends: not delayed
    CHECK(r.jobs[2].start_s == 30);   // the first backfill pass
    CHECK(r.jobs[2].end_s == 60);
    CHECK(r.jobs[3].start_s >= r.jobs[1].end_s);  // it would have delayed the head
    CHECK(r.backfill_starts == 1);

    // Without backfill (a pass only every 10 days) the small job waits for the head.
    SimOptions none = options();
    none.backfill.interval_s = 864000;
    auto fifo = simulate(c, jobs, cost_only(), none, "tree-bestfit");
    CHECK(fifo.jobs[1].start_s == 100);
    CHECK(fifo.jobs[2].start_s >= 100);
}

TEST_CASE("fragmentation counts free GPUs that no pending job can use", "[sim]") {
    auto c = g4dn_cluster(2);
    std::vector<SimJob> jobs{
        job(0, 3, 1000, 2000),  // 3 of the 4 GPUs of one host
        job(0, 3, 1000, 2000),  // and of the other: one GPU free on each
        job(1, 2, 100, 200),    // two GPUs on one node: fits on neither
    };
    SimOptions o = options();
    o.sample_s = 300;
    auto r = simulate(c, jobs, cost_only(), o, "tree-bestfit");
    const Sample *at300 = nullptr;
    for (const auto &s : r.samples)
        if (s.t == 300)
            at300 = &s;
    REQUIRE(at300 != nullptr);
    CHECK(at300->pending_jobs == 1);
    CHECK(at300->busy_gpus == 6);
    CHECK(at300->free_gpus == 2);
    CHECK(at300->fragmented_gpus == 2);
    CHECK(r.jobs[2].start_s == 1000);
    // With a one-GPU job waiting too (behind the two-GPU one, in Slurm's order, with no
    // backfill to start it), both free GPUs are usable by it: nothing is fragmented.
    jobs.push_back(job(2, 1, 50, 4000));
    o.backfill.interval_s = 864000;
    auto r2 = simulate(c, jobs, cost_only(), o, "tree-bestfit");
    for (const auto &s : r2.samples)
        if (s.t == 300) {
            CHECK(s.pending_jobs == 2);
            CHECK(s.fragmented_gpus == 0);
        }
}

TEST_CASE("a node failure stops exactly the jobs on that node", "[sim]") {
    auto c = g4dn_cluster(3);
    std::vector<SimJob> jobs{job(0, 4, 100, 200), job(0, 2, 100, 200), job(0, 2, 100, 200),
                             job(0, 4, 100, 200)};
    auto free_run = simulate(c, jobs, cost_only(), options(), "slurm-default");
    // Slurm's node order: the 4-GPU job takes n1, the two 2-GPU jobs share n2, the last n3.
    REQUIRE(free_run.jobs[0].first_nodes == "n1");
    REQUIRE(free_run.jobs[1].first_nodes == "n2");
    REQUIRE(free_run.jobs[2].first_nodes == "n2");
    REQUIRE(free_run.jobs[3].first_nodes == "n3");

    SimOptions o = options();
    o.failures.scripted = {{50, "n2"}};
    o.failures.repair_s = 30;
    auto r = simulate(c, jobs, cost_only(), o, "slurm-default");
    REQUIRE(r.failures.size() == 1);
    CHECK(r.failures[0].host == "n2");
    CHECK(r.failures[0].jobs_stopped == 2);
    // 2 jobs x 2 GPUs x 50 s since their start, no checkpoint yet (hourly).
    CHECK(r.failures[0].lost_gpu_s[static_cast<int>(Regime::kCyclic)] == Approx(200));
    CHECK(r.jobs[0].restarts == 0);
    CHECK(r.jobs[1].restarts == 1);
    CHECK(r.jobs[2].restarts == 1);
    CHECK(r.jobs[3].restarts == 0);
    CHECK(r.jobs[0].end_s == free_run.jobs[0].end_s);
    CHECK(r.jobs[3].end_s == free_run.jobs[3].end_s);
    // The stopped jobs are requeued as Slurm requeues them: eligible again 140 s after the
    // failure (n2 is back at 80; n1 and n3 are full), they start from scratch at 190.
    CHECK(r.jobs[1].end_s == Approx(290));
    CHECK(r.jobs[2].end_s == Approx(290));
}

TEST_CASE("the same seed gives the same simulation", "[sim]") {
    ScenarioSpec spec;
    spec.start = "2017-10-10";
    spec.max_jobs = 250;
    spec.overlay = 2;
    spec.cluster.hosts = 12;
    auto s = prepare(with_defaults(spec));
    INFO((s ? std::string() : s.error().message()));
    REQUIRE(s.ok());
    SimOptions o = options();
    o.failures.node_rate_per_day = 0.5;
    o.failures.flaky_share = 0.25;
    o.failures.flaky_factor = 4;
    auto a = simulate(s->cluster, s->jobs.jobs, s->steps, o, "engine");
    auto b = simulate(s->cluster, s->jobs.jobs, s->steps, o, "engine");
    REQUIRE(a.jobs.size() == b.jobs.size());
    REQUIRE_FALSE(a.failures.empty());
    for (std::size_t i = 0; i < a.jobs.size(); ++i) {
        INFO("job " << i);
        CHECK(a.jobs[i].start_s == b.jobs[i].start_s);
        CHECK(a.jobs[i].end_s == b.jobs[i].end_s);
        CHECK(a.jobs[i].restarts == b.jobs[i].restarts);
        CHECK(a.jobs[i].first_nodes == b.jobs[i].first_nodes);
    }
    REQUIRE(a.failures.size() == b.failures.size());
    for (std::size_t i = 0; i < a.failures.size(); ++i) {
        CHECK(a.failures[i].t == b.failures[i].t);
        CHECK(a.failures[i].host == b.failures[i].host);
    }
    // Another seed, other failures; every policy meets the same ones (until the runs end).
    o.seed = 2;
    auto c2 = simulate(s->cluster, s->jobs.jobs, s->steps, o, "engine");
    auto d2 = simulate(s->cluster, s->jobs.jobs, s->steps, o, "slurm-default");
    REQUIRE_FALSE(c2.failures.empty());
    CHECK((c2.failures.front().t != a.failures.front().t ||
           c2.failures.front().host != a.failures.front().host));
    const std::size_t n = std::min(c2.failures.size(), d2.failures.size());
    for (std::size_t i = 0; i < n; ++i)
        CHECK(c2.failures[i].t == d2.failures[i].t);
}

TEST_CASE("on a Philly slice the engine's placements are at least as efficient as best fit's",
          "[sim]") {
    ScenarioSpec spec;
    spec.start = "2017-10-10";
    spec.cluster.hosts = 16;  // DGX-2 nodes under the X5 shape: a day of Philly fills them
    auto s = prepare(with_defaults(spec));
    REQUIRE(s.ok());
    auto engine = summarize(simulate(s->cluster, s->jobs.jobs, s->steps, options(), "engine"), 16);
    auto tree =
        summarize(simulate(s->cluster, s->jobs.jobs, s->steps, options(), "tree-bestfit"), 16);
    REQUIRE(engine.multi_gpu_jobs > 10);
    CHECK(engine.finished == engine.jobs);
    CHECK(engine.efficiency >= tree.efficiency);
    CHECK(engine.efficiency > 0.5);
}

TEST_CASE("bar charts draw one bar per value, to scale", "[sim]") {
    BarChart c{"t", "y", {"a", "b"}, {{"g1", {1, 2}}, {"g2", {4, 0.5}}}};
    std::string svg = render(c);
    CHECK(svg.rfind("<svg", 0) == 0);
    std::vector<double> heights;
    for (std::size_t at = svg.find("<rect x="); at != std::string::npos;
         at = svg.find("<rect x=", at + 1)) {
        auto h = svg.find("height=\"", at) + 8;
        heights.push_back(std::stod(svg.substr(h, svg.find('"', h) - h)));
    }
    // 4 bars and 2 legend swatches (height 10).
    REQUIRE(heights.size() == 6);
    CHECK(heights[0] * 2 == Approx(heights[1]).epsilon(0.01));
    CHECK(heights[0] * 4 == Approx(heights[2]).epsilon(0.01));
    CHECK(heights[3] * 8 == Approx(heights[2]).epsilon(0.01));
}

namespace {

// `hosts` g4dn.12xlarge nodes (4 T4 GPUs, 50 Gb/s), each alone under its own leaf switch,
// the leaves under one spine by 25 Gb/s uplinks. Any job on two hosts crosses both hosts'
// leaf uplinks, which it shares with every other such job, and they are what bounds it.
struct LeafPerHost {
    explicit LeafPerHost(int hosts)
        : conf("leaf-per-host.conf", [&] {
              std::string text;
              for (int h = 1; h <= hosts; ++h)
                  text += "SwitchName=leaf" + std::to_string(h) + " Nodes=h" + std::to_string(h) +
                          " LinkSpeed=100\n";
              return text + "SwitchName=spine Switches=leaf[1-" + std::to_string(hosts) +
                     "] LinkSpeed=25\n";
          }()) {
        ClusterSpec spec;
        spec.nodes = {kG4dn};
        spec.fabric = conf.path;
        auto c = build_cluster(spec);
        INFO((c ? std::string() : c.error().message()));
        REQUIRE(c.ok());
        cluster.emplace(std::move(c).value());
    }
    TempFile conf;
    std::optional<SimCluster> cluster;
};

// A data-parallel job of `nodes` nodes with one GPU each, all-reducing 1 GiB per step.
SimJob ring_job(double submit, std::uint32_t nodes, double work) {
    SimJob j = job(submit, static_cast<int>(nodes), work, 4 * work, nodes);
    JobHints h;
    h.comm = CommSpec{};
    h.comm->bytes = 1ull << 30;
    j.demand = make_demand(JobRequest{nodes, nodes, 1, nodes, nodes}, h);
    return j;
}

// An elastic one: asks `nodes` nodes, MIN:MAX as given.
SimJob elastic_ring_job(double submit, std::uint32_t nodes, std::uint32_t min,
                        std::uint32_t max, double work) {
    SimJob j = ring_job(submit, min, work);
    j.gpus = static_cast<int>(nodes);
    j.nodes = static_cast<int>(nodes);
    j.elastic = ElasticSpec{min, max, 0};
    return j;
}

}  // namespace

TEST_CASE("sim contention: two jobs sharing one uplink slow each other to a fixed point",
          "[sim]") {
    // Two 2-node jobs on h1 and h2, each alone in its leaf: both cross both uplinks. With
    // communication half of the ideal step (S = 0.5), a job's step alone is 2b (b: the
    // time its all-reduce keeps an uplink busy, which is also its communication time: the
    // uplinks are its bottleneck). With the other job's share u = b / step as
    // load, its communication takes b / (1 - u), so step = b + b / (1 - b / step): step / b
    // solves x^2 - 3x + 1 = 0, x = (3 + sqrt 5) / 2, and the jobs run x / 2 = 1.309 times
    // as long as alone.
    LeafPerHost c(2);
    const StepTimes half(0.5);
    std::vector<SimJob> jobs{ring_job(0, 2, 1000), ring_job(0, 2, 1000)};
    SimOptions o = options();
    auto alone = simulate(*c.cluster, jobs, half, o, "tree-bestfit");
    REQUIRE(alone.jobs[0].end_s == Approx(1000).epsilon(1e-3));
    REQUIRE(alone.jobs[1].end_s == Approx(1000).epsilon(1e-3));
    o.contention = true;
    auto shared = simulate(*c.cluster, jobs, half, o, "tree-bestfit");
    const double x = (3 + std::sqrt(5.0)) / 2;
    CHECK(shared.jobs[0].end_s == Approx(1000 * x / 2).epsilon(3e-3));
    CHECK(shared.jobs[1].end_s == Approx(1000 * x / 2).epsilon(3e-3));
    CHECK(shared.jobs[0].contention == Approx(x / 2).epsilon(3e-3));
    // One job alone on the fabric is not slowed: the second starts when the first ends.
    std::vector<SimJob> apart{ring_job(0, 2, 1000), ring_job(2000, 2, 1000)};
    auto serial = simulate(*c.cluster, apart, half, o, "tree-bestfit");
    CHECK(serial.jobs[1].end_s - serial.jobs[1].start_s == Approx(1000).epsilon(1e-3));
    CHECK(serial.jobs[0].contention == Approx(1.0));
}

TEST_CASE("sim goodput: an elastic job grows while a node adds at least min_gain per GPU",
          "[elastic][sim]") {
    // A job asking 2 nodes (1 GPU each, MIN:MAX 1:4) on hosts each under its own leaf.
    // With communication a fifth of the ideal step (S = 0.2), a step's computation is 8b
    // on one GPU (4b on each of 2; b: its ring's time on 2 hosts), 8b/n on n, and its ring
    // 2(n-1)b/n: step(n) = (2n + 6)b / n. Its goodput, the GPUs' worth of computation per
    // second, is 8b / step = 4n / (n + 3): 1, 1.6, 2, 2.286 on 1 to 4 nodes. A third node
    // adds 0.4 per GPU, a fourth 0.286: with min_gain 0.35 the job grows to 3 nodes at
    // once and stays there.
    LeafPerHost c(5);
    const StepTimes fifth(0.2);
    std::vector<SimJob> jobs{elastic_ring_job(0, 2, 1, 4, 1000)};
    SimOptions o = options();
    o.suite.min_gain = 0.35;
    o.suite.recovery = Recovery::kSlurm;
    auto r = simulate(*c.cluster, jobs, fifth, o, "suite");
    CHECK(r.grows == 1);
    CHECK(r.jobs[0].resizes == 1);
    CHECK(r.jobs[0].hosts == 3);
    // Grown at its start, it pauses 30 s (the resize), then runs at step(3) / ideal step
    // = 4b / 5b of the time its work takes on 2.
    CHECK(r.jobs[0].end_s == Approx(30 + 1000 * 0.8).epsilon(2e-3));
    // Slurm, and the engine without ai-elasticd, run it as asked: 2 nodes, 1000 s.
    auto plain = simulate(*c.cluster, jobs, fifth, o, "engine");
    CHECK(plain.jobs[0].hosts == 2);
    CHECK(plain.jobs[0].end_s == Approx(1000).epsilon(2e-3));
    // With a threshold above 0.4 the third node is not worth it either.
    o.suite.min_gain = 0.45;
    auto strict = simulate(*c.cluster, jobs, fifth, o, "suite");
    CHECK(strict.grows == 0);
    CHECK(strict.jobs[0].hosts == 2);
}

TEST_CASE("sim recovery: one failure under Slurm's requeue and under ai-recover", "[sim]") {
    // A 2-node job of 3000 s checkpoints every 1800 s; its first host fails at 2500 and is
    // back at 2600; three other hosts are free.
    LeafPerHost c(5);
    const StepTimes fifth(0.2);
    SimOptions o = options();
    o.failures.checkpoint_s = 1800;
    o.failures.scripted = {{2500, "h1"}};
    o.failures.repair_s = 100;
    o.suite.elastic = std::nullopt;  // recovery alone
    std::vector<SimJob> rigid{ring_job(0, 2, 3000)};

    // Slurm: 700 s of 2 GPUs lost; requeued, eligible 140 s after the failure, it redoes
    // them from its checkpoint at 1800: 2640 + 1200.
    auto slurm = simulate(*c.cluster, rigid, fifth, o, "engine");
    REQUIRE(slurm.failures.size() == 1);
    CHECK(slurm.failures[0].jobs_stopped == 1);
    CHECK(slurm.jobs[0].lost_gpu_s == Approx(2 * 700));
    CHECK(slurm.jobs[0].restarts == 1);
    CHECK(slurm.jobs[0].end_s == Approx(2640 + 1200).epsilon(1e-3));

    // ai-recover: the survivors save step 2500 (nothing lost), the job is back 19 s later.
    auto suite = simulate(*c.cluster, rigid, fifth, o, "suite");
    CHECK(suite.jobs[0].lost_gpu_s == 0);
    CHECK(suite.jobs[0].restarts == 1);
    CHECK(suite.jobs[0].end_s == Approx(2519 + 500).epsilon(1e-3));

    // An elastic job (2 nodes, MIN 1) shrinks around the failed host instead: it goes on
    // on one node after 19 s, at step 8b against its ideal 5b (see the goodput test).
    std::vector<SimJob> elastic{elastic_ring_job(0, 2, 1, 2, 3000)};
    auto shrunk = simulate(*c.cluster, elastic, fifth, o, "suite");
    CHECK(shrunk.shrinks == 1);
    CHECK(shrunk.jobs[0].restarts == 0);
    CHECK(shrunk.jobs[0].hosts == 1);
    CHECK(shrunk.jobs[0].lost_gpu_s == 0);
    CHECK(shrunk.jobs[0].end_s == Approx(2519 + 500 * 8.0 / 5).epsilon(1e-3));
    // Slurm requeues the same job as the rigid one.
    auto requeued = simulate(*c.cluster, elastic, fifth, o, "engine");
    CHECK(requeued.jobs[0].end_s == Approx(2640 + 1200).epsilon(1e-3));
}

TEST_CASE("sim faults: the InfiniteHBD trace is read whole, nested faults and all",
          "[sim][faults]") {
    auto t = load_fault_trace(kData + "/failures/infinitehbd-fault-trace.json", 400);
    INFO((t ? std::string() : t.error().message()));
    REQUIRE(t.ok());
    CHECK(t->faults.size() == 584);
    CHECK(t->servers.size() == 231);
    CHECK(t->population == 400);
    CHECK(t->first_day == Approx(3.8955));
    CHECK(t->last_day == Approx(348.9798));
    std::map<FailureClass, int> by;
    for (const auto &f : t->faults) {
        ++by[f.kind];
        CHECK(f.end_day >= f.start_day);
    }
    // By the levels', classes' and descriptions' words (failure_class.hpp): "Software
    // Failure / Other Failures / Unknown Error" is software, "Operating System / Kernel
    // Panic" too (not the network's: "nic" does not start a word there).
    CHECK(by[FailureClass::kGpu] == 158);
    CHECK(by[FailureClass::kNetwork] == 74);
    CHECK(by[FailureClass::kPower] == 26);
    CHECK(by[FailureClass::kCooling] == 33);
    CHECK(by[FailureClass::kSoftware] == 24);
    CHECK(by[FailureClass::kOther] == 269);
    CHECK(classify_failure("NHC: check_gpu: GPU 3 Xid 79 fell off the bus") == FailureClass::kGpu);
    CHECK(classify_failure("IB port mlx5_2 link down") == FailureClass::kNetwork);
    CHECK(classify_failure("Not responding") == FailureClass::kOther);

    // Fewer servers than the file names is an error naming the option; so is bad JSON.
    auto few = load_fault_trace(kData + "/failures/infinitehbd-fault-trace.json", 100);
    REQUIRE_FALSE(few.ok());
    CHECK(few.error().field == "--fault-population");
    TempFile broken("trace.json", R"([{"node_id": "a", "event_time": 1, "event_type": "fault_end"}])");
    auto b = load_fault_trace(broken.path, 400);
    REQUIRE_FALSE(b.ok());
    CHECK(b.error().field == "event 0 event_type");
    TempFile late("late.json", R"([{"node_id": "a", "event_time": 2, "event_type": "fault_start",
        "fault_type": {"Level": "L", "Class": "GPU", "Desc": "d"}},
        {"node_id": "a", "event_time": 1, "event_type": "fault_end"}])");
    auto l = load_fault_trace(late.path, 400);
    REQUIRE_FALSE(l.ok());
    CHECK(l.error().field == "event 1 event_time");
}

TEST_CASE("sim faults: replayed by rack, simultaneous faults stay on one leaf", "[sim][faults]") {
    auto t = load_fault_trace(kData + "/failures/infinitehbd-fault-trace.json", 400);
    REQUIRE(t.ok());
    ScenarioSpec spec;
    spec.cluster.hosts = 64;  // 3 leaves of 24 hosts (X5's shape)
    auto c = build_cluster(with_defaults(spec).cluster);
    REQUIRE(c.ok());
    const auto &g = c->graph;
    auto r = replay_faults(t.value(), g, FaultMapping::kRack, 100, 200, 7);
    REQUIRE_FALSE(r.faults.empty());
    REQUIRE_FALSE(r.history.empty());
    for (const auto &h : r.history)
        CHECK(h.t < 0);
    // Every fault comes from the server its host took, at its time in the window.
    int same_moment = 0;
    for (std::size_t i = 0; i + 1 < r.faults.size(); ++i) {
        CHECK(r.faults[i].t >= 0);
        CHECK(r.faults[i].t < 200 * 86400);
        if (r.faults[i + 1].t - r.faults[i].t <= 60 && r.faults[i + 1].host != r.faults[i].host) {
            ++same_moment;
            CHECK(g.host_leaf(r.faults[i].host) == g.host_leaf(r.faults[i + 1].host));
        }
    }
    CHECK(same_moment > 0);
    // Random mapping scatters them (over 3 leaves some pair of one moment differs), and
    // another seed maps otherwise.
    auto random = replay_faults(t.value(), g, FaultMapping::kRandom, 100, 200, 7);
    int split = 0;
    for (std::size_t i = 0; i + 1 < random.faults.size(); ++i)
        if (random.faults[i + 1].t - random.faults[i].t <= 60 &&
            g.host_leaf(random.faults[i].host) != g.host_leaf(random.faults[i + 1].host))
            ++split;
    CHECK(split > 0);
    CHECK(replay_faults(t.value(), g, FaultMapping::kRack, 100, 200, 8).server_of_host !=
          r.server_of_host);
}

TEST_CASE("sim faults: a link fault stops the jobs that span hosts, not those inside one",
          "[sim][faults]") {
    LeafPerHost c(3);
    const StepTimes fifth(0.2);
    // 3 of h1's GPUs to a 1-host job; a 2-host job of 1 GPU a host on h1 and h2 (Slurm's
    // node order); a 4-GPU job at 300 on h3 until 400.
    std::vector<SimJob> jobs{job(0, 3, 1000, 4000), ring_job(0, 2, 1000), job(300, 4, 100, 400)};
    SimOptions o = options();
    // h1 loses its link at 500 for 1000 s: the 1-host job on it goes on, the 2-host job
    // stops; nothing new lands on h1 until 1500.
    o.failures.replayed = {{500, 0, 1000, FailureClass::kNetwork, true}};
    auto r = simulate(*c.cluster, jobs, fifth, o, "slurm-default");
    REQUIRE(r.failures.size() == 1);
    CHECK(r.failures[0].link);
    CHECK(r.failures[0].jobs_stopped == 1);
    CHECK(r.jobs[0].restarts == 0);
    CHECK(r.jobs[0].end_s == Approx(1000));
    CHECK(r.jobs[1].restarts == 1);
    // Requeued, it may start again at 640, on h2 and h3 (h1 is out), from scratch.
    CHECK(r.jobs[1].start_s == 0);
    CHECK(r.jobs[1].end_s == Approx(640 + 1000).epsilon(1e-3));
    // A host fault instead stops both.
    o.failures.replayed = {{500, 0, 1000, FailureClass::kGpu, false}};
    auto h = simulate(*c.cluster, jobs, fifth, o, "slurm-default");
    CHECK(h.failures[0].jobs_stopped == 2);
    CHECK(h.jobs[0].restarts == 1);
}

TEST_CASE("sim paired: a decision is won when its placement loses less to the faults that "
          "followed", "[sim][faults]") {
    // Hand-built: failures at 1000 s on host 3 and at 5000 s on host 7's link; hourly
    // checkpoints. Each decision: the engine's hosts against engine-norisk's.
    RunResult run;
    run.failures = {{1000, "h3", 3, false, 0, {}}, {5000, "h7", 7, true, 0, {}}};
    auto decision = [](double t, Regime r, int gpus, double run_s, std::vector<int> aware,
                       std::vector<int> blind) {
        PairedDecision d;
        d.t = t;
        d.regime = r;
        d.gpus = gpus;
        d.run_s = run_s;
        d.aware = std::move(aware);
        d.blind = std::move(blind);
        return d;
    };
    run.paired = {
        // A win: the blind choice sat on host 3 at 1000 s, 1000 s after its start.
        decision(0, Regime::kCyclic, 16, 7200, {1, 2}, {2, 3}),
        // A loss: the engine's choice spans host 7 when its link goes at 5000 s, 400 s past
        // its checkpoint at 4600 (it started at 1000 s); the blind one stays on host 8.
        decision(1000, Regime::kCyclic, 8, 7200, {7, 8}, {8}),
        // Host 7's link does not stop a job inside host 7: a tie at nothing lost.
        decision(1400, Regime::kNone, 1, 7200, {7}, {6}),
        // Started after the fault on host 3, and both placements the same: ties.
        decision(2000, Regime::kTree, 16, 7200, {3, 4}, {3, 4}),
        // Host 3 fails after this job was to end: nothing lost.
        decision(0, Regime::kTree, 16, 900, {3, 4}, {5, 6}),
    };
    evaluate_paired(run, 3600);
    CHECK(run.paired[0].lost_aware_gpu_s == 0);
    CHECK(run.paired[0].lost_blind_gpu_s == Approx(16 * 1000));
    CHECK(run.paired[1].lost_aware_gpu_s == Approx(8 * 400));
    CHECK(run.paired[1].lost_blind_gpu_s == 0);
    CHECK(run.paired[2].lost_aware_gpu_s == 0);

    const auto t = tally_paired(run.paired);
    const auto &cyclic = t[static_cast<std::size_t>(Regime::kCyclic)];
    CHECK(cyclic.decisions == 2);
    CHECK(cyclic.differ == 2);
    CHECK(cyclic.wins == 1);
    CHECK(cyclic.losses == 1);
    REQUIRE(cyclic.win_rate());
    CHECK(*cyclic.win_rate() == Approx(0.5));
    CHECK(cyclic.lost_blind_gpu_h == Approx(16 * 1000 / 3600.0));
    const auto &tree = t[static_cast<std::size_t>(Regime::kTree)];
    CHECK(tree.decisions == 2);
    CHECK(tree.differ == 1);
    CHECK(tree.ties == 2);
    CHECK(tree.comparisons() == 0);
    CHECK_FALSE(tree.win_rate());  // nothing decided: no rate, not a rate of 0
    CHECK(tree.interval() == std::pair<double, double>{0, 1});
    CHECK(t[static_cast<std::size_t>(Regime::kNone)].ties == 1);

    // Wilson's interval by hand: 8 wins in 10 comparisons is 0.490 to 0.943.
    PairedTally eight;
    eight.wins = 8;
    eight.losses = 2;
    CHECK(eight.interval().first == Approx(0.4902).margin(1e-4));
    CHECK(eight.interval().second == Approx(0.9433).margin(1e-4));
    eight.add(cyclic);
    CHECK(eight.comparisons() == 12);
    REQUIRE(eight.win_rate());
    CHECK(*eight.win_rate() == Approx(9.0 / 12));
}

TEST_CASE("sim paired: the engine's starts are paired with engine-norisk's choice on the same "
          "state", "[sim][faults]") {
    LeafPerHost c(4);
    const StepTimes fifth(0.2);
    std::vector<SimJob> jobs{ring_job(0, 2, 1000), job(10, 1, 500, 500), ring_job(20, 2, 800)};
    SimOptions o = options();
    o.paired = true;
    o.failures.replayed = {{300, 1, 600, FailureClass::kGpu, false}};
    auto r = simulate(*c.cluster, jobs, fifth, o, "engine");
    REQUIRE(r.paired.size() >= jobs.size());
    for (const auto &d : r.paired) {
        CHECK_FALSE(d.aware.empty());
        CHECK_FALSE(d.blind.empty());
        CHECK(d.run_s > 0);
    }
    // A policy that searches nothing has nothing to pair.
    CHECK(simulate(*c.cluster, jobs, fifth, o, "slurm-default").paired.empty());
}

TEST_CASE("sim train-risk: a placement is labelled by the faults during its job's run",
          "[sim][learned]") {
    LeafPerHost c(2);  // two hosts of 4 GPUs: a job of 8 GPUs takes both
    SimJob j = job(0, 8, kDaySeconds, 2 * kDaySeconds, 2);
    Replay replay;
    // A GPU fault of host 1 at day 1.5, for ten minutes.
    replay.faults = {{1.5 * kDaySeconds, 1, 600, FailureClass::kGpu, false}};
    const auto s = risk_samples(replay, *c.cluster, {j}, 0, 2.5, 10, 7);
    // Days 0, 1 and 2, ten placements each; day 2's watched only to day 2.5.
    REQUIRE(s.x.size() == 30);
    for (std::size_t i = 0; i < 30; ++i) {
        INFO("sample " << i);
        CHECK(s.y[i] == (i >= 10 && i < 20));  // only day 1's runs meet the fault
        CHECK(s.days[i] == Approx(i < 20 ? 1.0 : 0.5));
        CHECK(s.x[i][0] == 1);  // a ring over two hosts
        CHECK(s.x[i][2] == Approx(std::log(2.0)));
        // Day 2 knows the fault: host 1's weekly count, half a day on.
        CHECK(s.x[i][8] == Approx(i < 20 ? 0.0 : std::log1p(std::exp2(-0.5 / 7))));
    }
    CHECK(s.positives() == 10);
    CHECK(s.hand[25] > s.hand[5]);  // the hand-written score knows it too
    // A link fault stops only jobs on several hosts: a one-host job is never hit by it.
    replay.faults[0].link = true;
    const auto one = risk_samples(replay, *c.cluster, {job(0, 4, kDaySeconds, kDaySeconds)}, 0, 2.5, 10, 7);
    REQUIRE(one.x.size() == 30);
    CHECK(one.positives() == 0);
    CHECK(risk_samples(replay, *c.cluster, {j}, 0, 2.5, 10, 7).positives() == 10);
}

TEST_CASE("sim train-risk: the choice between two places, by hand", "[sim][learned]") {
    // Pairs (0, 1), (2, 3), (4, 5), (6, 7): the first three have one hit place; the
    // scores rate the spared one lower, tie, and rate it higher; the fourth is no choice.
    int decided = 0;
    const auto a = pair_accuracy({0.2, 0.1, 0.5, 0.5, 0.3, 0.9, 0.4, 0.6}, {1, 0, 1, 0, 1, 0, 0, 0}, &decided);
    CHECK(decided == 3);
    REQUIRE(a);
    CHECK(*a == Approx((1 + 0.5 + 0) / 3.0));
    CHECK_FALSE(pair_accuracy({0.1, 0.2}, {1, 1}, nullptr));
    // Beating the hand-written model takes all three figures where pairs were judged.
    Judgement j{0.8, 0.7, 0.05, 0.06, 1, 10, 0.5, 0.6};
    CHECK_FALSE(j.beats());
    j.pairs_accuracy = 0.7;
    CHECK(j.beats());
    j.log_loss = 0.07;
    CHECK_FALSE(j.beats());
    CHECK(Judgement{0.8, 0.7, 0.05, 0.06, 1, 0, std::nullopt, std::nullopt}.beats());
}

TEST_CASE("sim train-risk: the area under the ROC curve, by hand", "[sim][learned]") {
    // Of the 2 x 2 (failed, not) pairs, 3 rank the failed host higher: 0.75.
    CHECK(auc({0.1, 0.4, 0.35, 0.8}, {0, 0, 1, 1}) == Approx(0.75));
    // A tie counts half: scores all equal is 0.5, whatever the labels.
    CHECK(auc({0.2, 0.2, 0.2}, {1, 0, 0}) == Approx(0.5));
    CHECK(auc({0.9, 0.1}, {1, 0}) == Approx(1.0));
    CHECK(auc({0.9, 0.1}, {0, 1}) == Approx(0.0));
}
