// ai-explain JOBID: what the suite's select plugin saw and decided for a job: its hints,
// the nodes and GPUs it got in rank order, the predicted communication time per step and
// its efficiency, the failure risk, and (with Debug=yes) what plain cons_tres would have
// chosen; and for a job with --ai-checkpoint, every node failure, checkpoint request and
// restart ai-recover logged. Works while the job runs and after it ends: it reads the
// record the plugin keeps in StateSaveLocation/ai_select/jobs/ and ai-recover's restart
// log in StateSaveLocation/ai_recover/jobs/.
// Exit status: 0 found, 1 no record or bad input, 2 bad usage.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "slurm_ai/checkpoint/checkpoint_restart_log.hpp"
#include "slurm_ai/job/job_record.hpp"
#include "slurm_ai/common/text_scan.hpp"
#include "slurm_ai/common/file_io.hpp"

using nlohmann::json;
namespace text = slurm_ai::text;

namespace {

// StateSaveLocation from slurm.conf ($SLURM_CONF or /etc/slurm/slurm.conf): the first
// StateSaveLocation= line, keys case-insensitive as Slurm reads them.
std::string state_dir_from_slurm_conf() {
    const char *env = std::getenv("SLURM_CONF");
    std::string path = env && *env ? env : "/etc/slurm/slurm.conf";
    auto text = slurm_ai::read_text_file(path, 16u << 20);
    if (!text)
        return {};
    text::LineReader lines(text.value());
    for (std::string_view raw; lines.next(raw);) {
        std::string line(text::trim(raw));
        if (line.empty())
            continue;
        if (text::lower(line.substr(0, 18)) == "statesavelocation=") {
            auto value = line.substr(18);
            auto hash = value.find('#');
            value = value.substr(0, hash);
            value.erase(value.find_last_not_of(" \t\r") + 1);
            return value;
        }
    }
    return {};
}

std::string describe_hints(const json &h) {
    if (!h.is_object() || h.empty())
        return "none";
    std::string out;
    auto add = [&](const std::string &s) { out += (out.empty() ? "" : "; ") + s; };
    if (h.contains("comm")) {
        std::string c = h["comm"]["pattern"].get<std::string>();
        for (auto &[k, v] : h["comm"].items())
            if (k != "pattern")
                c += fmt::format(" {}={}", k, v.dump());
        add("comm " + c);
    }
    if (h.contains("dag_file"))
        add("DAG " + h["dag_file"].get<std::string>());
    if (h.contains("elastic"))
        add(fmt::format("elastic {}:{}", h["elastic"]["min_nodes"].get<int>(),
                        h["elastic"]["max_nodes"].get<int>()));
    if (h.contains("gang"))
        add(fmt::format("gang {} of {}", h["gang"]["name"].get<std::string>(),
                        h["gang"]["size"].get<int>()));
    if (h.contains("checkpoint"))
        add("checkpoint " + h["checkpoint"]["dir"].get<std::string>());
    if (h.contains("locality"))
        add(fmt::format("locality {} (wait {} s)", h["locality"]["mode"].get<std::string>(),
                        h["locality"]["wait_s"].get<int>()));
    return out;
}

std::string explain(const json &r) {
    std::string out = fmt::format("job {}: ", r.value("job_id", 0));
    const json &d = r.contains("decision") ? r["decision"] : json();
    if (d.is_object())
        out += fmt::format("placed by the suite's {} policy on {}\n", d.value("policy", "?"),
                           r.value("nodes", "?"));
    else
        out += fmt::format(
            "placed by plain cons_tres on {}{}\n", r.value("nodes", "?"),
            !r.value("fell_back", false) ? std::string()
            : r.value("fallback_reason", std::string()).empty()
                ? std::string(" (the engine fell back; see slurmctld.log)")
                : " (the engine fell back: " + r["fallback_reason"].get<std::string>() + ")");
    out += "  hints:       " + describe_hints(r.value("hints", json::object())) + "\n";
    if (r.contains("elastic_start"))
        out += "  started:     " + r["elastic_start"].get<std::string>() + "\n";
    if (!r.value("hint_errors", json::array()).empty())
        for (const auto &e : r["hint_errors"])
            out += "  bad hint:    " + e.get<std::string>() + "\n";
    if (d.is_object()) {
        out += "  rank order:  " + d.value("ranks", std::string()) + "\n";
        out += fmt::format(
            "  comm:        {:.6g} s per step ({}, {}), ideal {:.6g} s, efficiency {:.3f}\n",
            d.value("comm_s", 0.0), d.value("pattern", "?"), d.value("algorithm", "?"),
            d.value("lower_bound_s", 0.0), d.value("efficiency", 0.0));
        out += fmt::format("  risk:        {:.3g} of the job lost per day (expected)\n",
                           d.value("risk_per_day", 0.0));
        out += fmt::format("  decided in:  {:.3f} ms\n", d.value("decision_ms", 0.0));
    }
    std::string gpus = r.value("gpus", std::string());
    out += "  GPUs:        " + (gpus.empty() ? std::string("none") : gpus) + "\n";
    if (r.contains("cons_tres_would_choose"))
        out += "  cons_tres alone would have chosen: " +
               r["cons_tres_would_choose"].get<std::string>() + "\n";
    return out;
}

}  // namespace

int main(int argc, char **argv) {
    CLI::App app{"ai-explain: what the suite's select plugin decided for a job"};
    unsigned long job_id = 0;
    std::string state_dir;
    bool as_json = false;
    app.add_option("jobid", job_id, "Job id")->required()->check(CLI::PositiveNumber);
    app.add_option("--state-dir", state_dir,
                   "Slurm's StateSaveLocation (default: read from slurm.conf)");
    app.add_flag("--json", as_json, "Print the record as JSON");
    CLI11_PARSE(app, argc, argv);

    if (state_dir.empty())
        state_dir = state_dir_from_slurm_conf();
    if (state_dir.empty()) {
        std::cerr << "ai-explain: no StateSaveLocation in slurm.conf ($SLURM_CONF); give "
                     "--state-dir\n";
        return 1;
    }
    const auto id = static_cast<std::uint32_t>(job_id);
    auto record = slurm_ai::read_job_record(state_dir, id);
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
    json r = record.value();
    // ai-recover's restart log of the job (node failures, checkpoint requests, restarts).
    auto restarts = slurm_ai::checkpoint::read_restart_log(
        slurm_ai::checkpoint::restart_log_path(state_dir, static_cast<std::uint32_t>(job_id)));
    if (!restarts)
        std::cerr << "ai-explain: " << restarts.error().message() << '\n';
    else if (!restarts->records.empty())
        r["restarts"] = restarts->records;
    std::string text_out = as_json ? r.dump(2) + "\n" : explain(r);
    if (!as_json && restarts && !restarts->records.empty()) {
        text_out += "  restarts:    " + std::to_string(restarts->records.back().restarts) +
                    " (ai-recover's log)\n";
        for (const auto &rec : restarts->records)
            text_out += "    " + slurm_ai::checkpoint::describe(rec) + "\n";
    }
    std::cout << text_out;
    return 0;
}
