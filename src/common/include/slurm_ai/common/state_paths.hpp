// Where the suite keeps its state under slurmctld's StateSaveLocation (`state` below): the
// one place each path is spelled. The select plugin writes under ai_select/ and beside it,
// ai-elasticd under ai_elastic/, ai-recover under ai_recover/; the tools read them there.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace slurm_ai::state_paths {

inline std::filesystem::path select_dir(const std::string &state) {
    return std::filesystem::path(state) / "ai_select";
}
// The record of a job the plugin placed (job_record.hpp).
inline std::string job_record(const std::string &state, std::uint32_t job_id) {
    return (select_dir(state) / "jobs" / (std::to_string(job_id) + ".json")).string();
}
// What the plugin knows of a job that waits (job_record.hpp's PendingNote).
inline std::string pending_note(const std::string &state, std::uint32_t job_id) {
    return (select_dir(state) / "pending" / (std::to_string(job_id) + ".json")).string();
}
// The gangs, for ai-elasticd (gang_file.hpp).
inline std::string gangs(const std::string &state) {
    return (select_dir(state) / "gangs.json").string();
}
// The plugin's failure history (failure_history.hpp; SelectService saves and restores it).
inline std::string select_state(const std::string &state) {
    return (std::filesystem::path(state) / "ai_select_state.json").string();
}

inline std::filesystem::path elastic_dir(const std::string &state) {
    return std::filesystem::path(state) / "ai_elastic";
}
// Where resized jobs find their node list, host file and world size (ElasticViewDir=).
inline std::string elastic_views(const std::string &state) {
    return (elastic_dir(state) / "views").string();
}
// ai-elasticd's own state (elastic_state.hpp).
inline std::string elasticd_state(const std::string &state) {
    return (elastic_dir(state) / "elasticd.json").string();
}

inline std::filesystem::path recover_dir(const std::string &state) {
    return std::filesystem::path(state) / "ai_recover";
}
// A job's restart log (checkpoint_restart_log.hpp).
inline std::string restart_log(const std::string &state, std::uint32_t job_id) {
    return (recover_dir(state) / "jobs" / (std::to_string(job_id) + ".jsonl")).string();
}
// The lock that serialises ai-recover's work on one job.
inline std::string recover_lock(const std::string &state, std::uint32_t job_id) {
    return (recover_dir(state) / "jobs" / (std::to_string(job_id) + ".lock")).string();
}
// What ai-recover remembers of each job's current run (recover_run.hpp): one file a job.
inline std::filesystem::path recover_runs(const std::string &state) {
    return recover_dir(state) / "runs";
}
inline std::string recover_run(const std::string &state, std::uint32_t job_id) {
    return (recover_runs(state) / (std::to_string(job_id) + ".json")).string();
}
// ai-recover's lease book across its restarts (lease.hpp's LeaseBook::saved).
inline std::string lease_book(const std::string &state) {
    return (recover_dir(state) / "leases").string();
}
inline std::string recover_log(const std::string &state) {
    return (recover_dir(state) / "ai-recover.log").string();
}

}  // namespace slurm_ai::state_paths
