#include "slurm_ai/checkpoint/recover_run.hpp"

#include <vector>

#include <nlohmann/json.hpp>

#include "slurm_ai/common/json_number.hpp"
#include "slurm_ai/common/json_text.hpp"

namespace slurm_ai::checkpoint {

Parsed<RecoverRun> parse_recover_run(std::string_view text, std::string_view source) {
    using nlohmann::json;
    auto bad = [&](std::string value) {
        return InputError{"run", std::move(value), "ai-recover's record of a job's run",
                          std::string(source), 0};
    };
    try {
        const json j = json::parse(text);
        if (!j.is_object())
            return bad(std::string(text.substr(0, 40)));
        RecoverRun r;
        // A fraction or a number beyond int64 is no StartTime: json_whole refuses it.
        r.run_start = json_whole<std::int64_t>(j, "run_start", 0);
        const auto nodes = j.value("nodes", std::vector<std::string>{});
        r.nodes.insert(nodes.begin(), nodes.end());
        r.signalled = j.value("signalled", false);
        return r;
    } catch (const json::exception &e) {
        return bad(std::string(e.what()).substr(0, 160));
    }
}

std::string dump_recover_run(const RecoverRun &r) {
    const nlohmann::json j{{"run_start", r.run_start},
                           {"nodes", std::vector<std::string>(r.nodes.begin(), r.nodes.end())},
                           {"signalled", r.signalled}};
    return json_text(j) + "\n";
}

}  // namespace slurm_ai::checkpoint
