#include "slurm_ai/gang/gang_file.hpp"

#include <filesystem>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "slurm_ai/common/file_io.hpp"
#include "slurm_ai/common/json_number.hpp"
#include "slurm_ai/common/json_text.hpp"
#include "slurm_ai/common/state_paths.hpp"

namespace slurm_ai {

using nlohmann::json;

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
    g.user_id = json_whole<std::uint32_t>(j, "user_id");
    g.spec.name = j.at("name").get<std::string>();
    g.spec.size = json_whole<std::uint32_t>(j, "size");
    g.spec.timeout_s = json_whole<std::uint32_t>(j, "timeout_s", 0);
    g.spec.keep_on_failure = j.value("onfail", std::string("kill")) == "keep";
    if (j.contains("members"))
        g.members = json_whole_set<std::uint32_t>(j, "members");
    const auto status = j.at("status").get<std::string>();
    auto state = gang_state_from(status);
    if (!state)
        throw std::invalid_argument("status='" + status + "': expected " + gang_state_list());
    g.state = *state;
    g.reason = j.value("reason", std::string());
    g.deadline = json_whole<std::int64_t>(j, "deadline", 0);
    g.updated = json_whole<std::int64_t>(j, "updated", 0);
}

std::string dump_gang_file(std::span<const GangRecord> gangs) {
    json j{{"version", 1}, {"gangs", json::array()}};
    for (const auto &g : gangs)
        j["gangs"].push_back(g);
    return json_text(j, 1) + "\n";
}

Parsed<std::vector<GangRecord>> parse_gang_file(std::string_view text, const std::string &source) {
    try {
        json j = json::parse(text);
        for (const auto &g : j.at("gangs"))
            if (auto status = g.value("status", std::string()); !gang_state_from(status))
                return InputError{"status", status, gang_state_list(), source, 0};
        return j.at("gangs").get<std::vector<GangRecord>>();
    } catch (const std::exception &e) {
        return InputError{"gangs", std::string(e.what()).substr(0, 160),
                          "a gang file as select/ai_cons_tres writes it", source, 0};
    }
}

Parsed<std::vector<GangRecord>> read_gang_file(const std::string &state_dir) {
    const std::string path = gang_file_path(state_dir);
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        return std::vector<GangRecord>{};
    auto text = read_text_file(path, 64u << 20);
    if (!text)
        return text.error();
    return parse_gang_file(text.value(), path);
}

void write_gang_file(const std::string &state_dir, std::span<const GangRecord> gangs) {
    const std::string path = gang_file_path(state_dir);
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    write_text_file_atomically(path, dump_gang_file(gangs));
}

}  // namespace slurm_ai
