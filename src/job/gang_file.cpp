#include "slurm_ai/job/gang_file.hpp"

#include <filesystem>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "slurm_ai/common/enum_names.hpp"
#include "slurm_ai/common/file_io.hpp"
#include "slurm_ai/common/json_text.hpp"
#include "slurm_ai/common/state_paths.hpp"

namespace slurm_ai {

using nlohmann::json;

namespace {
// The file's words for each state, in the enum's order.
constexpr std::string_view kStateNames[] = {"waiting", "timed_out", "starting", "started"};
}  // namespace

std::string_view to_string(GangState s) {
    return enum_name(s, kStateNames);
}

std::optional<GangState> gang_state_from(std::string_view text) {
    return enum_from_name<GangState>(text, kStateNames);
}

std::string gang_file_path(const std::string &state_dir) {
    return state_paths::gangs(state_dir);
}

void to_json(json &j, const GangRecord &g) {
    j = json{{"key", g.key},
             {"user_id", g.user_id},
             {"name", g.spec.name},
             {"size", g.spec.size},
             {"timeout_s", g.spec.timeout_s},
             {"onfail", g.spec.keep_on_failure ? "keep" : "kill"},
             {"members", g.members},
             {"status", to_string(g.state)},
             {"reason", g.reason},
             {"deadline", g.deadline},
             {"updated", g.updated}};
}

void from_json(const json &j, GangRecord &g) {
    g = GangRecord{};
    g.key = j.at("key").get<std::string>();
    g.user_id = j.at("user_id").get<std::uint32_t>();
    g.spec.name = j.at("name").get<std::string>();
    g.spec.size = j.at("size").get<std::uint32_t>();
    g.spec.timeout_s = j.value("timeout_s", std::uint32_t{0});
    g.spec.keep_on_failure = j.value("onfail", std::string("kill")) == "keep";
    g.members = j.value("members", std::set<std::uint32_t>{});
    const auto status = j.at("status").get<std::string>();
    auto state = gang_state_from(status);
    if (!state)
        throw std::invalid_argument("status='" + status +
                                    "': expected waiting, timed_out, starting or started");
    g.state = *state;
    g.reason = j.value("reason", std::string());
    g.deadline = j.value("deadline", std::int64_t{0});
    g.updated = j.value("updated", std::int64_t{0});
}

Parsed<std::vector<GangRecord>> read_gang_file(const std::string &state_dir) {
    const std::string path = gang_file_path(state_dir);
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        return std::vector<GangRecord>{};
    auto text = read_text_file(path, 64u << 20);
    if (!text)
        return text.error();
    try {
        json j = json::parse(text.value());
        for (const auto &g : j.at("gangs"))
            if (auto status = g.value("status", std::string()); !gang_state_from(status))
                return InputError{"status", status, "waiting, timed_out, starting or started", path,
                                  0};
        return j.at("gangs").get<std::vector<GangRecord>>();
    } catch (const std::exception &e) {
        return InputError{"gangs", std::string(e.what()).substr(0, 160),
                          "a gang file as select/ai_cons_tres writes it", path, 0};
    }
}

void write_gang_file(const std::string &state_dir, std::span<const GangRecord> gangs) {
    const std::string path = gang_file_path(state_dir);
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    json j{{"version", 1}, {"gangs", json::array()}};
    for (const auto &g : gangs)
        j["gangs"].push_back(g);
    write_text_file_atomically(path, json_text(j, 1) + "\n");
}

}  // namespace slurm_ai
