#include "scenario.hpp"

#include <algorithm>
#include <exception>
#include <filesystem>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>


namespace slurm_ai::sim {
namespace {

std::string base_name(const std::string &path) {
    return std::filesystem::path(path).filename().string();
}

// A window start: a date for a dated trace, seconds otherwise.
Parsed<double> start_of(const Trace &trace, const std::string &text) {
    if (text.empty())
        return 0.0;
    if (trace.epoch_unix >= 0) {
        double t = 0;
        std::string full = text.size() == 10 ? text + " 00:00:00" : text;
        if (!parse_date(full, t))
            return InputError{"--start", text, "a date as YYYY-MM-DD (the trace has dates)", "", 0};
        return t - trace.epoch_unix;
    }
    try {
        std::size_t used = 0;
        double v = std::stod(text, &used);
        if (used == text.size() && v >= 0)
            return v;
    } catch (const std::exception &) {
    }
    return InputError{"--start", text, "seconds from the trace's first submission", "", 0};
}

}  // namespace

const std::string &data_dir() {
    static const std::string dir = SLURM_AI_DATA_DIR;
    return dir;
}

ScenarioSpec with_defaults(ScenarioSpec s) {
    const std::string cm = data_dir() + "/comm-measurements";
    if (s.trace.empty())
        s.trace = cm + "/philly.csv";
    if (s.durations.empty())
        s.durations = cm + "/philly.csv";
    if (s.measurements.empty())
        s.measurements = cm;
    if (s.cluster.nodes.empty())
        s.cluster.nodes.push_back(data_dir() + "/hwloc/nvidiaDGX2.xml");
    if (s.cluster.fabric.empty() && s.cluster.shape_of.empty()) {
        s.cluster.shape_of = data_dir() + "/fabric/X5.topofile";
        s.cluster.shape_map = data_dir() + "/fabric/X5.map";
    }
    return s;
}

namespace {

// ClusterSpec::shape_profile, read into the cluster; the description for the output.
Parsed<std::string> read_shapes(const std::string &what, const testbed::Measurements &m,
                                SimCluster &c) {
    constexpr std::string_view kWithout = "measured-without:";
    if (what.empty())
        return std::string();
    if (what != "measured" && !what.starts_with(kWithout)) {
        auto file = load_shape_profile(what);
        if (!file)
            return file.error();
        c.shapes = std::make_shared<ShapeProfile>(std::move(file).value());
        return fmt::format("{} ({} shapes)", base_name(what), c.shapes->size());
    }
    std::vector<std::string> without;
    if (what != "measured") {
        const auto list = std::string_view(what).substr(kWithout.size());
        auto names = testbed::model_list(m, list, "--shape-profile");
        if (!names)
            return names.error();
        without = std::move(names).value();
    }
    auto profile = testbed::measured_shapes(m, c.max_gpus_per_host, without);
    if (profile.empty())
        return InputError{"--shape-profile", what,
                          fmt::format("measurements with placements of at most {} GPUs per host",
                                      c.max_gpus_per_host),
                          "", 0};
    c.shapes = std::make_shared<ShapeProfile>(std::move(profile));
    return fmt::format("the measurements' slowest model's ratio of {} models, {} shapes on hosts "
                       "of {} GPUs",
                       m.models.size() - without.size(), c.shapes->size(), c.max_gpus_per_host) +
           (without.empty() ? "" : fmt::format(" (without {})", fmt::join(without, ", ")));
}

}  // namespace

Parsed<Scenario> prepare(const ScenarioSpec &spec) {
    if (!(spec.days > 0))
        return InputError{"--days", fmt::format("{:g}", spec.days), "a positive number of days", "",
                          0};
    if (spec.overlay < 1)
        return InputError{"--overlay", std::to_string(spec.overlay), "at least 1", "", 0};
    auto cluster = build_cluster(spec.cluster);
    if (!cluster)
        return cluster.error();
    auto m = testbed::load_measurements(spec.measurements);
    if (!m)
        return m.error();
    auto shapes = read_shapes(spec.cluster.shape_profile, m.value(), cluster.value());
    if (!shapes)
        return shapes.error();
    const int max_nodes = cluster->graph.host_count();
    StepTimes steps =
        spec.measured_steps
            ? StepTimes(m.value(), cluster->max_gpus_per_host, max_nodes, spec.comm_share)
            : StepTimes(spec.comm_share > 0 ? spec.comm_share
                                            : StepTimes::median_sync_share(m.value()));
    auto full = load_trace(spec.trace);
    if (!full)
        return full.error();
    auto start = start_of(full.value(), spec.start);
    if (!start)
        return start.error();
    Trace trace =
        slice(full.value(), {start.value(), spec.days * 86400, spec.overlay, spec.max_jobs});
    if (trace.jobs.empty())
        return InputError{"--start", spec.start, "a window of the trace with jobs submitted in it",
                          spec.trace, 0};
    std::string drawn;
    if (std::any_of(trace.jobs.begin(), trace.jobs.end(),
                    [](const TraceJob &j) { return !j.has_duration; })) {
        auto pool = load_trace(spec.durations);
        if (!pool)
            return pool.error();
        auto n = draw_durations(trace, pool.value(), spec.jobs.seed);
        if (!n)
            return n.error();
        drawn = fmt::format("; {} durations drawn from {} jobs of the same GPU count", n.value(),
                            base_name(spec.durations));
    }
    if (!(spec.duration_scale > 0))
        return InputError{"--duration-scale", fmt::format("{:g}", spec.duration_scale),
                          "a positive factor", "", 0};
    if (spec.duration_scale != 1) {
        for (auto &j : trace.jobs)
            j.duration_s *= spec.duration_scale;
        drawn += fmt::format("; every duration scaled by {:g}", spec.duration_scale);
    }
    Jobs jobs = make_jobs(trace, cluster.value(), steps, spec.jobs);

    Scenario s{std::move(cluster).value(), std::move(steps), std::move(jobs), {}};
    int multi = 0;
    double gpu_h = 0;
    for (const auto &j : s.jobs.jobs) {
        multi += j.gpus > 1;
        gpu_h += j.gpus * j.work_s / 3600;
    }
    std::string window = trace.epoch_unix >= 0
                             ? fmt::format("from {}", format_date(trace.epoch_unix))
                             : fmt::format("from {:g} s", start.value());
    s.lines.push_back(fmt::format(
        "trace: {} ({}), {:g} day{} {}{}: {} jobs, {} with several GPUs, {:.0f} GPU-hours{}{}",
        base_name(spec.trace), trace.format, spec.days, spec.days == 1 ? "" : "s", window,
        spec.overlay > 1 ? fmt::format(", {} windows laid over one", spec.overlay) : "",
        s.jobs.jobs.size(), multi, gpu_h,
        s.jobs.too_large
            ? fmt::format(" ({} left out: more GPUs than the cluster)", s.jobs.too_large)
            : "",
        drawn));
    s.lines.push_back("cluster: " + s.cluster.description);
    const auto &p = spec.jobs.patterns;
    s.lines.push_back(fmt::format(
        "requests: {}; time limit {:g} x duration; multi-GPU jobs of no measured model: "
        "allreduce {:g}, pipeline {:g}, ps {:g} (shares)",
        spec.jobs.request == RequestStyle::kFlexible ? "--gpus=G (Slurm may split them)"
                                                     : "-N n --gpus-per-node=G/n, fewest nodes",
        spec.jobs.limit_factor, p.allreduce, p.pipeline, p.ps));
    s.lines.push_back("step times: " + s.steps.rule());
    if (!shapes->empty())
        s.lines.push_back("the engine's shape profile: " + *shapes);
    return s;
}

}  // namespace slurm_ai::sim
