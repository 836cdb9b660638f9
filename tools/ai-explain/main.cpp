// ai-explain JOBID: what the suite's select plugin saw and decided for a job: its hints,
// the nodes and GPUs it got in rank order, the predicted communication time per step and
// its efficiency, the failure risk, and (with Debug=yes) what plain cons_tres would have
// chosen; and for a job with --ai-checkpoint, every node failure, checkpoint request and
// restart ai-recover logged. Works while the job runs and after it ends: it reads the
// record the plugin keeps in StateSaveLocation/ai_select/jobs/ and ai-recover's restart
// log in StateSaveLocation/ai_recover/jobs/. For a job still pending: what holds it, in
// the fabric's terms (nodes with the GPUs it asks free, in one NVLink domain or leaf when
// it asked for hard locality), when the running jobs' ends would let it fit, and requests
// that would start it now (a size within --ai-elastic, --ai-locality=soft, --segment).
// Exit status: 0 found, 1 no record or bad input, 2 bad usage.
#include <filesystem>
#include <iostream>
#include <string>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "slurm_ai/checkpoint/checkpoint_restart_log.hpp"
#include "slurm_ai/job/job_record.hpp"
#include "slurm_ai/slurm/pending_explain.hpp"
#include "slurm_ai/slurm/slurm_client.hpp"

using nlohmann::json;

namespace {

using slurm_ai::JobHints;
using slurm_ai::JobRecord;

// The hints as the record keeps them, in a few words each ("comm allreduce:bytes=1G").
std::string describe_hints(const JobHints &h) {
    std::string out;
    auto add = [&](const std::string &s) { out += (out.empty() ? "" : "; ") + s; };
    if (h.comm)
        add("comm " + slurm_ai::to_string(*h.comm));  // as --ai-comm takes it
    if (h.dag_file)
        add("DAG " + *h.dag_file);
    if (h.elastic)
        add(fmt::format("elastic {}:{}", h.elastic->min_nodes, h.elastic->max_nodes));
    if (h.gang)
        add(fmt::format("gang {} of {}", h.gang->name, h.gang->size));
    if (h.checkpoint)
        add("checkpoint " + h.checkpoint->dir);
    if (h.locality)
        add(fmt::format("locality {} (wait {} s)", h.locality->hard ? "hard" : "soft",
                        h.locality->wait_s));
    return out.empty() ? "none" : out;
}

std::string explain(const JobRecord &r) {
    std::string out = fmt::format("job {}: ", r.job_id);
    const auto &d = r.decision;
    if (d)
        out += fmt::format("placed by the suite's {} policy on {}\n", d->policy, r.nodes);
    else
        out += fmt::format("placed by plain cons_tres on {}{}\n", r.nodes,
                           !r.fell_back ? std::string()
                           : r.fallback_reason.empty()
                               ? std::string(" (the engine fell back; see "
                                             "slurmctld.log)")
                               : " (the engine fell back: " + r.fallback_reason + ")");
    out += "  hints:       " + describe_hints(r.hints) + "\n";
    if (!r.elastic_start.empty())
        out += "  started:     " + r.elastic_start + "\n";
    for (const auto &e : r.hint_errors)
        out += "  bad hint:    " + e + "\n";
    if (d) {
        out += "  rank order:  " + d->ranks + "\n";
        out += fmt::format(
            "  comm:        {:.6g} s per step ({}, {}), ideal {:.6g} s, efficiency {:.3f}\n",
            d->comm_s, d->pattern.empty() ? "?" : d->pattern,
            d->algorithm.empty() ? "?" : d->algorithm, d->lower_bound_s, d->efficiency);
        out += fmt::format("  risk:        {:.3g} of the job lost per day (expected)\n",
                           d->risk_per_day);
        out += fmt::format("  decided in:  {:.3f} ms\n", d->decision_ms);
    }
    out += "  GPUs:        " + (r.gpus.empty() ? std::string("none") : r.gpus) + "\n";
    if (!r.cons_tres_would_choose.empty())
        out += "  cons_tres alone would have chosen: " + r.cons_tres_would_choose + "\n";
    return out;
}

// A pending job: what holds it, when it would fit, what would start it now.
json pending_json(const slurm_ai::JobInfo &job, const slurm_ai::PendingExplanation &e) {
    json j{{"job_id", job.job_id},
           {"state", job.state},
           {"slurm_reason", job.shown_reason.empty() ? job.reason : job.shown_reason}};
    if (e.note) {
        j["hints"] = e.note->hints;
        j["options"] = e.note->options;
    }
    if (e.wait) {
        j["holds"] = e.wait->holds;
        j["fits_now"] = e.wait->fits_now;
        j["frees"] = e.wait->frees;
        j["frees_at"] = e.wait->frees_at;
        j["frees_with_job"] = e.wait->frees_with_job;
        j["starts_now"] = e.wait->starts_now;
    } else {
        j["why_not"] = e.why_not;
    }
    return j;
}

std::string pending_text(const slurm_ai::JobInfo &job, const slurm_ai::PendingExplanation &e) {
    std::string out = fmt::format("job {}: pending (Slurm: {})\n", job.job_id,
                                  job.shown_reason.empty() ? job.reason : job.shown_reason);
    out += "  hints:       " +
           (e.note ? describe_hints(e.note->hints)
                   : std::string("none known (the engine has not held the job)")) +
           "\n";
    if (!e.wait)
        return out + "  (no explanation: " + e.why_not + ")\n";
    out += "  holds it:    " + e.wait->holds + "\n";
    if (!e.wait->frees.empty())
        out += "  fits:        " + e.wait->frees + "\n";
    for (std::size_t i = 0; i < e.wait->starts_now.size(); ++i)
        out += (i == 0 ? "  starts now:  " : "               ") + e.wait->starts_now[i] + "\n";
    return out;
}

// The one client of the process: libslurm 24.11 crashes when initialised a second time
// after slurm_fini.
slurm_ai::SlurmClient &slurm_client() {
    static slurm_ai::SlurmClient client(5);
    return client;
}

bool have_slurm_conf() {
    std::error_code ec;
    return std::filesystem::exists(slurm_ai::SlurmClient::slurm_conf_path(), ec);
}

// Explains the job if slurmctld has it pending; false when it does not.
bool explain_if_pending(std::uint32_t id, const std::string &state_dir, bool as_json) {
    if (!have_slurm_conf())
        return false;  // libslurm would retry a missing slurm.conf for a minute
    slurm_ai::SlurmClient &slurm = slurm_client();
    auto job = slurm.job(id);
    if (!job || job->state != "PENDING")
        return false;
    auto model = slurm_ai::elastic::load_cluster_model(slurm, "");
    model->state_dir = state_dir;
    const auto e = slurm_ai::explain_pending(*model, *job, slurm.jobs(), slurm.nodes(true));
    std::cout << (as_json ? pending_json(*job, e).dump(2) + "\n" : pending_text(*job, e));
    return true;
}

}  // namespace

int main(int argc, char **argv) {
    CLI::App app{"ai-explain: what the suite's select plugin decided for a job"};
    unsigned long job_id = 0;
    std::string state_dir;
    bool as_json = false;
    app.add_option("jobid", job_id, "Job id")->required()->check(CLI::PositiveNumber);
    app.add_option("--state-dir", state_dir,
                   "Slurm's StateSaveLocation (default: from slurm.conf, as Slurm reads it)");
    app.add_flag("--json", as_json, "Print the record as JSON");
    CLI11_PARSE(app, argc, argv);

    if (state_dir.empty()) {
        // libslurm would retry a missing slurm.conf for a minute, then exit.
        if (!have_slurm_conf()) {
            std::cerr << "ai-explain: no slurm.conf at "
                      << slurm_ai::SlurmClient::slurm_conf_path()
                      << " ($SLURM_CONF); give --state-dir\n";
            return 1;
        }
        state_dir = slurm_client().state_save_location();
    }
    if (state_dir.empty()) {
        std::cerr << "ai-explain: no StateSaveLocation in slurm.conf ($SLURM_CONF); give "
                     "--state-dir\n";
        return 1;
    }
    const auto id = static_cast<std::uint32_t>(job_id);
    auto record = slurm_ai::read_job_record(state_dir, id);
    if (!record && !std::filesystem::exists(slurm_ai::job_record_path(state_dir, id))) {
        try {
            if (explain_if_pending(id, state_dir, as_json))
                return 0;
        } catch (const std::exception &e) {
            std::cerr << "ai-explain: job " << id << " has no record, and slurmctld could not "
                      << "say whether it is pending: " << e.what() << '\n';
            return 1;
        }
    }
    if (!record) {
        const auto path = std::filesystem::path(slurm_ai::job_record_path(state_dir, id));
        std::error_code ec;
        if (std::filesystem::exists(path, ec))
            std::cerr << "ai-explain: " << record.error().message() << '\n';
        else
            std::cerr << "ai-explain: no record of job " << job_id << " in "
                      << path.parent_path().string()
                      << " (the job has not started yet, or the select plugin is not "
                         "select/ai_cons_tres)\n";
        return 1;
    }
    json r = record.value();  // for --json: the record as the plugin wrote it
    // ai-recover's restart log of the job (node failures, checkpoint requests, restarts).
    auto restarts = slurm_ai::checkpoint::read_restart_log(
        slurm_ai::checkpoint::restart_log_path(state_dir, static_cast<std::uint32_t>(job_id)));
    if (!restarts)
        std::cerr << "ai-explain: " << restarts.error().message() << '\n';
    else if (!restarts->records.empty())
        r["restarts"] = restarts->records;
    std::string text_out = as_json ? r.dump(2) + "\n" : explain(record.value());
    if (!as_json && restarts && !restarts->records.empty()) {
        text_out += "  restarts:    " + std::to_string(restarts->records.back().restarts) +
                    " (ai-recover's log)\n";
        for (const auto &rec : restarts->records)
            text_out += "    " + slurm_ai::checkpoint::describe(rec) + "\n";
    }
    std::cout << text_out;
    return 0;
}
