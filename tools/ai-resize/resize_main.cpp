// ai-resize: grow or shrink a running job, from inside it (a training script calls it;
// JOBID defaults to $SLURM_JOB_ID) or from outside by its owner or an admin.
//
//   ai-resize grow   [JOBID] --by N [--timeout DURATION] [--force] [--signal SIG] [--json]
//   ai-resize shrink [JOBID] (--by N | --nodes LIST) [--force] [--signal SIG] [--json]
//   ai-resize status [JOBID] [--json] [--write DIR]
//
// grow adds N nodes next to the job's own (the select plugin places the expansion job),
// shrink releases N nodes (those whose loss costs the job's communication least) or the
// named ones. Either way the job's view files are rewritten (node list, host file, world
// size, generation) and the job gets its signal. status prints that view, and with
// --write also writes it into DIR. Exit status: 0 done, 1 failed (the message says why;
// the job is as it was, or fully resized), 2 bad usage.
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <thread>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "slurm_ai/common/hostlist.hpp"
#include "slurm_ai/slurm/resize_ops.hpp"

using nlohmann::json;
using namespace slurm_ai;
using namespace slurm_ai::elastic;

namespace {

std::uint32_t resolve_job(unsigned long given) {
    if (given)
        return static_cast<std::uint32_t>(given);
    const char *self = std::getenv("SLURM_JOB_ID");
    if (self && *self)
        return static_cast<std::uint32_t>(std::strtoul(self, nullptr, 10));
    throw std::runtime_error("no JOBID given and not inside a job ($SLURM_JOB_ID is not set)");
}

json view_json(const Notice &n, const ClusterModel &m) {
    json j = n.view;
    j["view_file"] = job_view_dir(m.view_dir, n.view.job_id) + "/view.json";
    j["hostfile"] = job_view_dir(m.view_dir, n.view.job_id) + "/hostfile";
    if (!n.view_error.empty())
        j["view_error"] = n.view_error;
    j["signal"] = n.signal ? json(signal_name(n.signal)) : json(nullptr);
    return j;
}

std::string describe_notice(const Notice &n, const ClusterModel &m) {
    std::string s = fmt::format("  view:   {}/view.json, generation {}, world size {}",
                                job_view_dir(m.view_dir, n.view.job_id), n.view.generation,
                                n.view.world_size());
    if (!n.view_error.empty())
        s += fmt::format(" (not written: {})", n.view_error);
    s += n.signal ? fmt::format("\n  signal: {} sent to the job\n", signal_name(n.signal))
                  : std::string("\n  signal: none chosen (--ai-elastic=MIN:MAX:signal=SIG)\n");
    return s;
}

int run_grow(SlurmClient &slurm, const ClusterModel &m, std::uint32_t job_id, std::uint32_t by,
             std::uint32_t timeout_s, bool force, int sig, bool as_json) {
    const auto now = [] { return static_cast<std::int64_t>(time(nullptr)); };
    auto before = slurm.job(job_id);
    // Read once for the grow and its notice (start_grow reads them itself without a job).
    std::optional<JobHints> hints;
    if (before)
        hints = job_hints(m, *before);
    const JobHints *known = hints ? &*hints : nullptr;
    GrowOp op = start_grow(slurm, m, job_id, by, now(), timeout_s, force,
                           "grow +" + std::to_string(by) + " by ai-resize", known);
    GrowStep step;
    for (;;) {
        step = advance_grow(slurm, op, now());
        if (step.status != GrowStep::Status::kWaiting)
            break;
        std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    if (step.status == GrowStep::Status::kFailed)
        throw std::runtime_error("job " + std::to_string(job_id) + " did not grow: " + step.reason);
    Notice n = notify_job(slurm, m, job_id, op.reason, sig, known);
    std::vector<std::string> added;
    auto old_nodes = expand_hostlist(before ? before->nodes : "", "nodes");
    for (const auto &node : n.view.nodes)
        if (!old_nodes || std::find(old_nodes->begin(), old_nodes->end(), node) == old_nodes->end())
            added.push_back(node);
    if (as_json) {
        json j{{"job_id", job_id},
               {"action", "grow"},
               {"expansion_job", op.expansion_id},
               {"added", added},
               {"nodes", compress_hostlist(n.view.nodes)},
               {"num_nodes", n.view.nodes.size()},
               {"view", view_json(n, m)}};
        std::cout << j.dump(2) << '\n';
    } else {
        std::cout << fmt::format(
                         "job {}: grew by {} to {} nodes: {} (added {}, through expansion "
                         "job {})\n",
                         job_id, added.size(), n.view.nodes.size(), compress_hostlist(n.view.nodes),
                         compress_hostlist(added), op.expansion_id)
                  << describe_notice(n, m);
    }
    return 0;
}

int run_shrink(SlurmClient &slurm, const ClusterModel &m, std::uint32_t job_id, std::uint32_t by,
               const std::string &nodes, bool force, int sig, bool as_json) {
    std::vector<std::string> named;
    if (!nodes.empty()) {
        auto parsed = expand_hostlist(nodes, "--nodes");
        if (!parsed)
            throw std::runtime_error(parsed.error().message());
        named = std::move(parsed).value();
    }
    auto r = shrink_job(slurm, m, job_id, by, named, force, "shrink by ai-resize", sig);
    if (as_json) {
        json j{{"job_id", job_id},
               {"action", "shrink"},
               {"released", r.released},
               {"nodes", r.nodes},
               {"num_nodes", r.notice.view.nodes.size()},
               {"comm_before_s", r.comm_before_s},
               {"comm_after_s", r.comm_after_s},
               {"view", view_json(r.notice, m)}};
        std::cout << j.dump(2) << '\n';
    } else {
        std::cout << fmt::format("job {}: released {}; keeps {} ({} nodes)", job_id,
                                 compress_hostlist(r.released), r.nodes,
                                 r.notice.view.nodes.size());
        if (r.comm_before_s > 0)
            std::cout << fmt::format("; comm {:.4g} -> {:.4g} s/step", r.comm_before_s,
                                     r.comm_after_s);
        std::cout << '\n' << describe_notice(r.notice, m);
    }
    return 0;
}

int run_status(SlurmClient &slurm, const ClusterModel &m, std::uint32_t job_id,
               const std::string &write_dir, bool as_json) {
    auto job = slurm.job(job_id);
    if (!job)
        throw std::runtime_error("job " + std::to_string(job_id) + " is unknown to slurmctld");
    ResizeView now = current_view(m, *job, "status");
    auto published = read_view(job_view_dir(m.view_dir, job_id));
    if (published && published->nodes == now.nodes)
        now.generation = published->generation;
    if (!write_dir.empty())
        now = publish_view(write_dir, now);
    auto under_way = expansions_of(slurm.jobs(), job_id);
    auto hints = job_hints(m, *job);
    if (as_json) {
        json j = now;
        j["state"] = job->state;
        j["view_file"] = job_view_dir(m.view_dir, job_id) + "/view.json";
        j["view_current"] = published && published->nodes == now.nodes;
        j["elastic"] =
            hints.elastic
                ? json{{"min_nodes", hints.elastic->min_nodes},
                       {"max_nodes", hints.elastic->max_nodes},
                       {"signal", hints.elastic->signal ? json(signal_name(hints.elastic->signal))
                                                        : json(nullptr)}}
                : json(nullptr);
        j["expansions"] = json::array();
        for (const auto &e : under_way)
            j["expansions"].push_back({{"job_id", e.job_id}, {"state", e.state}});
        if (!write_dir.empty())
            j["written_to"] = write_dir;
        std::cout << j.dump(2) << '\n';
        return 0;
    }
    std::cout << fmt::format("job {}: {}, {} node(s) in rank order: {}\n", job_id, job->state,
                             now.nodes.size(), fmt::join(now.nodes, " "))
              << fmt::format("  world size {} ({} per node), master {}\n", now.world_size(),
                             now.procs_per_node, now.nodes.empty() ? "-" : now.nodes.front())
              << fmt::format("  view: {}/view.json ({})\n", job_view_dir(m.view_dir, job_id),
                             !published ? "not written yet"
                             : published->nodes == now.nodes
                                 ? "generation " + std::to_string(now.generation)
                                 : "out of date")
              << (hints.elastic ? fmt::format("  elastic {}:{}\n", hints.elastic->min_nodes,
                                              hints.elastic->max_nodes)
                                : std::string());
    for (const auto &e : under_way)
        std::cout << fmt::format("  grow under way: expansion job {} ({})\n", e.job_id, e.state);
    if (!write_dir.empty())
        std::cout << "  written to " << write_dir << '\n';
    return 0;
}

}  // namespace

int main(int argc, char **argv) {
    CLI::App app{"ai-resize: grow or shrink a running job; print its current view"};
    app.require_subcommand(1);
    unsigned long job_id = 0;
    unsigned by = 0;
    std::string nodes, conf, write_dir, signal_text, timeout_text = "60";
    bool force = false, as_json = false;
    auto common = [&](CLI::App *c) {
        c->add_option("jobid", job_id, "Job id (default: $SLURM_JOB_ID)")
            ->check(CLI::PositiveNumber);
        c->add_option("--conf", conf, "ai_select.conf (default: beside slurm.conf)");
        c->add_flag("--json", as_json, "Print the result as JSON");
    };
    auto *grow = app.add_subcommand("grow", "Add nodes next to the job's own");
    common(grow);
    grow->add_option("--by", by, "Nodes to add")->required()->check(CLI::PositiveNumber);
    grow->add_option("--timeout", timeout_text,
                     "How long the new nodes may take to become free (default 60s)");
    grow->add_flag("--force", force, "Allow more nodes than the job's --ai-elastic MAX");
    grow->add_option("--signal", signal_text, "Signal the job with SIG instead of its own");
    auto *shrink = app.add_subcommand("shrink", "Release nodes of the job");
    common(shrink);
    auto *by_opt = shrink->add_option("--by", by, "Nodes to release (the least costly ones)")
                       ->check(CLI::PositiveNumber);
    auto *nodes_opt = shrink->add_option("--nodes", nodes, "These nodes (a hostlist)");
    by_opt->excludes(nodes_opt);
    shrink->add_flag("--force", force, "Allow fewer nodes than the job's --ai-elastic MIN");
    shrink->add_option("--signal", signal_text, "Signal the job with SIG instead of its own");
    auto *status = app.add_subcommand("status", "The job's nodes, world size and view file");
    common(status);
    status->add_option("--write", write_dir,
                       "Also write view.json, hostfile and env into this directory");
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError &e) {
        return app.exit(e) == 0 ? 0 : 2;  // --help is no error; bad usage exits 2
    }
    if (shrink->parsed() && by == 0 && nodes.empty()) {
        std::cerr << "ai-resize shrink: give --by N or --nodes LIST\n";
        return 2;
    }

    try {
        const std::uint32_t id = resolve_job(job_id);
        int sig = 0;  // none given: the job's own --ai-elastic signal
        if (!signal_text.empty()) {
            auto parsed = parse_signal("--signal", signal_text);
            if (!parsed)
                throw std::runtime_error(parsed.error().message());
            sig = parsed.value();
        }
        auto timeout = parse_duration("--timeout", timeout_text);
        if (!timeout || timeout.value() == 0)
            throw std::runtime_error("--timeout='" + timeout_text +
                                     "': expected a duration such as 60, 90s or 5m");
        SlurmClient slurm;
        auto model = load_cluster_model(slurm, conf);
        if (!model->warning.empty() && !as_json)
            std::cerr << "ai-resize: " << model->warning << '\n';
        if (grow->parsed())
            return run_grow(slurm, *model, id, by, timeout.value(), force, sig, as_json);
        if (shrink->parsed())
            return run_shrink(slurm, *model, id, by, nodes, force, sig, as_json);
        return run_status(slurm, *model, id, write_dir, as_json);
    } catch (const std::exception &e) {
        std::cerr << "ai-resize: " << e.what() << '\n';
        return 1;
    }
}
