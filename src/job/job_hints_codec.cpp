// A job's hints written to and read from JSON (the per-job record). Their decoding from a
// job's SPANK environment is decode_job_options (job_options.hpp).
#include <string>

#include <nlohmann/json.hpp>

#include "slurm_ai/common/json_number.hpp"
#include "slurm_ai/job/job_hints.hpp"

namespace slurm_ai {

void to_json(nlohmann::json &j, const JobHints &h) {
    j = nlohmann::json::object();
    if (h.comm)
        j["comm"] = *h.comm;
    if (h.dag_file)
        j["dag_file"] = *h.dag_file;
    if (h.dag)
        j["dag_compact_bytes"] = h.dag->size();
    if (h.elastic)
        j["elastic"] = {{"min_nodes", h.elastic->min_nodes},
                        {"max_nodes", h.elastic->max_nodes},
                        {"signal", h.elastic->signal}};
    if (h.gang)
        j["gang"] = {{"name", h.gang->name},
                     {"size", h.gang->size},
                     {"timeout_s", h.gang->timeout_s},
                     {"onfail", h.gang->keep_on_failure ? "keep" : "kill"}};
    if (h.checkpoint)
        j["checkpoint"] = {{"dir", h.checkpoint->dir},
                           {"signal", h.checkpoint->signal},
                           {"signal_before_s", h.checkpoint->signal_before_s},
                           {"keep", h.checkpoint->keep}};
    if (h.locality)
        j["locality"] = {{"mode", h.locality->hard ? "hard" : "soft"},
                         {"wait_s", h.locality->wait_s}};
}

void from_json(const nlohmann::json &j, JobHints &h) {
    h = JobHints{};
    if (j.contains("comm"))
        h.comm = j.at("comm").get<CommSpec>();
    if (j.contains("dag_file"))
        h.dag_file = j.at("dag_file").get<std::string>();
    if (j.contains("elastic")) {
        const auto &e = j.at("elastic");
        h.elastic = ElasticSpec{json_whole<std::uint32_t>(e, "min_nodes"),
                                json_whole<std::uint32_t>(e, "max_nodes"),
                                json_whole<int>(e, "signal", 0)};
    }
    if (j.contains("gang")) {
        const auto &g = j.at("gang");
        h.gang = GangSpec{g.at("name").get<std::string>(), json_whole<std::uint32_t>(g, "size"),
                          json_whole<std::uint32_t>(g, "timeout_s", 0),
                          g.value("onfail", std::string()) == "keep"};
    }
    if (j.contains("checkpoint")) {
        const auto &c = j.at("checkpoint");
        h.checkpoint = CheckpointSpec{c.at("dir").get<std::string>(), json_whole<int>(c, "signal"),
                                      json_whole<std::uint32_t>(c, "signal_before_s"),
                                      json_whole<std::uint32_t>(c, "keep")};
    }
    if (j.contains("locality")) {
        const auto &l = j.at("locality");
        h.locality = LocalitySpec{l.at("mode").get<std::string>() == "hard",
                                  json_whole<std::uint32_t>(l, "wait_s", 0)};
    }
}

}  // namespace slurm_ai
