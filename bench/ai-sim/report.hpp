// The evaluation report: runs the scenarios of docs/evaluation.md (see report.cpp) and
// writes the markdown with its tables and the SVG figures. Deterministic: the same build
// and data give the same files, apart from the lines that report wall time.
#pragma once

#include <string>

namespace slurm_ai::sim {

struct ReportOptions {
    std::string markdown;    // file to write
    std::string image_dir;   // directory for the figures
    std::string image_link;  // how the markdown refers to that directory
    std::string json;        // also every figure as JSON here (empty: not)
    int seeds = 20;          // of the failure experiment
    int threads = 2;
    bool quick = false;  // small scenarios, for the test that the command works
};

// 0 on success; 1 with a message on stderr when an input is missing or a file cannot be
// written.
int write_report(const ReportOptions &options);

}  // namespace slurm_ai::sim
