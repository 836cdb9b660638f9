#include "trace.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <ctime>
#include <map>
#include <random>
#include <system_error>

#include "slurm_ai/common/file_io.hpp"
#include "slurm_ai/common/csv_table.hpp"

namespace slurm_ai::sim {
namespace {

bool read_int(std::string_view text, int &out) {
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc() && end == text.data() + text.size();
}

}  // namespace

bool parse_date(std::string_view t, double &unix_time) {
    // YYYY-MM-DD HH:MM:SS
    if (t.size() != 19 || t[4] != '-' || t[7] != '-' || t[10] != ' ' || t[13] != ':' ||
        t[16] != ':')
        return false;
    std::tm tm{};
    int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
    if (!read_int(t.substr(0, 4), year) || !read_int(t.substr(5, 2), month) ||
        !read_int(t.substr(8, 2), day) || !read_int(t.substr(11, 2), hour) ||
        !read_int(t.substr(14, 2), minute) || !read_int(t.substr(17, 2), second))
        return false;
    if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60)
        return false;
    tm.tm_year = year - 1900;
    tm.tm_mon = month - 1;
    tm.tm_mday = day;
    tm.tm_hour = hour;
    tm.tm_min = minute;
    tm.tm_sec = second;
    unix_time = static_cast<double>(timegm(&tm));
    return true;
}

std::string format_date(double unix_time) {
    std::time_t t = static_cast<std::time_t>(std::floor(unix_time));
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
    return buf;
}

Parsed<Trace> load_trace(const std::string &path) {
    auto text = read_text_file(path);
    if (!text)
        return text.error();
    CsvTable csv(path, std::move(text).value());
    csv.read_header();
    enum Col { kName, kSubmit, kGpus, kDuration, kModel, kBatch };
    if (auto err = csv.select({
            {{"name", "job"}, false},
            {{"submit_s", "submit", "submit_time", "time", "timestamp"}, true},
            {{"gpus", "num_gpus", "num_replicas"}, true},
            {{"duration_s", "duration", "run_time", "runtime"}, false},
            {{"model", "application"}, false},
            {{"batch_size"}, false},
        }))
        return *err;

    Trace trace;
    trace.source = path;
    std::vector<double> submit;
    bool dated = false, first = true;
    std::vector<std::string_view> cells;
    while (csv.row(cells)) {
        if (auto err = csv.check_width(cells[kSubmit]))
            return *err;
        TraceJob job;
        double t = 0;
        bool is_date = parse_date(cells[kSubmit], t);
        if (first)
            dated = is_date;
        first = false;
        if (dated && !is_date)
            return csv.error("submit time", cells[kSubmit],
                             "a date as YYYY-MM-DD HH:MM:SS, as on the first row");
        if (!dated) {
            auto v = csv.number("submit time", cells[kSubmit], false);
            if (!v)
                return v.error();
            t = v.value();
        }
        auto gpus = csv.count("gpus", cells[kGpus], 1, kMaxTraceGpus);
        if (!gpus)
            return gpus.error();
        job.gpus = gpus.value();
        if (csv.has(kDuration)) {
            auto d = csv.number("duration", cells[kDuration], false);
            if (!d)
                return d.error();
            job.duration_s = d.value();
            job.has_duration = true;
        }
        if (csv.has(kBatch) && !cells[kBatch].empty()) {
            auto b = csv.number("batch_size", cells[kBatch], true);
            if (!b)
                return b.error();
            job.batch_size = b.value();
        }
        if (csv.has(kModel))
            job.model = std::string(cells[kModel]);
        job.name = csv.has(kName) && !cells[kName].empty()
                       ? std::string(cells[kName])
                       : "job" + std::to_string(trace.jobs.size() + 1);
        submit.push_back(t);
        trace.jobs.push_back(std::move(job));
    }
    if (trace.jobs.empty())
        return InputError{"rows", "", "at least one job after the header", path, csv.line()};

    const double t0 = *std::min_element(submit.begin(), submit.end());
    for (std::size_t i = 0; i < trace.jobs.size(); ++i)
        trace.jobs[i].submit_s = submit[i] - t0;
    if (dated)
        trace.epoch_unix = t0;
    std::stable_sort(trace.jobs.begin(), trace.jobs.end(),
                     [](const TraceJob &a, const TraceJob &b) { return a.submit_s < b.submit_s; });
    const bool durations = csv.has(kDuration), models = csv.has(kModel);
    trace.format = dated && durations ? "philly" : models && !durations ? "pollux workload" : "csv";
    return trace;
}

Trace slice(const Trace &trace, const SliceOptions &o) {
    Trace out;
    out.source = trace.source;
    out.format = trace.format;
    out.epoch_unix = trace.epoch_unix >= 0 ? trace.epoch_unix + o.start_s : -1;
    const int overlay = std::max(o.overlay, 1);
    const double end = o.start_s + o.length_s * overlay;
    for (const auto &job : trace.jobs) {
        if (job.submit_s < o.start_s || job.submit_s >= end)
            continue;
        TraceJob j = job;
        j.submit_s = std::fmod(job.submit_s - o.start_s, o.length_s);
        out.jobs.push_back(std::move(j));
    }
    std::stable_sort(out.jobs.begin(), out.jobs.end(),
                     [](const TraceJob &a, const TraceJob &b) { return a.submit_s < b.submit_s; });
    if (o.max_jobs > 0 && static_cast<int>(out.jobs.size()) > o.max_jobs)
        out.jobs.resize(static_cast<std::size_t>(o.max_jobs));
    return out;
}

Parsed<int> draw_durations(Trace &trace, const Trace &pool, std::uint64_t seed) {
    std::map<int, std::vector<double>> by_gpus;
    for (const auto &j : pool.jobs)
        if (j.has_duration)
            by_gpus[j.gpus].push_back(j.duration_s);
    if (by_gpus.empty())
        return InputError{"durations", pool.source, "a trace with a duration column", pool.source,
                          0};
    std::mt19937_64 rng(seed);
    int drawn = 0;
    for (auto &job : trace.jobs) {
        if (job.has_duration)
            continue;
        // The nearest GPU count the pool has, the smaller one on a tie.
        auto it = by_gpus.lower_bound(job.gpus);
        if (it == by_gpus.end()) {
            it = std::prev(it);
        } else if (it->first != job.gpus && it != by_gpus.begin()) {
            auto below = std::prev(it);
            if (job.gpus - below->first <= it->first - job.gpus)
                it = below;
        }
        const auto &durations = it->second;
        std::uniform_int_distribution<std::size_t> pick(0, durations.size() - 1);
        job.duration_s = durations[pick(rng)];
        job.has_duration = true;
        ++drawn;
    }
    return drawn;
}

}  // namespace slurm_ai::sim
