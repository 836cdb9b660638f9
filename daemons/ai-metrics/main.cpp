// ai-metrics: what the suite does, for Prometheus and for people. Serves
//   /metrics   the suite's figures (OpenMetrics or Prometheus text, as the scraper asks)
//   /  /map    the live map of the cluster: fabric, NVLink domains, hosts, jobs on GPUs
//   /healthz   "ok"
// from Slurm's jobs and nodes, the select plugin's job records, ai-recover's restart logs
// and the resizable jobs' views. It never runs inside slurmctld: it is a client of it, as
// squeue is, and a scrape costs slurmctld one job and one node query.
//
//   ai-metrics [--listen HOST:PORT]            serve until SIGTERM or SIGINT
//   ai-metrics --once [--format text|openmetrics] [--map FILE]
//                                              print the figures (and write the map) once
//   ai-metrics --names                         the metric families it serves, one a line
//
// SIGHUP rereads ai_select.conf and the fabric (at the next request). Exit status: 0 done,
// 1 failed (cannot bind, no slurmctld for --once), 2 bad usage.
// See docs/admin-guide.md, "Observing the suite".
#include <signal.h>

#include <atomic>
#include <cstdlib>
#include <iostream>
#include <stdexcept>
#include <string>

#include <CLI/CLI.hpp>

#include "collect.hpp"
#include "http_server.hpp"
#include "slurm_ai/common/file_io.hpp"
#include "slurm_ai/metrics/exposition.hpp"

using namespace slurm_ai;
using namespace slurm_ai::metrics_daemon;

namespace {

std::atomic<bool> g_stop{false};
std::atomic<bool> g_reload{false};

void on_stop(int) {
    g_stop = true;
}
void on_hup(int) {
    g_reload = true;
}

metrics::Registry figures(const Snapshot &s) {
    metrics::Registry r;
    auto &up = r.add("slurm_ai_slurmctld_up", metrics::Type::kGauge, "",
                     "1 when slurmctld answered this scrape's queries, else 0 (the job and "
                     "host figures are then missing)");
    r.set(up, {}, s.slurm_up ? 1 : 0);
    metrics::add_suite_figures(r, s.inputs);
    return r;
}

// Rereads ai_select.conf and the fabric after SIGHUP; a configuration that no longer
// loads is reported and the one in force stays.
void reload_if_asked(Collector &collector, SlurmClient &slurm, const std::string &ai_conf) {
    if (!g_reload.exchange(false))
        return;
    try {
        collector = Collector(slurm, elastic::load_cluster_model(slurm, ai_conf));
        std::cerr << "ai-metrics: reread the configuration"
                  << (collector.model().warning.empty() ? "" : ": " + collector.model().warning)
                  << '\n';
    } catch (const std::exception &e) {
        std::cerr << "ai-metrics: SIGHUP: " << e.what() << "; the previous configuration stays\n";
    }
}

Response handle(Collector &collector, const Request &req, int refresh_s) {
    if (req.path == "/healthz")
        return {200, "text/plain; charset=utf-8", "ok\n"};
    if (req.path == "/metrics") {
        const auto format = metrics::format_for_accept(req.accept);
        auto registry = figures(collector.take(false));
        return {200, std::string(metrics::content_type(format)),
                metrics::write_exposition(registry.families(), format)};
    }
    if (req.path == "/" || req.path == "/map")
        return {200, "text/html; charset=utf-8",
                metrics::map_html(collector.take(true).map, refresh_s)};
    return {404, "text/plain; charset=utf-8", "not found: try /metrics or /map\n"};
}

int once(Collector &collector, const std::string &format, const std::string &map_path) {
    Snapshot s = collector.take(!map_path.empty());
    if (!s.slurm_up) {
        std::cerr << "ai-metrics: slurmctld did not answer: " << s.slurm_error << '\n';
        return 1;
    }
    auto registry = figures(s);
    std::cout << metrics::write_exposition(registry.families(),
                                           format == "openmetrics"
                                               ? metrics::Format::kOpenMetrics
                                               : metrics::Format::kPrometheusText);
    if (!map_path.empty()) {
        try {
            write_output_file(map_path, metrics::map_html(s.map, 0));
        } catch (const std::runtime_error &e) {
            std::cerr << "ai-metrics: --map " << map_path << ": cannot write (" << e.what()
                      << ")\n";
            return 1;
        }
    }
    return 0;
}

}  // namespace

int main(int argc, char **argv) {
    CLI::App app{"ai-metrics: the suite's OpenMetrics endpoint and live cluster map"};
    std::string slurm_conf, ai_conf, listen = ":9780", format = "text", map_path;
    bool run_once = false, names = false;
    int refresh_s = 15;
    app.add_option("--slurm-conf", slurm_conf, "slurm.conf to use (sets SLURM_CONF)");
    app.add_option("--conf", ai_conf, "ai_select.conf (default: beside slurm.conf)");
    app.add_option("--listen", listen, "Address to serve on, HOST:PORT or :PORT")
        ->capture_default_str();
    app.add_option("--refresh", refresh_s, "Seconds between reloads of the map in a browser")
        ->check(CLI::Range(0, 3600))
        ->capture_default_str();
    app.add_flag("--once", run_once, "Print the figures once and exit");
    app.add_option("--format", format, "With --once: text (Prometheus) or openmetrics")
        ->check(CLI::IsMember({"text", "openmetrics"}))
        ->capture_default_str();
    app.add_option("--map", map_path, "With --once: also write the map's HTML to this file");
    app.add_flag("--names", names, "Print the metric families served, one a line, and exit");
    try {
        app.parse(argc, argv);
        if (!map_path.empty() && !run_once)
            throw CLI::ValidationError("--map", "only with --once (the daemon serves /map)");
    } catch (const CLI::ParseError &e) {
        return app.exit(e) == 0 ? 0 : 2;
    }
    if (names) {
        const metrics::Registry all = figures(Snapshot{});
        for (const auto &f : all.families())
            std::cout << f.name << (f.type == metrics::Type::kCounter ? "_total" : "") << '\n';
        return 0;
    }
    if (!slurm_conf.empty())
        setenv("SLURM_CONF", slurm_conf.c_str(), 1);
    try {
        SlurmClient slurm(2);
        Collector collector(slurm, elastic::load_cluster_model(slurm, ai_conf));
        if (!collector.model().warning.empty())
            std::cerr << "ai-metrics: " << collector.model().warning << '\n';
        if (run_once)
            return once(collector, format, map_path);
        struct sigaction sa {};
        sa.sa_handler = on_stop;
        sigaction(SIGTERM, &sa, nullptr);
        sigaction(SIGINT, &sa, nullptr);
        sa.sa_handler = on_hup;
        sigaction(SIGHUP, &sa, nullptr);
        auto answer = [&](const Request &r) {
            reload_if_asked(collector, slurm, ai_conf);
            return handle(collector, r, refresh_s);
        };
        serve(listen, answer, g_stop);
        return 0;
    } catch (const std::exception &e) {
        std::cerr << "ai-metrics: " << e.what() << '\n';
        return 1;
    }
}
