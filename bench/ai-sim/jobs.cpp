// The simulated jobs: a trace's jobs as Slurm requests with the suite's job demand.
#include <algorithm>
#include <cmath>
#include <random>

#include "simulator.hpp"
#include "slurm_ai/common/enum_names.hpp"

namespace slurm_ai::sim {

const char *to_string(Regime r) {
    static constexpr std::string_view kNames[] = {"one GPU", "cyclic", "tree-like"};
    return enum_name(r, kNames).data();
}

EngineOptions deterministic_engine_options() {
    EngineOptions o;
    o.time_budget_ms = 1e4;
    return o;
}

namespace {

JobRequest request_for(int gpus, const SimCluster &c, RequestStyle style) {
    const int per_host = std::max(c.max_gpus_per_host, 1);
    const auto g = static_cast<std::uint32_t>(gpus);
    const auto hosts = static_cast<std::uint32_t>(c.graph.host_count());
    if (style == RequestStyle::kPacked) {
        if (gpus <= per_host)
            return {1, 1, 0, g, g};
        auto n = static_cast<std::uint32_t>((gpus + per_host - 1) / per_host);
        if (g % n == 0)
            return {n, n, g / n, g, g};
    }
    return {1, std::max<std::uint32_t>(std::min(g, hosts), 1), 0, g, g};
}

}  // namespace

std::optional<ElasticShape> elastic_bounds(int gpus, int max_gpus_per_host) {
    const int per_host = std::max(max_gpus_per_host, 1);
    if (gpus < 2)
        return std::nullopt;
    const int nodes = (gpus + per_host - 1) / per_host;
    if (gpus % nodes != 0)
        return std::nullopt;
    ElasticShape e;
    e.nodes = nodes;
    e.per_node = gpus / nodes;
    e.spec.min_nodes = static_cast<std::uint32_t>((nodes + 1) / 2);
    e.spec.max_nodes = static_cast<std::uint32_t>(2 * nodes);
    return e;
}

Jobs make_jobs(const Trace &trace, const SimCluster &cluster, const StepTimes &steps,
               const JobOptions &o) {
    Jobs out;
    std::mt19937_64 rng(o.seed);
    // Which jobs are elastic: a stream of its own, one draw per job.
    std::mt19937_64 elastic_rng(o.seed ^ 0x656c6173746963ull);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    const PatternMix &m = o.patterns;
    const double total = m.allreduce + m.pipeline + m.ps;
    for (const auto &t : trace.jobs) {
        // One draw per job, whether it uses it or not, so that a job's pattern does not
        // depend on the jobs before it.
        const double u = unit(rng) * (total > 0 ? total : 1);
        const bool draw_elastic = unit(elastic_rng) < o.elastic_share;
        if (t.gpus > cluster.gpus) {
            ++out.too_large;
            continue;
        }
        SimJob job;
        job.name = t.name;
        job.submit_s = t.submit_s;
        job.gpus = t.gpus;
        job.work_s = t.duration_s;
        job.limit_s = std::max(60.0, std::ceil(t.duration_s * o.limit_factor / 60) * 60);
        JobHints hints;
        if (steps.measured(t.model)) {
            job.model = t.model;  // data parallel, as measured: the plugin's default demand
            job.local_bsz = t.batch_size > 0 ? t.batch_size / t.gpus : 0;
            ++out.measured;
        } else if (t.gpus > 1 && total > 0) {
            CommSpec comm;
            comm.pattern = u < m.allreduce                ? CommPattern::kAllReduce
                           : u < m.allreduce + m.pipeline ? CommPattern::kPipeline
                                                          : CommPattern::kParameterServer;
            hints.comm = comm;
        }
        job.demand = make_demand(request_for(t.gpus, cluster, o.request), hints);
        if (auto e = elastic_bounds(t.gpus, cluster.max_gpus_per_host);
            e && static_cast<int>(e->spec.max_nodes) <= cluster.graph.host_count()) {
            ++out.could_be_elastic;
            if (draw_elastic) {
                // -N MIN-n --gpus-per-node=g --ai-elastic=MIN:MAX, placed at MIN and up.
                ++out.elastic;
                job.elastic = e->spec;
                job.nodes = e->nodes;
                const auto g = static_cast<std::uint32_t>(e->per_node);
                const JobRequest at_min{e->spec.min_nodes, e->spec.min_nodes, g,
                                        g * e->spec.min_nodes, g * e->spec.min_nodes};
                job.demand = make_demand(at_min, hints);
            }
        }
        switch (job.demand.comm.pattern) {
            case CommPattern::kNone:
                job.regime = Regime::kNone;
                break;
            case CommPattern::kPipeline:
            case CommPattern::kParameterServer:
                job.regime = Regime::kTree;
                break;
            default:
                job.regime = t.gpus > 1 ? Regime::kCyclic : Regime::kNone;
        }
        out.jobs.push_back(std::move(job));
    }
    return out;
}

}  // namespace slurm_ai::sim
