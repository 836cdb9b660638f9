#include "slurm_ai/checkpoint/checkpoint_restart_log.hpp"

#include <ctime>
#include <filesystem>
#include <limits>

#include <nlohmann/json.hpp>

#include "slurm_ai/common/file_io.hpp"
#include "slurm_ai/common/hostlist.hpp"
#include "slurm_ai/common/json_number.hpp"
#include "slurm_ai/common/json_text.hpp"
#include "slurm_ai/common/state_paths.hpp"
#include "slurm_ai/common/text_scan.hpp"

namespace slurm_ai::checkpoint {
namespace {

using nlohmann::json;

std::string local_time(double t) {
    char buf[64];
    std::tm tm{};
    // A log edited by hand may hold any number; only a plausible time is a date.
    if (!(t >= 0 && t < 1e11)) {
        std::snprintf(buf, sizeof buf, "(at %g)", t);
        return buf;
    }
    std::time_t s = static_cast<std::time_t>(t);
    localtime_r(&s, &tm);
    std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
    return buf;
}

std::string fixed1(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", v);
    return buf;
}

}  // namespace

void to_json(json &j, const RestartRecord &r) {
    j = json{{"at", r.at}, {"event", r.event}, {"reason", r.reason}};
    auto put = [&](const char *k, const std::string &v) {
        if (!v.empty())
            j[k] = v;
    };
    put("action", r.action);
    put("nodes", r.nodes);
    put("survivors", r.survivors);
    put("excluded", r.excluded);
    put("checkpoint", r.checkpoint);
    if (r.run_start)
        j["run_start"] = r.run_start;
    if (!r.failed.empty())
        j["failed"] = r.failed;
    if (r.step_before)
        j["step_before"] = *r.step_before;
    if (r.step_after)
        j["step_after"] = *r.step_after;
    if (r.waited_s > 0)
        j["waited_s"] = r.waited_s;
    if (r.down_s > 0)
        j["down_s"] = r.down_s;
    j["restarts"] = r.restarts;
}

void from_json(const json &j, RestartRecord &r) {
    r = RestartRecord{};
    r.at = j.at("at").get<double>();
    r.event = j.at("event").get<std::string>();
    r.reason = j.value("reason", "");
    r.action = j.value("action", "");
    r.nodes = j.value("nodes", "");
    r.survivors = j.value("survivors", "");
    r.excluded = j.value("excluded", "");
    r.checkpoint = j.value("checkpoint", "");
    r.run_start = json_whole<std::int64_t>(j, "run_start", 0);
    r.failed = j.value("failed", std::vector<std::string>{});
    if (j.contains("step_before"))
        r.step_before = json_whole<std::uint64_t>(j, "step_before", 0);
    if (j.contains("step_after"))
        r.step_after = json_whole<std::uint64_t>(j, "step_after", 0);
    r.waited_s = j.value("waited_s", 0.0);
    r.down_s = j.value("down_s", 0.0);
    r.restarts = json_whole<decltype(r.restarts)>(j, "restarts", 0);
}

std::string restart_log_path(const std::string &state_dir, std::uint32_t job_id) {
    return state_paths::restart_log(state_dir, job_id);
}

RestartLog parse_restart_log(std::string_view text) {
    RestartLog log;
    text::LineReader lines(text);
    for (std::string_view line; lines.next(line);) {
        if (text::trim(line).empty())
            continue;
        try {
            log.records.push_back(json::parse(line).get<RestartRecord>());
        } catch (const json::exception &) {
            ++log.bad_lines;
        }
    }
    return log;
}

std::string dump_restart_record(const RestartRecord &r) {
    return json_text(json(r)) + "\n";
}

std::optional<std::string> append_record(const std::string &path, const RestartRecord &r) {
    return append_to_file(path, dump_restart_record(r));
}

Parsed<RestartLog> read_restart_log(const std::string &path) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        return RestartLog{};
    auto text = read_text_file(path, 64u << 20);
    if (!text)
        return text.error();
    return parse_restart_log(text.value());
}

std::string describe(const RestartRecord &r) {
    std::string out = local_time(r.at) + " ";
    if (r.event == "node_failure") {
        out += "node failure";
        if (!r.reason.empty())
            out += ": " + r.reason;
        if (r.step_before || r.step_after) {
            out += "; checkpoint step " + (r.step_before ? std::to_string(*r.step_before) : "none");
            if (r.step_after && r.step_after != r.step_before)
                out += " -> " + std::to_string(*r.step_after);
            if (r.waited_s > 0)
                out += " (asked the survivors, waited " + fixed1(r.waited_s) + " s)";
        }
        if (!r.checkpoint.empty())
            out += "; resumes from " + r.checkpoint;
    } else if (r.event == "running_again") {
        out += "running again on " + r.nodes;
        if (r.down_s > 0)
            out += ", " + fixed1(r.down_s) + " s after Slurm marked the node down";
        if (!r.checkpoint.empty())
            out += ", from " + r.checkpoint;
        else
            out += ", with no complete checkpoint (fresh start)";
    } else {
        out += r.event == "checkpoint_request" ? "checkpoint requested" : r.event;
        if (!r.reason.empty())
            out += ": " + r.reason;
    }
    out += " [restarts " + std::to_string(r.restarts) + "]";
    return out;
}

}  // namespace slurm_ai::checkpoint
