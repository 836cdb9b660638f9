#include "slurm_ai/job/job_record.hpp"

#include <filesystem>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "slurm_ai/common/enum_names.hpp"
#include "slurm_ai/common/file_io.hpp"
#include "slurm_ai/common/json_number.hpp"
#include "slurm_ai/common/json_text.hpp"
#include "slurm_ai/common/state_paths.hpp"

namespace slurm_ai {

using nlohmann::json;

std::string job_record_path(const std::string &state_dir, std::uint32_t job_id) {
    return state_paths::job_record(state_dir, job_id);
}

void to_json(json &j, const JobDecision &d) {
    j = json{{"policy", d.policy},
             {"nodes", d.nodes},
             {"ranks", d.ranks},
             {"comm_s", d.comm_s},
             {"lower_bound_s", d.lower_bound_s},
             {"efficiency", d.efficiency},
             {"risk_per_day", d.risk_per_day},
             {"algorithm", d.algorithm},
             {"decision_ms", d.decision_ms},
             {"pattern", d.pattern},
             {"bytes", d.bytes}};
}

void from_json(const json &j, JobDecision &d) {
    d.policy = j.at("policy").get<std::string>();
    d.nodes = j.value("nodes", std::string());
    d.ranks = j.value("ranks", std::string());
    d.comm_s = j.value("comm_s", 0.0);
    d.lower_bound_s = j.value("lower_bound_s", 0.0);
    d.efficiency = j.value("efficiency", 0.0);
    d.risk_per_day = j.value("risk_per_day", 0.0);
    d.algorithm = j.value("algorithm", std::string());
    d.decision_ms = j.value("decision_ms", 0.0);
    d.pattern = j.value("pattern", std::string());
    d.bytes = j.value("bytes", std::uint64_t{0});
}

void to_json(json &j, const JobRecord &r) {
    json hints = r.hints;
    if (r.dag_compact_bytes)
        hints["dag_compact_bytes"] = r.dag_compact_bytes;
    j = json{{"job_id", r.job_id},          {"nodes", r.nodes},     {"gpus", r.gpus},
             {"hints", std::move(hints)},   {"options", r.options}, {"hint_errors", r.hint_errors},
             {"recorded_at", r.recorded_at}};
    j["decision"] = r.decision ? json(*r.decision) : json();
    if (r.fell_back) {
        j["fell_back"] = true;
        j["fallback_reason"] = r.fallback_reason;
        if (r.fallback_class)
            j["fallback_class"] = enum_name(*r.fallback_class, kFallbackClassNames);
    }
    if (!r.cons_tres_would_choose.empty())
        j["cons_tres_would_choose"] = r.cons_tres_would_choose;
    if (!r.elastic_start.empty())
        j["elastic_start"] = r.elastic_start;
    if (r.elastic_start_max)
        j["elastic_start_max"] = r.elastic_start_max;
}

void from_json(const json &j, JobRecord &r) {
    r = JobRecord{};
    r.job_id = json_whole<std::uint32_t>(j, "job_id");
    r.nodes = j.value("nodes", std::string());
    r.gpus = j.value("gpus", std::string());
    if (j.contains("hints")) {
        r.hints = j.at("hints").get<JobHints>();
        r.dag_compact_bytes = json_whole<std::uint64_t>(j.at("hints"), "dag_compact_bytes", 0);
    }
    if (j.contains("options"))
        r.options = j.at("options").get<std::map<std::string, std::string>>();
    if (j.contains("hint_errors"))
        r.hint_errors = j.at("hint_errors").get<std::vector<std::string>>();
    if (j.contains("decision") && j.at("decision").is_object())
        r.decision = j.at("decision").get<JobDecision>();
    r.fell_back = j.value("fell_back", false);
    r.fallback_reason = j.value("fallback_reason", std::string());
    if (j.contains("fallback_class")) {
        const std::string name = j.at("fallback_class").get<std::string>();
        r.fallback_class = enum_from_name<FallbackClass>(name, kFallbackClassNames);
        if (!r.fallback_class)
            throw std::invalid_argument("fallback_class '" + name + "': expected " +
                                        enum_names_list(kFallbackClassNames));
    }
    r.cons_tres_would_choose = j.value("cons_tres_would_choose", std::string());
    r.elastic_start = j.value("elastic_start", std::string());
    r.elastic_start_max = json_whole<std::uint32_t>(j, "elastic_start_max", 0);
    r.recorded_at = j.value("recorded_at", std::int64_t{0});
}

Parsed<JobRecord> parse_job_record(std::string_view text, std::string_view source) {
    try {
        return json::parse(text).get<JobRecord>();
    } catch (const std::exception &e) {
        return InputError{"record", std::string(e.what()).substr(0, 160),
                          "a job record as select/ai_cons_tres writes it", std::string(source), 0};
    }
}

std::string dump_job_record(const JobRecord &r) {
    return json_text(json(r), 2) + "\n";
}

Parsed<JobRecord> read_job_record(const std::string &state_dir, std::uint32_t job_id) {
    const std::string path = job_record_path(state_dir, job_id);
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        return InputError{"record", path, "the record of a job the select plugin started", "", 0};
    auto text = read_text_file(path, 16u << 20);
    if (!text)
        return text.error();
    return parse_job_record(text.value(), path);
}

void write_job_record(const std::string &state_dir, const JobRecord &r) {
    const std::string path = job_record_path(state_dir, r.job_id);
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    write_text_file_atomically(path, dump_job_record(r));
}

Parsed<PendingNote> parse_pending_note(std::string_view text, std::string_view source) {
    try {
        const json j = json::parse(text);
        PendingNote n;
        n.job_id = json_whole<std::uint32_t>(j, "job_id");
        if (j.contains("hints"))
            n.hints = j.at("hints").get<JobHints>();
        if (j.contains("options"))
            n.options = j.at("options").get<std::map<std::string, std::string>>();
        return n;
    } catch (const std::exception &e) {
        return InputError{"pending note", std::string(e.what()).substr(0, 160),
                          "a pending job's note as select/ai_cons_tres writes it",
                          std::string(source), 0};
    }
}

std::string dump_pending_note(const PendingNote &n) {
    JobHints hints = n.hints;
    hints.dag.reset();
    const json j{{"job_id", n.job_id}, {"hints", hints}, {"options", n.options}};
    return json_text(j, 2) + "\n";
}

Parsed<PendingNote> read_pending_note(const std::string &state_dir, std::uint32_t job_id) {
    const std::string path = state_paths::pending_note(state_dir, job_id);
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        return InputError{"pending note", path, "the note of a job the select plugin saw wait",
                          "", 0};
    auto text = read_text_file(path, 16u << 20);
    if (!text)
        return text.error();
    return parse_pending_note(text.value(), path);
}

void write_pending_note(const std::string &state_dir, const PendingNote &n) {
    const std::string path = state_paths::pending_note(state_dir, n.job_id);
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    write_text_file_atomically(path, dump_pending_note(n));
}

void remove_pending_note(const std::string &state_dir, std::uint32_t job_id) {
    std::error_code ec;
    std::filesystem::remove(state_paths::pending_note(state_dir, job_id), ec);
}

}  // namespace slurm_ai
