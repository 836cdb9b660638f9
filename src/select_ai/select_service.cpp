#include "slurm_ai/select_service.hpp"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "slurm_ai/cluster_files.hpp"
#include "slurm_ai/hostlist.hpp"
#include "slurm_ai/topology_file.hpp"

namespace slurm_ai {
namespace {

using nlohmann::json;

double now_s() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

// Writes next to the target and renames over it, so a reader never sees half a file.
void write_atomically(const std::filesystem::path &target, const std::string &text) {
    auto tmp = target;
    tmp += ".tmp." + std::to_string(getpid());
    {
        std::ofstream out(tmp, std::ios::trunc);
        out << text << '\n';
        out.flush();
        if (!out)
            throw std::runtime_error("cannot write " + tmp.string());
    }
    std::filesystem::rename(tmp, target);
}

}  // namespace

struct SelectService::Loaded {
    PluginConfig config;
    ClusterGraph graph;
    std::unique_ptr<PlacementEngine> engine;
    std::vector<int> host_of_node;  // Slurm node index -> host, -1 outside the fabric
    std::vector<int> node_of_host;  // host -> Slurm node index, -1 unknown to Slurm
};

SelectService::SelectService() = default;
SelectService::~SelectService() = default;

bool SelectService::ready() const {
    return loaded_ != nullptr;
}
const PluginConfig *SelectService::config() const {
    return loaded_ ? &loaded_->config : nullptr;
}

std::optional<std::string> SelectService::load(const std::string &conf_path,
                                               const std::string &default_fabric,
                                               const std::vector<std::string> &slurm_nodes) {
    PluginConfig cfg;
    if (std::filesystem::exists(conf_path)) {
        auto parsed = load_plugin_config(conf_path, default_fabric);
        if (!parsed)
            return parsed.error().message();
        cfg = std::move(parsed).value();
    } else {
        cfg.cluster.fabric = default_fabric;
        cfg.source = conf_path + " (absent: defaults)";
    }
    auto graph = load_cluster(cfg.cluster);
    if (!graph)
        return graph.error().message();
    auto l = std::unique_ptr<Loaded>(
        new Loaded{std::move(cfg), std::move(graph).value(), nullptr, {}, {}});
    l->engine = std::make_unique<PlacementEngine>(l->graph, l->config.cost, l->config.risk,
                                                  l->config.engine);
    l->host_of_node.assign(slurm_nodes.size(), -1);
    l->node_of_host.assign(l->graph.host_count(), -1);
    int known = 0;
    for (std::size_t i = 0; i < slurm_nodes.size(); ++i) {
        int h = l->graph.host_index(slurm_nodes[i]);
        l->host_of_node[i] = h;
        if (h >= 0) {
            l->node_of_host[h] = static_cast<int>(i);
            ++known;
        }
    }
    if (known == 0 && !slurm_nodes.empty())
        return "no node of slurm.conf is a host of the fabric " + l->config.cluster.fabric;
    loaded_ = std::move(l);
    return std::nullopt;
}

SelectOutcome SelectService::decide(const SelectJob &job, std::span<const SelectNode> nodes) {
    SelectOutcome out;
    auto fallback = [&](std::string reason, bool worth_logging) {
        out.kind = SelectOutcome::Kind::kPassthrough;
        out.reason = std::move(reason);
        out.log_reason = worth_logging && fallback_logged_.insert(job.job_id).second;
        return out;
    };
    if (!loaded_)
        return fallback("no topology loaded", true);
    Loaded &l = *loaded_;
    if (l.config.policy == "passthrough")
        return fallback("Policy=passthrough", false);

    auto read = hints_from_spank_env(job.env);
    if (!read.errors.empty())
        return fallback("invalid hint: " + read.errors.front().message(), true);
    JobHints hints = read.hints;
    const bool has_hints = !hints.empty();
    const bool multi_node = job.min_nodes > 1;
    if (!has_hints) {
        if (job.total_gpus == 0 && !multi_node)
            return fallback("single-node job without GPUs or hints", false);
        if (multi_node && !l.config.multi_node_best_fit)
            return fallback("MultiNodeBestFit=no", false);
        if (!multi_node && !l.config.single_node_gpus)
            return fallback("SingleNodeGpus=no", false);
    }
    if (!hints.comm && l.config.default_comm && (multi_node || job.total_gpus > 1))
        hints.comm = l.config.default_comm;
    std::optional<TaskDag> dag;
    if (hints.dag) {
        auto parsed = parse_task_dag(*hints.dag, kDagEnvName);
        if (!parsed)
            return fallback("invalid task DAG: " + parsed.error().message(), true);
        dag = std::move(*parsed);
    }
    JobDemand demand = make_demand(
        JobRequest{job.min_nodes, job.max_nodes, job.gpus_per_node, job.total_gpus, job.tasks},
        hints, std::move(dag));
    demand.pending_s = job.pending_s;

    ClusterState state(l.graph);
    const double t = now_s();
    std::fill(state.usable.begin(), state.usable.end(), 0);
    int candidates = 0;
    for (std::size_t i = 0; i < nodes.size() && i < l.host_of_node.size(); ++i) {
        int h = l.host_of_node[i];
        if (h < 0 || !nodes[i].usable)
            continue;
        state.usable[h] = 1;
        state.free_gpus[h] &= nodes[i].free_gpus;
        state.weight[h] = nodes[i].weight;
        ++candidates;
    }
    for (const auto &[name, hist] : failures_)
        if (int h = l.graph.host_index(name); h >= 0)
            state.failures[h] = failures(name, t);
    if (candidates == 0)
        return fallback("no candidate node is a host of the fabric", true);

    auto decision = l.engine->place(demand, state, l.config.policy);
    if (decision.wait) {
        out.kind = SelectOutcome::Kind::kWait;
        out.reason = decision.reason;
        return out;
    }
    if (!decision.placement)
        return fallback("engine: " + decision.reason, false);
    const Placement &p = *decision.placement;
    out.kind = SelectOutcome::Kind::kPlaced;
    out.gpus = p.gpus;
    for (int h : p.hosts)
        out.nodes.push_back(l.node_of_host[h]);
    // The widening step: every candidate under the lowest switch spanning the choice.
    std::set<int> leaves;
    for (int h : p.hosts)
        leaves.insert(l.graph.host_leaf(h));
    int span = -1;
    for (int sw : l.graph.switch_nodes()) {
        auto below = l.graph.leaves_below(sw);
        std::set<int> b(below.begin(), below.end());
        if (std::includes(b.begin(), b.end(), leaves.begin(), leaves.end()) &&
            (span < 0 || l.graph.switch_level(sw) < l.graph.switch_level(span)))
            span = sw;
    }
    if (span >= 0)
        for (int leaf : l.graph.leaves_below(span))
            for (int h : l.graph.hosts_at_leaf(leaf))
                if (state.usable[h] && l.node_of_host[h] >= 0)
                    out.widen.push_back(l.node_of_host[h]);

    char summary[256];
    std::snprintf(summary, sizeof summary, "placed by %s on %s: %.4g s/step comm, efficiency %.2f",
                  l.config.policy.c_str(), host_list(l.graph, p).c_str(), p.comm_s, p.efficiency);
    out.reason = summary;
    json d{{"policy", l.config.policy},
           {"nodes", host_list(l.graph, p)},
           {"ranks", gpu_list(l.graph, p)},
           {"comm_s", p.comm_s},
           {"lower_bound_s", p.lower_bound_s},
           {"efficiency", p.efficiency},
           {"risk_per_day", p.risk},
           {"algorithm", p.algorithm},
           {"decision_ms", p.decision_ms},
           {"pattern", demand.dag ? "dag" : std::string(to_string(demand.comm.pattern))},
           {"bytes", demand.comm.bytes}};
    decisions_[job.job_id] = d.dump();
    return out;
}

std::string SelectService::record(const std::string &state_dir, std::uint32_t job_id,
                                  const std::string &nodes, const std::string &gpus,
                                  const std::vector<const char *> &env,
                                  const std::string &stock_nodes) {
    if (state_dir.empty())
        throw std::runtime_error("StateSaveLocation is not set");
    auto dir = std::filesystem::path(state_dir) / "ai_select" / "jobs";
    auto path = dir / (std::to_string(job_id) + ".json");
    // Called again for running jobs when slurmctld restarts: the record written at the
    // job's start stays, decision and all.
    if (!decisions_.count(job_id) && std::filesystem::exists(path))
        return {};
    auto read = hints_from_spank_env(env);
    json rec{{"job_id", job_id}, {"nodes", nodes}, {"gpus", gpus}, {"hints", read.hints}};
    rec["hint_errors"] = json::array();
    for (const auto &e : read.errors)
        rec["hint_errors"].push_back(e.message());
    std::string summary;
    if (auto it = decisions_.find(job_id); it != decisions_.end()) {
        rec["decision"] = json::parse(it->second);
        const auto &d = rec["decision"];
        char buf[256];
        std::snprintf(buf, sizeof buf, "ai: %s placed %s, %.4g s/step comm, efficiency %.2f",
                      d["policy"].get<std::string>().c_str(), nodes.c_str(),
                      d["comm_s"].get<double>(), d["efficiency"].get<double>());
        summary = buf;
        decisions_.erase(it);
    } else {
        rec["decision"] = nullptr;
        summary = "ai: placed by cons_tres on " + nodes;
    }
    if (fallback_logged_.count(job_id))
        rec["fell_back"] = true;
    if (!stock_nodes.empty())
        rec["cons_tres_would_choose"] = stock_nodes;
    rec["recorded_at"] = static_cast<long long>(now_s());
    std::filesystem::create_directories(dir);
    write_atomically(path, rec.dump(2));
    return summary;
}

void SelectService::forget(std::uint32_t job_id) {
    decisions_.erase(job_id);
    fallback_logged_.erase(job_id);
}

void SelectService::note_failure(const std::string &node, double t) {
    // A node still down when slurmctld restarts is seen going down again: one failure
    // within an hour counts once.
    if (auto it = failures_.find(node); it != failures_.end() && t - it->second.at_s < 3600)
        return;
    auto &h = failures_[node];
    h.count = failures(node, t) + 1;
    h.at_s = t;
}

double SelectService::failures(const std::string &node, double t) const {
    auto it = failures_.find(node);
    if (it == failures_.end())
        return 0;
    return it->second.count * std::exp2(-(t - it->second.at_s) / kFailureHalfLifeS);
}

std::optional<std::string> SelectService::save_state(const std::string &dir) const {
    json j{{"version", 1}, {"failures", json::object()}};
    for (const auto &[name, h] : failures_)
        j["failures"][name] = {{"count", h.count}, {"at", h.at_s}};
    try {
        write_atomically(std::filesystem::path(dir) / "ai_select_state.json", j.dump(1));
    } catch (const std::exception &e) {
        return e.what();
    }
    return std::nullopt;
}

std::optional<std::string> SelectService::restore_state(const std::string &dir) {
    auto path = (std::filesystem::path(dir) / "ai_select_state.json").string();
    if (!std::filesystem::exists(path))
        return std::nullopt;  // a first start
    auto text = read_text_file(path, 64u << 20);
    if (!text)
        return text.error().message();
    std::map<std::string, History> restored;
    try {
        auto j = json::parse(text.value());
        if (j.value("version", 0) != 1)
            return path + ": unknown version " + j.value("version", json()).dump() +
                   "; starting clean";
        for (const auto &[name, h] : j.at("failures").items())
            restored[name] = History{h.at("count").get<double>(), h.at("at").get<double>()};
    } catch (const std::exception &e) {
        return path + ": corrupt (" + std::string(e.what()).substr(0, 120) + "); starting clean";
    }
    failures_ = std::move(restored);
    return std::nullopt;
}

}  // namespace slurm_ai
