#include "slurm_ai/job/job_options.hpp"

#include <algorithm>
#include <string>
#include <string_view>

namespace slurm_ai {

JobOptions decode_job_options(std::span<const char *const> env) {
    JobOptions o;
    for (const char *entry : env) {
        auto read = read_spank_env_entry(entry ? entry : "");
        if (!read)
            continue;
        if (read->option == kDagEnvName) {
            o.hints.dag = std::string(read->value);
            continue;
        }
        o.typed[std::string(read->option)] = std::string(read->value);
        if (auto err = apply_hint(o.hints, read->option, read->value))
            o.errors.push_back(std::move(*err));
    }
    if (o.hints.dag) {
        auto parsed = parse_task_dag(*o.hints.dag, kDagEnvName);
        if (parsed)
            o.dag = std::move(parsed).value();
        else
            o.dag_error = parsed.error();
    }
    return o;
}

std::uint64_t env_fingerprint(std::span<const char *const> env) {
    // FNV-1a over the entries, each closed by a byte no entry holds.
    std::uint64_t h = 14695981039346656037ull;
    auto mix = [&h](unsigned char c) {
        h ^= c;
        h *= 1099511628211ull;
    };
    for (const char *entry : env) {
        for (const char *p = entry ? entry : ""; *p; ++p)
            mix(static_cast<unsigned char>(*p));
        mix(0);
    }
    return h;
}

const JobOptions &JobOptionsCache::get(std::uint32_t job_id, std::span<const char *const> env) {
    const std::uint64_t fp = env_fingerprint(env);
    ++use_clock_;
    if (auto it = entries_.find(job_id); it != entries_.end() && it->second.fingerprint == fp) {
        it->second.used = use_clock_;
        return it->second.options;
    }
    if (entries_.size() >= kMaxJobs && !entries_.count(job_id)) {
        // Drop the half used longest ago (jobs that ended without a job_fini).
        std::vector<std::uint64_t> uses;
        uses.reserve(entries_.size());
        for (const auto &[id, e] : entries_)
            uses.push_back(e.used);
        std::nth_element(uses.begin(), uses.begin() + uses.size() / 2, uses.end());
        const std::uint64_t median = uses[uses.size() / 2];
        std::erase_if(entries_, [median](const auto &kv) { return kv.second.used <= median; });
    }
    Entry &e = entries_[job_id];
    e.fingerprint = fp;
    e.used = use_clock_;
    e.options = decode_job_options(env);
    ++decodes_;
    return e.options;
}

void JobOptionsCache::forget(std::uint32_t job_id) {
    entries_.erase(job_id);
}

}  // namespace slurm_ai
