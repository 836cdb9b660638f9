// ai-sim's tables, as plain text for the terminal and as markdown for the report.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "metrics.hpp"

namespace slurm_ai::sim {

std::string results_table(const std::vector<Summary> &rows, bool markdown);
// Empty when no run met a failure.
std::string failures_table(const std::vector<Summary> &rows, bool markdown);
// Jobs by where their step times came from, per policy.
std::string sources_table(const std::vector<Summary> &rows, bool markdown);
// The paired decisions of a searched policy against engine-norisk, per regime.
std::string paired_table(const std::string &policy, const std::array<PairedTally, kRegimes> &t,
                         bool markdown);
// Every job under every run, a CSV row each: policy, job (its index in `jobs`), GPUs,
// submit, first start and end (s), hosts of its last placement, the first placement's
// hosts, step and ideal step (s) with the fabric to itself, and its contention factor.
std::string jobs_csv(const std::vector<SimJob> &jobs, const std::vector<RunResult> &runs);
// One line: contention, how many jobs are elastic, and what the policy "suite" runs.
std::string suite_line(const SimOptions &o, const Jobs &jobs);

// Writes a file ai-sim produces (a report, a job table, a trained model the select plugin
// loads) with write_output_file: a reader sees the old file or the new one, and
// /dev/stdout stays what it is. The error, naming the file, or nothing.
std::optional<std::string> write_output(const std::string &path, std::string_view text);

}  // namespace slurm_ai::sim
