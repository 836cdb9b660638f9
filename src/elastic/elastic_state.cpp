#include "slurm_ai/elastic/elastic_state.hpp"

#include <charconv>

#include <nlohmann/json.hpp>

#include "slurm_ai/common/json_number.hpp"
#include "slurm_ai/common/json_text.hpp"

namespace slurm_ai {
namespace {

using nlohmann::json;

constexpr std::string_view kDeadlineKey = "ai-expand deadline=";

template <class T>
T number(std::string_view text) {
    T v{};
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    return ec == std::errc() && end == text.data() + text.size() ? v : T{};
}

}  // namespace

std::string dump_elasticd_state(const ElasticdState &s) {
    json j{{"version", 1},
           {"grows", json::array()},
           {"last_resize", json::object()},
           {"gangs_released", s.gangs_released},
           {"failures_handled", s.failures_handled}};
    for (const auto &g : s.grows)
        j["grows"].push_back({{"job_id", g.job_id},
                              {"expansion_id", g.expansion_id},
                              {"add", g.add},
                              {"nodes_before", g.nodes_before},
                              {"deadline", g.deadline},
                              {"reason", g.reason}});
    for (const auto &[job, t] : s.last_resize)
        j["last_resize"][std::to_string(job)] = t;
    return json_text(j, 1) + "\n";
}

Parsed<ElasticdState> parse_elasticd_state(std::string_view text, std::string_view source) {
    auto bad = [&](std::string field, std::string value, std::string expected) {
        return InputError{std::move(field), std::move(value), std::move(expected),
                          std::string(source), 0};
    };
    json j = json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object())
        return bad("state", std::string(text.substr(0, 40)), "a JSON object");
    if (j.value("version", 0) != 1)
        return bad("version", j.value("version", json()).dump(), "1");
    try {
        ElasticdState s;
        for (const auto &g : j.at("grows"))
            s.grows.push_back(
                {json_whole<std::uint32_t>(g, "job_id"),
                 json_whole<std::uint32_t>(g, "expansion_id"), json_whole<std::uint32_t>(g, "add"),
                 json_whole<std::uint32_t>(g, "nodes_before"),
                 json_whole<std::int64_t>(g, "deadline"), g.value("reason", std::string())});
        for (const auto &[job, t] : j.at("last_resize").items()) {
            auto id = number<std::uint32_t>(job);
            if (id == 0)
                return bad("last_resize", job, "job ids as keys");
            s.last_resize[id] = json_whole_value<std::int64_t>(t, "last_resize");
        }
        s.gangs_released = j.at("gangs_released").get<std::set<std::string>>();
        s.failures_handled = json_whole_set<std::uint32_t>(j, "failures_handled");
        return s;
    } catch (const json::exception &e) {
        return bad("state", std::string(text.substr(0, 40)),
                   std::string("grows, last_resize, gangs_released and failures_handled (") +
                       e.what() + ")");
    }
}

std::string expansion_job_name(std::uint32_t job_id) {
    return std::string(kExpansionJobPrefix) + std::to_string(job_id);
}

std::uint32_t expanded_job_of(std::string_view job_name) {
    if (!job_name.starts_with(kExpansionJobPrefix))
        return 0;
    return number<std::uint32_t>(job_name.substr(kExpansionJobPrefix.size()));
}

std::string expansion_comment(std::int64_t deadline) {
    return std::string(kDeadlineKey) + std::to_string(deadline);
}

std::int64_t expansion_deadline(std::string_view comment) {
    auto at = comment.find(kDeadlineKey);
    if (at == std::string_view::npos)
        return 0;
    auto rest = comment.substr(at + kDeadlineKey.size());
    auto end = rest.find_first_not_of("0123456789");
    return number<std::int64_t>(rest.substr(0, end));
}

}  // namespace slurm_ai
