// --ai-comm: a job's communication pattern and the fields that size it. The fields are
// described once, in comm_fields(); the parser, the printed form, the JSON form of a job's
// record, the option's help text and ai-explain are all made from that table, so a field
// added to CommSpec and to the table is known everywhere at once.
//
// parse_comm is pure: it returns the spec or an InputError naming the field and the
// offending text; it never throws on bad input.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include <nlohmann/json_fwd.hpp>

#include "slurm_ai/common/input_error.hpp"

namespace slurm_ai {

enum class CommPattern { kAllReduce, kPipeline, kTensorParallel, kMoE, kParameterServer, kNone };

// The pattern's name as --ai-comm takes it ("allreduce", "tp"); "?" for no pattern.
std::string_view to_string(CommPattern p);
// The pattern of that name (exactly as to_string writes it), or nothing.
std::optional<CommPattern> comm_pattern_named(std::string_view name);

// --ai-comm=PATTERN[:key=value,...]. Fields a pattern does not use stay 0; 0 also means
// "not given" and lets the placement engine apply its default.
struct CommSpec {
    CommPattern pattern = CommPattern::kAllReduce;
    std::uint64_t bytes = 0;         // bytes exchanged per step by the main collective
    std::uint32_t stages = 0;        // pipeline: number of stages
    std::uint32_t microbatches = 0;  // pipeline: micro-batches per step
    std::uint32_t tp_size = 0;       // tp: tensor-parallel group size
    std::uint32_t experts = 0;       // moe: number of experts
    std::uint32_t servers = 0;       // ps: number of parameter servers
    std::string algo;                // allreduce: ring | tree | hierarchical | auto ("" = auto)
    // The computation of one step on one GPU, ms (0: not given). On n GPUs a step
    // computes compute_ms / n: ai-elasticd's goodput rule weighs resizes with it.
    std::uint32_t compute_ms = 0;
    bool operator==(const CommSpec &) const = default;
};

// How a field's text is read and written.
enum class CommUnit {
    kSize,    // bytes: "64M", "1.5G" (parse_size); printed exactly, in the largest unit
    kCount,   // an integer within [min, max]
    kMillis,  // a time: "250ms", "1.5s", "2" (seconds); kept and printed in ms
    kChoice,  // one of the words of `arg` ("ring|tree|..."); "auto" is kept as ""
};

// One field of CommSpec: one row of the table.
struct CommField {
    std::string_view key;   // after "PATTERN:" in --ai-comm ("size")
    std::string_view json;  // its name in JSON ("tp_size")
    std::string_view arg;   // its value in the help text ("N", "SIZE", "ring|tree|...")
    std::string_view help;  // what the help text says of it, or "" when the key says it
    CommUnit unit;
    std::variant<std::uint64_t CommSpec::*, std::uint32_t CommSpec::*, std::string CommSpec::*>
        member;
    std::uint32_t min = 0, max = 0;  // kCount: the accepted range
    unsigned patterns = 0;           // bit 1 << CommPattern for each pattern that takes it

    bool used_by(CommPattern p) const { return patterns & (1u << static_cast<unsigned>(p)); }
    // Whether `c` gives this field (not 0, not "").
    bool given(const CommSpec &c) const;
};
std::span<const CommField> comm_fields();

Parsed<CommSpec> parse_comm(std::string_view text);
// The spec as --ai-comm takes it: "pipeline:stages=4,bytes=64M"; fields not given are left
// out. parse_comm(to_string(c)) gives c back for every c that parse_comm makes.
std::string to_string(const CommSpec &c);
// The keys of each pattern and what they take, for the option's help text:
// "allreduce[:bytes=SIZE,algo=ring|tree|hierarchical|auto,compute=TIME], ..., none; compute: ...".
std::string comm_help();

// JSON of a job's record: {"pattern": "pipeline", "stages": 4, ...}, fields not given left
// out. from_json throws nlohmann::json::exception on a value of the wrong shape or an
// unknown pattern.
void to_json(nlohmann::json &j, const CommSpec &c);
void from_json(const nlohmann::json &j, CommSpec &c);

}  // namespace slurm_ai
