// A job and a free view made of bytes, as fuzz_select_decide makes them: the one decoding,
// used by the fuzz target and by the unit test that replays its kept regressions.
//   byte 0: job id; 1: min nodes (1-16); 2: max - min (0-3); 3: GPUs per node (0-5);
//   4: total GPUs (odd: per node x nodes, even: half the byte); 5: tasks (1-64);
//   6: seconds pending / 10; 7: the view's pattern; then the SPANK environment, a line
//   per entry.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "slurm_ai/select_ai/select_service.hpp"

namespace slurm_ai::fuzz {

struct DecideInput {
    SelectJob job;  // job.env points into lines: keep the two together
    std::vector<SelectNode> view;
    std::vector<std::string> lines;
};

// Nothing for fewer than 8 bytes.
inline std::optional<DecideInput> decide_input(std::string_view bytes, std::size_t node_count) {
    if (bytes.size() < 8)
        return std::nullopt;
    const auto *d = reinterpret_cast<const unsigned char *>(bytes.data());
    DecideInput in;
    SelectJob &job = in.job;
    job.job_id = d[0];
    job.min_nodes = 1 + d[1] % 16;
    job.max_nodes = job.min_nodes + d[2] % 4;
    job.gpus_per_node = d[3] % 6;
    job.total_gpus = d[4] % 2 ? job.gpus_per_node * job.min_nodes : d[4] / 2;
    job.tasks = 1 + d[5] % 64;
    job.pending_s = d[6] * 10u;
    // The free view: a pattern of usable nodes and free GPUs from one byte.
    in.view.resize(node_count);
    for (std::size_t i = 0; i < node_count; ++i) {
        const unsigned bits = (d[7] + i * 37u) % 251u;
        in.view[i].usable = bits % 5 != 0;
        in.view[i].free_gpus = bits % 16;
        in.view[i].weight = 1 + bits % 3;
    }
    std::string_view rest = bytes.substr(8);
    while (!rest.empty()) {
        auto nl = rest.find('\n');
        in.lines.emplace_back(rest.substr(0, nl));
        rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    }
    for (const auto &l : in.lines)
        job.env.push_back(l.c_str());
    return in;
}

}  // namespace slurm_ai::fuzz
