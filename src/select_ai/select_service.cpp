#include "slurm_ai/select_ai/select_service.hpp"

#include <algorithm>
#include <filesystem>
#include <set>
#include <unordered_map>

#include "select_service_loaded.hpp"
#include "slurm_ai/common/file_io.hpp"
#include "slurm_ai/common/hostlist.hpp"
#include "slurm_ai/common/state_paths.hpp"
#include "slurm_ai/elastic/elastic_plan.hpp"
#include "slurm_ai/job/job_record.hpp"
#include "slurm_ai/placement/learned_placement.hpp"
#include "slurm_ai/placement/shape_profile.hpp"
#include "slurm_ai/topology/cluster_files.hpp"

namespace slurm_ai {

// RiskModel= and PlacementModel=: each used only where its file records that it won; the
// note says what is in use, and why a model is not.
std::optional<InputError> load_learned(const PluginConfig &config,
                                       std::optional<LearnedRisk> &learned_risk,
                                       EngineOptions &engine, std::string &note) {
    if (!config.risk_model.empty()) {
        auto model = LearnedRisk::load(config.risk_model);
        if (!model)
            return model.error();
        const auto &i = model->info;
        if (i.beats_hand_written) {
            learned_risk = std::move(model).value();
            note = "RiskModel=" + config.risk_model + ": learned placement failure rates in use";
        } else {
            note = "RiskModel=" + config.risk_model +
                   ": not used, it did not beat the hand-written model on its held-out days "
                   "(AUC " + std::to_string(i.auc) + " against " +
                   std::to_string(i.auc_hand_written) + ", log-loss " +
                   std::to_string(i.log_loss) + " against " +
                   std::to_string(i.log_loss_hand_written) +
                   (i.pairs_accuracy && i.pairs_accuracy_hand_written
                        ? ", of two places for a job the spared one rated lower " +
                              std::to_string(*i.pairs_accuracy) + " against " +
                              std::to_string(*i.pairs_accuracy_hand_written)
                        : std::string()) +
                   ")";
        }
    }
    if (!config.placement_model.empty()) {
        auto model = LearnedPlacement::load(config.placement_model);
        if (!model)
            return model.error();
        note += note.empty() ? "" : "; ";
        note += "PlacementModel=" + config.placement_model;
        if (model->info.beats_engine()) {
            engine.placement_model = std::make_shared<LearnedPlacement>(std::move(model).value());
            note += ": the learned placement scorer picks among the engine's candidates";
        } else {
            note += ": refused, its file does not record that it beat the engine at every "
                    "size it was judged at (" + model->info.judged_text() +
                    "); the engine's objective decides";
        }
    }
    return std::nullopt;
}

// ShapeProfile=: read once, here; an error names the file's line.
static std::optional<InputError> load_shapes(const PluginConfig &config, EngineOptions &engine,
                                             std::string &note) {
    if (config.shape_profile.empty())
        return std::nullopt;
    auto profile = load_shape_profile(config.shape_profile);
    if (!profile)
        return profile.error();
    note += note.empty() ? "" : "; ";
    note += "ShapeProfile=" + config.shape_profile + ": " + std::to_string(profile->size()) +
            " measured shapes rate placements before the cost model";
    engine.shape_profile = std::make_shared<ShapeProfile>(std::move(profile).value());
    return std::nullopt;
}

SelectService::SelectService(Clock clock, std::uint32_t work_budget)
    : clock_(std::move(clock)), work_budget_(work_budget) {}
SelectService::~SelectService() = default;

bool SelectService::ready() const {
    return loaded_ != nullptr;
}
const PluginConfig *SelectService::config() const {
    return loaded_ ? &loaded_->config : nullptr;
}

std::optional<InputError> SelectService::load(const std::string &conf_path,
                                              const std::string &default_fabric,
                                              const std::vector<std::string> &slurm_nodes) {
    PluginConfig cfg;
    if (std::filesystem::exists(conf_path)) {
        auto parsed = load_plugin_config(conf_path, default_fabric);
        if (!parsed)
            return parsed.error();
        cfg = std::move(parsed).value();
    } else {
        cfg.cluster.fabric = default_fabric;
        cfg.source = conf_path + " (absent: defaults)";
    }
    auto graph = load_cluster(cfg.cluster);
    if (!graph)
        return graph.error();
    auto l = std::unique_ptr<Loaded>(new Loaded{std::move(cfg), std::move(graph).value(), nullptr,
                                                std::nullopt, {}, {}, std::nullopt});
    std::string note;
    EngineOptions engine = l->config.engine;
    if (auto e = load_learned(l->config, l->learned, engine, note))
        return e;
    if (auto e = load_shapes(l->config, engine, note))
        return e;
    if (work_budget_)
        engine.work_budget = work_budget_;
    l->engine = std::make_unique<PlacementEngine>(l->graph, l->config.cost, l->config.risk,
                                                  engine, clock_);
    l->policy = make_policy(l->config.policy);
    if (!l->policy)  // load_plugin_config accepts only names make_policy knows
        return InputError{"Policy", l->config.policy, "a policy the engine knows", conf_path, 0};
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
        return InputError{"Fabric", l->config.cluster.fabric,
                          "a fabric with at least one node of slurm.conf among its hosts",
                          conf_path, 0};
    loaded_ = std::move(l);
    load_note_ = std::move(note);
    return std::nullopt;
}

SelectOutcome SelectService::decide(const SelectJob &job, std::span<const SelectNode> nodes) {
    SelectOutcome out;
    // A fallback with a class is one the job's record and the log keep (the first time).
    auto fallback = [&](std::string reason, std::optional<FallbackClass> kept) {
        out.kind = SelectOutcome::Kind::kPassthrough;
        out.reason = std::move(reason);
        out.log_reason = kept && fallbacks_.try_emplace(job.job_id, *kept, out.reason).second;
        return out;
    };
    if (!loaded_)
        return fallback("no topology loaded", FallbackClass::kNoTopology);
    Loaded &l = *loaded_;
    if (l.policy->passthrough())
        return fallback("Policy=passthrough", std::nullopt);

    const JobOptions &opts = options(job.job_id, job.env);
    if (!opts.errors.empty())
        return fallback("invalid hint: " + opts.errors.front().message(),
                        FallbackClass::kInvalidHint);
    const JobHints &hints = opts.hints;
    const bool has_hints = !hints.empty();
    const bool multi_node = job.min_nodes > 1;
    if (!has_hints) {
        if (job.total_gpus == 0 && !multi_node)
            return fallback("single-node job without GPUs or hints", std::nullopt);
        if (multi_node && !l.config.multi_node_best_fit)
            return fallback("MultiNodeBestFit=no", std::nullopt);
        if (!multi_node && !l.config.single_node_gpus)
            return fallback("SingleNodeGpus=no", std::nullopt);
    }
    std::string why;
    auto demand = demand_of(job, opts, &why);
    if (!demand)
        return fallback(why, FallbackClass::kDemand);

    // Jobs not tested for a while (cancelled, held, moved) drop out; this one is in.
    const double now = clock_.wall_s();
    std::erase_if(waiting_, [&](const auto &w) { return now - w.second.second > kStillWaiting_s; });
    if (job.total_gpus > 1)
        note_waiting(job.job_id,
                     ClusterState::size_of(static_cast<int>(job.total_gpus), *demand), now);
    std::erase_if(held_, [&](const auto &h) { return now - h.second.second > kStillWaiting_s; });
    if (auto h = held_.find(job.job_id); h != held_.end())
        demand->held_s = static_cast<std::uint32_t>(std::max(0.0, now - h->second.first));
    int candidates = 0;
    ClusterState state = free_view(nodes, &candidates);
    if (candidates == 0)
        return fallback("no candidate node is a host of the fabric", FallbackClass::kOutsideFabric);

    // An elastic job takes as many nodes as fit from its MAX (ElasticStart=goodput: its
    // goodput size) down to its MIN, within slurmctld's node range (elastic_within).
    std::optional<ElasticSpec> elastic;
    if (hints.elastic)
        elastic = elastic_within(*hints.elastic, NodeRange{job.min_nodes, job.max_nodes});
    std::uint32_t lo = demand->min_nodes, hi = demand->min_nodes;
    if (elastic) {
        lo = elastic->min_nodes;
        hi = std::min<std::uint32_t>(elastic->max_nodes, static_cast<std::uint32_t>(candidates));
        if (const auto &c = l.config; c.elastic.start == "goodput")
            hi = goodput_start(*l.engine, *demand, *elastic, hi, c.comm_share,
                               start_gain(state, job.total_gpus, lo * demand->gpus_per_host(),
                                          c.elastic.min_gain));
        hi = std::max(lo, hi);
    }
    // Rigid: the engine's decision. Elastic: the size too (place_sized).
    Decision decision;
    std::uint32_t size = lo;
    if (elastic) {
        auto sized = place_sized(*demand, lo, hi, [&](const JobDemand &d) {
            return l.engine->place(d, state, *l.policy);
        });
        decision = std::move(sized.decision);
        if (sized.nodes) {
            size = sized.nodes;
            *demand = std::move(sized.demand);
        }
    } else {
        decision = l.engine->place(*demand, state, *l.policy);
    }
    if (decision.wait) {
        held_.try_emplace(job.job_id, now, now).first->second.second = now;
        out.kind = SelectOutcome::Kind::kWait;
        out.reason = decision.reason;
        note_pending(job, opts);
        return out;
    }
    if (!decision.placement) {
        note_pending(job, opts);
        return fallback("engine: " + decision.reason, std::nullopt);
    }
    waiting_.erase(job.job_id);
    held_.erase(job.job_id);
    out = placed(job, *demand, *decision.placement, state);
    if (elastic) {
        out.min_nodes = elastic->min_nodes;
        out.max_nodes = elastic->max_nodes;
        out.req_nodes = size;
    }
    return out;
}

std::optional<JobDemand> SelectService::demand_of(const SelectJob &job, const JobOptions &options,
                                                  std::string *why) const {
    const PluginConfig &c = loaded_->config;
    // The configured pattern for a job that names none; the decoded options stay as they
    // are (a copy of them would copy the compacted DAG at every test).
    const JobHints *hints = &options.hints;
    JobHints with_default;
    if (!hints->comm && c.default_comm && (job.min_nodes > 1 || job.total_gpus > 1)) {
        with_default = JobHints{c.default_comm, hints->dag_file,   std::nullopt,   hints->elastic,
                                hints->gang,    hints->checkpoint, hints->locality};
        hints = &with_default;
    }
    if (options.dag_error) {
        *why = "invalid task DAG: " + options.dag_error->message();
        return std::nullopt;
    }
    // Slurm's GPU request is the contract, as its node range is: a DAG that needs more
    // GPUs than the job asked Slurm for cannot run as described, so the engine does not
    // place by it.
    if (options.dag && options.dag->total_gpus() > job.total_gpus) {
        *why = "the task DAG needs " + std::to_string(options.dag->total_gpus()) +
               " GPUs, the job asks Slurm for " + std::to_string(job.total_gpus) +
               " (--gpus, --gpus-per-node or --gpus-per-task)";
        return std::nullopt;
    }
    JobDemand demand = make_demand(
        JobRequest{job.min_nodes, job.max_nodes, job.gpus_per_node, job.total_gpus, job.tasks},
        *hints, options.dag);
    demand.pending_s = job.pending_s;
    demand.time_limit_s = job.time_limit_s;
    return demand;
}

ClusterState SelectService::free_view(std::span<const SelectNode> nodes, int *candidates) const {
    const Loaded &l = *loaded_;
    ClusterState state(l.graph);
    const double t = clock_.wall_s();
    std::fill(state.usable.begin(), state.usable.end(), 0);
    *candidates = 0;
    // Free GPUs and Weight count for every node the adapter looked at (a gang's other
    // members may use nodes the job under test may not); usable only for candidates.
    for (std::size_t i = 0; i < nodes.size() && i < l.host_of_node.size(); ++i) {
        int h = l.host_of_node[i];
        if (h < 0)
            continue;
        state.free_gpus[h] &= nodes[i].free_gpus;
        state.weight[h] = nodes[i].weight;
        state.down[h] = nodes[i].down;
        if (nodes[i].usable) {
            state.usable[h] = 1;
            ++*candidates;
        }
    }
    // The failure history, in one pass: each node's weekly count for the hand-written
    // model, and with RiskModel= the whole of it for the learned one (learned_risk.hpp).
    std::shared_ptr<LearnedRiskView> learned;
    if (l.learned)
        learned = std::make_shared<LearnedRiskView>(LearnedRiskView{&*l.learned, RiskHistory(l.graph, t)});
    for (const auto &[name, hist] : failures_)
        if (int h = l.graph.host_index(name); h >= 0) {
            state.failures[h] = hist.as_of(t).week;
            if (learned)
                learned->history.add(h, hist);
        }
    state.learned = std::move(learned);
    add_uplink_load(state);
    add_sizes(state, t);
    return state;
}

SelectOutcome SelectService::placed(const SelectJob &job, const JobDemand &demand,
                                    const Placement &p, const ClusterState &state) {
    const Loaded &l = *loaded_;
    SelectOutcome out;
    out.kind = SelectOutcome::Kind::kPlaced;
    for (std::size_t i = 0; i < p.hosts.size(); ++i) {
        out.nodes.push_back(l.node_of_host[p.hosts[i]]);
        std::uint64_t mask = 0;
        for (int g : p.gpus[i])
            if (g >= 0 && g < 64)
                mask |= std::uint64_t{1} << g;
        out.gpus.push_back(mask);
    }
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

    const std::string policy = p.policy.empty() ? l.policy->name() : p.policy;
    char summary[256];
    std::snprintf(summary, sizeof summary, "placed by %s on %s: %.4g s/step comm, efficiency %.2f",
                  policy.c_str(), host_list(l.graph, p).c_str(), p.comm_s, p.efficiency);
    out.reason = summary;
    decisions_[job.job_id] =
        JobDecision{policy,
                    host_list(l.graph, p),
                    gpu_list(l.graph, p),
                    p.comm_s,
                    p.lower_bound_s,
                    p.efficiency,
                    p.risk,
                    p.algorithm,
                    p.decision_ms,
                    demand.dag ? "dag" : std::string(to_string(demand.comm.pattern)),
                    demand.comm.bytes};
    return out;
}

// An expansion job is placed for the job it grows: the hosts that keep the grown job's
// communication cheapest, which are the hosts next to its own.
SelectOutcome SelectService::decide_expansion(const SelectJob &job, std::uint32_t expands_job_id,
                                              std::span<const int> expands,
                                              const std::vector<const char *> &expands_env,
                                              std::span<const SelectNode> nodes) {
    SelectOutcome out;
    auto fallback = [&](std::string reason) {
        out.kind = SelectOutcome::Kind::kPassthrough;
        out.reason = "expansion: " + std::move(reason);
        out.log_reason =
            fallbacks_.try_emplace(job.job_id, FallbackClass::kExpansion, out.reason).second;
        return out;
    };
    if (!loaded_)
        return fallback("no topology loaded");
    const Loaded &l = *loaded_;
    if (l.policy->passthrough())
        return fallback("Policy=passthrough");
    const JobOptions &grown_opts = options(expands_job_id, expands_env);
    if (!grown_opts.errors.empty())
        return fallback("the expanded job's hints: " + grown_opts.errors.front().message());
    std::vector<int> current;
    for (int n : expands)
        if (n >= 0 && n < static_cast<int>(l.host_of_node.size()) && l.host_of_node[n] >= 0)
            current.push_back(l.host_of_node[n]);
    if (current.empty())
        return fallback("the expanded job runs on no host of the fabric");
    // The grown job: the expansion job's GPUs on every node, the expanded job's pattern.
    SelectJob grown = job;
    grown.min_nodes = grown.max_nodes = static_cast<std::uint32_t>(current.size());
    grown.total_gpus = job.gpus_per_node * grown.min_nodes;
    std::string why;
    auto demand = demand_of(grown, grown_opts, &why);
    if (!demand)
        return fallback(why);
    int candidates = 0;
    ClusterState state = free_view(nodes, &candidates);
    auto choice = plan_grow(*l.engine, *demand, current, state, static_cast<int>(job.min_nodes));
    if (choice.hosts.empty())
        return fallback(choice.reason);
    JobDemand mine = demand_at_size(*demand, static_cast<std::uint32_t>(choice.hosts.size()));
    Placement p = job_placement(l.graph, mine, choice.hosts, &state);
    l.engine->score(mine, &state, p);
    p.policy = "engine-grow";
    out = placed(job, mine, p, state);
    char grown_by[160];
    std::snprintf(grown_by, sizeof grown_by, "; the grown job: %.4g s/step comm (was %.4g)",
                  choice.comm_after_s, choice.comm_before_s);
    out.reason += grown_by;
    return out;
}

std::optional<ElasticSpec> SelectService::elastic_start(std::uint32_t job_id,
                                                        std::span<const char *const> env,
                                                        NodeRange slurm) {
    const auto &asked = options(job_id, env).hints.elastic;
    if (!asked)
        return std::nullopt;
    return elastic_within(*asked, slurm);
}

std::string SelectService::record(const std::string &state_dir, std::uint32_t job_id,
                                  const std::string &nodes, const std::string &gpus,
                                  const std::vector<const char *> &env, NodeRange slurm) {
    if (state_dir.empty())
        throw std::runtime_error("StateSaveLocation is not set");
    if (loaded_)
        note_running(job_id, nodes, gpus, options(job_id, env));
    // Called again for running jobs when slurmctld restarts: the record written at the
    // job's start stays, decision and all.
    if (!decisions_.count(job_id) && std::filesystem::exists(job_record_path(state_dir, job_id)))
        return {};
    gangs_.member_started(job_id);
    pending_over(job_id);
    remove_pending_note(state_dir, job_id);
    const JobOptions &read = options(job_id, env);
    JobRecord rec;
    rec.job_id = job_id;
    rec.nodes = nodes;
    rec.gpus = gpus;
    rec.hints = read.hints;
    rec.hints.dag.reset();
    rec.dag_compact_bytes = read.hints.dag ? read.hints.dag->size() : 0;
    // The job started within Slurm's node range; say so when that is not its MIN:MAX.
    std::string clamped;
    if (read.hints.elastic) {
        const ElasticSpec start = elastic_within(*read.hints.elastic, slurm);
        rec.elastic_start_max = start.max_nodes;
        if (!(start == *read.hints.elastic))
            clamped = "; --ai-elastic=" + std::to_string(read.hints.elastic->min_nodes) + ":" +
                      std::to_string(read.hints.elastic->max_nodes) + " started as " +
                      std::to_string(start.min_nodes) + ":" + std::to_string(start.max_nodes) +
                      ", within the " + to_string(slurm) + " nodes Slurm accepts for the job";
    }
    if (!clamped.empty())
        rec.elastic_start = clamped.substr(2);
    rec.options = read.typed;  // as typed, for admins reading the record
    for (const auto &e : read.errors)
        rec.hint_errors.push_back(e.message());
    std::string summary;
    if (auto it = decisions_.find(job_id); it != decisions_.end()) {
        rec.decision = it->second;
        char buf[256];
        std::snprintf(buf, sizeof buf, "ai: %s placed %s, %.4g s/step comm, efficiency %.2f",
                      rec.decision->policy.c_str(), nodes.c_str(), rec.decision->comm_s,
                      rec.decision->efficiency);
        summary = buf;
        decisions_.erase(it);
    } else {
        summary = "ai: placed by cons_tres on " + nodes;
    }
    if (auto it = fallbacks_.find(job_id); it != fallbacks_.end()) {
        rec.fell_back = true;
        rec.fallback_class = it->second.first;
        rec.fallback_reason = it->second.second;
        if (!rec.decision)
            summary += " (" + it->second.second + ")";
    }
    if (auto it = stock_choices_.find(job_id); it != stock_choices_.end()) {
        rec.cons_tres_would_choose = std::move(it->second);
        stock_choices_.erase(it);
    }
    summary += clamped;
    rec.recorded_at = static_cast<std::int64_t>(clock_.wall_s());
    write_job_record(state_dir, rec);
    return summary;
}

void SelectService::note_stock(std::uint32_t job_id, std::string nodes) {
    stock_choices_[job_id] = std::move(nodes);
}

void SelectService::note_pending(const SelectJob &job, const JobOptions &options) {
    if (!pending_.insert(job.job_id).second)
        return;  // noted already: a job's options do not change while it waits
    PendingNote note{job.job_id, options.hints, options.typed};
    note.hints.dag.reset();
    pending_new_[job.job_id] = std::move(note);
    pending_gone_.erase(job.job_id);
}

void SelectService::pending_over(std::uint32_t job_id) {
    if (pending_.erase(job_id) > 0)
        pending_gone_.insert(job_id);
    pending_new_.erase(job_id);
}

std::optional<std::string> SelectService::save_pending(const std::string &state_dir) {
    std::optional<std::string> error;
    for (auto id : pending_gone_)
        remove_pending_note(state_dir, id);
    pending_gone_.clear();
    for (const auto &[id, note] : pending_new_)
        try {
            write_pending_note(state_dir, note);
        } catch (const std::exception &e) {
            error = e.what();
        }
    pending_new_.clear();
    return error;
}

void SelectService::forget(std::uint32_t job_id) {
    pending_over(job_id);
    decisions_.erase(job_id);
    stock_choices_.erase(job_id);
    waiting_.erase(job_id);
    held_.erase(job_id);
    uplink_shares_.erase(job_id);
    fallbacks_.erase(job_id);
    options_.forget(job_id);
    gangs_.member_ended(job_id);
}

bool SelectService::note_failure(const std::string &node, double t, const std::string &reason,
                                 bool down) {
    const FailureClass kind = classify_failure(reason);
    if (!down && kind == FailureClass::kOther)
        return false;  // drained for maintenance, or for no reason it gives
    // A node still down when slurmctld restarts is seen going down again: one failure
    // within an hour counts once (HostFailures::note).
    failures_[node].note(t, kind);
    return true;
}

double SelectService::failures(const std::string &node, double t) const {
    auto it = failures_.find(node);
    // A failure dated in the future (the clock was set back) counts as a failure now.
    return it == failures_.end() ? 0 : it->second.as_of(t).week;
}

const HostFailures *SelectService::history(const std::string &node) const {
    auto it = failures_.find(node);
    return it == failures_.end() ? nullptr : &it->second;
}

std::optional<std::string> SelectService::save_state(const std::string &dir) const {
    try {
        write_text_file_atomically(state_paths::select_state(dir), dump_failure_history(failures_));
    } catch (const std::exception &e) {
        return e.what();
    }
    return std::nullopt;
}

std::optional<InputError> SelectService::restore_state(const std::string &dir) {
    auto path = state_paths::select_state(dir);
    if (!std::filesystem::exists(path)) {
        // The plugin writes its file at every start (select_p_state_restore): beside
        // slurmctld's own state, a missing one was lost, not yet to be written.
        if (std::filesystem::exists(std::filesystem::path(dir) / "job_state"))
            return InputError{"file", "missing",
                              "the state the plugin writes at every start, beside slurmctld's "
                              "job_state; starting with an empty failure history",
                              path, 0};
        return std::nullopt;  // a first start
    }
    auto text = read_text_file(path, 64u << 20);
    if (!text)
        return text.error();
    auto restored = parse_failure_history(text.value(), path);
    if (!restored)
        return restored.error();
    failures_ = std::move(restored).value();
    return std::nullopt;
}

}  // namespace slurm_ai
