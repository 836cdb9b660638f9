// ai-place: where would the suite place a job, and where would Slurm? Reads a cluster
// (fabric + node topologies), what is busy in it, and a job (Slurm's numbers plus the
// same --ai-* options sbatch takes), and prints for each policy the hosts, the GPUs in
// rank order, the predicted communication time per step, the efficiency against the
// job's ideal placement on an empty cluster, and the failure risk.
// Exit status: 0 placed (by the first policy asked), 1 bad input, 2 bad usage, 3 the job
// does not fit or waits.
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "bad_input.hpp"

#include "slurm_ai/common/hostlist.hpp"
#include "slurm_ai/placement/placement_engine.hpp"
#include "slurm_ai/topology/cluster_files.hpp"

using nlohmann::json;
using namespace slurm_ai;

namespace {

using cli::BadInput;
using cli::take;

struct Args {
    ClusterFiles cluster;
    std::vector<std::string> busy, busy_gpus, failures, uplink_load;
    std::string nodes = "1";
    std::uint32_t gpus_per_node = 0, gpus = 0, tasks = 1, pending = 0;
    std::string comm, dag, locality;
    std::vector<std::string> policies;
    double budget_ms = 5, risk_weight = -1;
    std::uint64_t seed = 1;
    bool json = false, timing = false;
};

std::vector<int> hosts_of(const ClusterGraph &g, const std::string &expr,
                          const std::string &field) {
    return take(g.parse_hosts(expr, field));
}

// "HOSTLIST=VALUE" or "HOSTLIST:VALUE" split at the last separator.
std::pair<std::string, std::string> split_spec(const std::string &spec, char sep,
                                               const std::string &field) {
    auto at = spec.rfind(sep);
    if (at == std::string::npos || at == 0 || at + 1 == spec.size())
        throw BadInput{field + "='" + spec + "': expected HOSTS" + sep + "VALUE"};
    return {spec.substr(0, at), spec.substr(at + 1)};
}

double number(const std::string &text, const std::string &field, double lo, double hi) {
    try {
        std::size_t used = 0;
        double v = std::stod(text, &used);
        if (used == text.size() && v >= lo && v <= hi)
            return v;
    } catch (const std::exception &) {
    }
    throw BadInput{
        fmt::format("{}='{}': expected a number from {:g} to {:g}", field, text, lo, hi)};
}

ClusterState occupancy(const ClusterGraph &g, const Args &a) {
    ClusterState s(g);
    for (const auto &expr : a.busy)
        for (int h : hosts_of(g, expr, "--busy")) {
            s.free_gpus[h] = 0;
            s.usable[h] = 0;
        }
    for (const auto &spec : a.busy_gpus) {
        auto [hosts, list] = split_spec(spec, ':', "--busy-gpus");
        for (int h : hosts_of(g, hosts, "--busy-gpus")) {
            std::size_t pos = 0;
            while (pos <= list.size()) {
                auto comma = list.find(',', pos);
                auto item =
                    list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
                int gpu = static_cast<int>(number(item, "--busy-gpus GPU", 0,
                                                  static_cast<double>(g.node(h).gpus.size()) - 1));
                s.free_gpus[h] &= ~(GpuMask{1} << gpu);
                if (comma == std::string::npos)
                    break;
                pos = comma + 1;
            }
        }
    }
    for (const auto &spec : a.failures) {
        auto [hosts, count] = split_spec(spec, '=', "--failures");
        for (int h : hosts_of(g, hosts, "--failures"))
            s.failures[h] = number(count, "--failures COUNT", 0, 1e6);
    }
    for (const auto &spec : a.uplink_load) {
        auto [sw, load] = split_spec(spec, '=', "--uplink-load");
        int n = g.fabric().find(sw);
        if (n < 0 || !g.fabric().nodes[n].is_switch)
            throw BadInput{"--uplink-load='" + sw + "': expected a switch of the fabric"};
        s.uplink_load[n] = number(load, "--uplink-load SHARE", 0, 0.99);
    }
    return s;
}

JobDemand demand_of(const Args &a) {
    JobRequest r;
    auto dash = a.nodes.find('-');
    r.min_nodes = static_cast<std::uint32_t>(number(a.nodes.substr(0, dash), "--nodes", 1, 1e6));
    r.max_nodes = dash == std::string::npos
                      ? r.min_nodes
                      : static_cast<std::uint32_t>(
                            number(a.nodes.substr(dash + 1), "--nodes MAX", r.min_nodes, 1e6));
    r.gpus_per_node = a.gpus_per_node;
    r.total_gpus = a.gpus ? a.gpus : a.gpus_per_node * r.min_nodes;
    r.tasks = a.tasks;
    JobHints hints;
    for (auto [opt, value] : {std::pair{"ai-comm", &a.comm}, std::pair{"ai-locality", &a.locality}})
        if (!value->empty())
            if (auto err = apply_hint(hints, opt, *value))
                throw BadInput{err->message()};
    std::optional<TaskDag> dag;
    if (!a.dag.empty())
        dag = take(load_task_dag(a.dag));
    JobDemand d = make_demand(r, hints, std::move(dag));
    d.pending_s = a.pending;
    return d;
}

std::string describe(const JobDemand &d) {
    std::string shape =
        d.total_gpus == 0 ? fmt::format("{} hosts", d.min_nodes)
        : d.gpus_per_node
            ? fmt::format("{} nodes x {} GPUs", d.min_nodes, d.gpus_per_node)
            : fmt::format("{} GPUs on {}-{} nodes", d.total_gpus, d.min_nodes, d.max_nodes);
    std::string comm =
        d.dag ? fmt::format("task DAG of {} tasks", d.dag->tasks.size())
              : fmt::format("{} of {}", to_string(d.comm.pattern), format_size(d.comm.bytes));
    return shape + ", " + comm;
}

int run(const Args &a) {
    auto graph = take(load_cluster(a.cluster));
    EngineOptions opt;
    opt.time_budget_ms = a.budget_ms;
    opt.seed = a.seed;
    if (a.risk_weight >= 0)
        opt.risk_weight = a.risk_weight;
    PlacementEngine engine(graph, {}, {}, opt);
    auto state = occupancy(graph, a);
    auto demand = demand_of(a);
    auto policies = a.policies.empty() ? PlacementEngine::policies() : a.policies;
    for (const auto &p : policies)
        if (!PlacementEngine::known_policy(p))
            throw BadInput{"--policy='" + p +
                           "': expected one of engine, engine-norisk, "
                           "tree-bestfit, slurm-default, random"};

    json out{{"job", describe(demand)},
             {"lower_bound_s", engine.lower_bound(demand)},
             {"policies", json::array()}};
    std::string text =
        fmt::format("job: {}\nlower bound (ideal placement, empty cluster): {:.6f} s per step\n",
                    describe(demand), engine.lower_bound(demand));
    int status = 0;
    for (std::size_t i = 0; i < policies.size(); ++i) {
        auto d = engine.place(demand, state, *make_policy(policies[i]));
        json j{{"policy", policies[i]}};
        if (!d.placement) {
            j["placed"] = false;
            j["wait"] = d.wait;
            j["reason"] = d.reason;
            text += fmt::format("\n{:<14} {}: {}\n", policies[i], d.wait ? "waits" : "no placement",
                                d.reason);
            if (i == 0)
                status = 3;
        } else {
            const Placement &p = *d.placement;
            j["placed"] = true;
            j["hosts"] = host_list(graph, p);
            j["ranks"] = gpu_list(graph, p);
            j["comm_s"] = p.comm_s;
            j["efficiency"] = p.efficiency;
            j["risk_per_day"] = p.risk;
            j["algorithm"] = p.algorithm;
            if (a.timing)
                j["decision_ms"] = p.decision_ms;
            text += fmt::format(
                "\n{:<14} hosts {}\n{:<14} ranks {}\n{:<14} comm {:.6f} s/step, "
                "efficiency {:.3f}, risk {:.3g}/day, {}{}\n",
                policies[i], host_list(graph, p), "", gpu_list(graph, p), "", p.comm_s,
                p.efficiency, p.risk, p.algorithm,
                a.timing ? fmt::format(", decided in {:.3f} ms", p.decision_ms) : "");
        }
        out["policies"].push_back(j);
    }
    std::cout << (a.json ? out.dump(2) + "\n" : text);
    return status;
}

}  // namespace

int main(int argc, char **argv) {
    CLI::App app{"ai-place: place a job with the suite's engine and with Slurm's policies"};
    Args a;
    app.add_option("--fabric", a.cluster.fabric, "topology.conf or ibnetdiscover output")
        ->required()
        ->check(CLI::ExistingFile);
    app.add_option("--map", a.cluster.guid_map, "GUID-to-hostname map")->check(CLI::ExistingFile);
    app.add_option("--node", a.cluster.nodes,
                   "Node topology (hwloc or NCCL XML) for every host: FILE, or HOSTLIST=FILE")
        ->allow_extra_args(false);
    app.add_option("--busy", a.busy, "Hosts that are fully busy (hostlist); repeatable")
        ->allow_extra_args(false);
    app.add_option("--busy-gpus", a.busy_gpus, "Busy GPUs: HOSTLIST:0,1,...; repeatable")
        ->allow_extra_args(false);
    app.add_option("--failures", a.failures, "Recent failures: HOSTLIST=COUNT; repeatable")
        ->allow_extra_args(false);
    app.add_option("--uplink-load", a.uplink_load,
                   "Share of a switch's uplinks other jobs use: SWITCH=0.5; repeatable")
        ->allow_extra_args(false);
    app.add_option("-N,--nodes", a.nodes, "Nodes: N or MIN-MAX (default 1)");
    app.add_option("--gpus-per-node", a.gpus_per_node, "GPUs on every node");
    app.add_option("--gpus", a.gpus, "GPUs in total");
    app.add_option("-n,--ntasks", a.tasks, "Tasks");
    app.add_option("--ai-comm", a.comm, "Communication pattern, as sbatch --ai-comm");
    app.add_option("--ai-dag", a.dag, "Task DAG file, as sbatch --ai-dag")
        ->check(CLI::ExistingFile);
    app.add_option("--ai-locality", a.locality, "hard or soft[:WAIT], as sbatch --ai-locality");
    app.add_option("--pending", a.pending, "Seconds the job has waited already");
    app.add_option("--policy", a.policies,
                   "engine, engine-norisk, tree-bestfit, slurm-default, random (default: all)")
        ->allow_extra_args(false);
    app.add_option("--budget-ms", a.budget_ms, "The engine's time budget per decision");
    app.add_option("--risk-weight", a.risk_weight, "Weight of the failure risk in the objective");
    app.add_option("--seed", a.seed, "Seed of the random policy");
    app.add_flag("--timing", a.timing, "Show how long each decision took");
    app.add_flag("--json", a.json, "Print JSON");
    CLI11_PARSE(app, argc, argv);
    try {
        return run(a);
    } catch (const BadInput &e) {
        std::cerr << "ai-place: " << e.message << '\n';
        return 1;
    } catch (const std::exception &e) {
        std::cerr << "ai-place: internal error: " << e.what() << '\n';
        return 1;
    }
}
