#include "collect.hpp"

#include <pwd.h>

#include <ctime>
#include <system_error>

#include <fmt/format.h>

#include "slurm_ai/common/file_io.hpp"
#include "slurm_ai/common/hostlist.hpp"
#include "slurm_ai/common/state_paths.hpp"
#include "slurm_ai/elastic/elastic_view.hpp"
#include "slurm_ai/lease/lease.hpp"
#include "slurm_ai/slurm/pending_explain.hpp"

namespace slurm_ai::metrics_daemon {
namespace fs = std::filesystem;
namespace {

// Reads every file of `dir` ending in `suffix` through `parse`, keeping what is unchanged
// in `cache` and dropping what is gone. Files that fail to parse are left out.
template <typename T, typename Parse>
std::vector<const T *> scan(const fs::path &dir, const std::string &suffix,
                            std::map<std::string, T> &cache, Parse parse) {
    std::map<std::string, T> seen;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string path = it->path().string();
        if (!path.ends_with(suffix) || !it->is_regular_file(ec))
            continue;
        const auto size = it->file_size(ec);
        const auto mtime = it->last_write_time(ec);
        if (ec)
            continue;
        auto old = cache.find(path);
        if (old != cache.end() && old->second.size == size && old->second.mtime == mtime) {
            seen.emplace(path, std::move(old->second));
            continue;
        }
        if (auto value = parse(path))
            seen.emplace(path, T{size, mtime, std::move(*value)});
    }
    cache = std::move(seen);
    std::vector<const T *> out;
    for (const auto &[path, v] : cache)
        out.push_back(&v);
    return out;
}

std::string user_name(std::uint32_t uid) {
    const passwd *pw = getpwuid(uid);
    return pw ? pw->pw_name : std::to_string(uid);
}

// A running job's placement in one line, for the map's tooltip.
std::string placed_how(const JobRecord *rec) {
    if (!rec)
        return "no record of the select plugin";
    if (!rec->decision)
        return "placed by plain cons_tres" +
               (rec->fallback_reason.empty() ? "" : " (" + rec->fallback_reason + ")");
    const auto &d = *rec->decision;
    return fmt::format("placed by the suite's {} policy; {} {:.3f} ms per step (ideal {:.3f})",
                       d.policy, d.pattern.empty() ? "communication" : d.pattern,
                       d.comm_s * 1000, d.lower_bound_s * 1000);
}

}  // namespace

Collector::Collector(SlurmClient &slurm, std::unique_ptr<elastic::ClusterModel> model)
    : slurm_(&slurm), model_(std::move(model)) {
    if (!model_->graph)
        return;
    const ClusterGraph &g = *model_->graph;
    const Fabric &f = g.fabric();
    for (int sw : g.switch_nodes())
        if (f.nodes[static_cast<std::size_t>(sw)].level == 0) {
            const int rail = f.rail_of_leaf(sw);
            leaves_.push_back({f.nodes[static_cast<std::size_t>(sw)].name,
                               rail < 0 ? "" : std::to_string(rail), g.uplink_gbs(sw)});
        }
}

std::vector<std::pair<std::string, double>> Collector::host_ports(const std::string &name) const {
    std::vector<std::pair<std::string, double>> out;
    if (!model_->graph)
        return out;
    const ClusterGraph &g = *model_->graph;
    const int host = g.host_index(name);
    if (host < 0)
        return out;
    for (const auto &p : g.ports(host))
        if (p.leaf >= 0)
            out.emplace_back(g.fabric().nodes[static_cast<std::size_t>(p.leaf)].name, p.gbs);
    return out;
}

std::vector<JobRecord> Collector::records() {
    auto found = scan(state_paths::select_dir(model_->state_dir) / "jobs", ".json", records_,
                      [](const std::string &path) -> std::optional<JobRecord> {
                          auto text = read_text_file(path, 16u << 20);
                          if (!text)
                              return std::nullopt;
                          auto rec = parse_job_record(*text, path);
                          return rec ? std::optional(std::move(rec).value()) : std::nullopt;
                      });
    std::vector<JobRecord> out;
    for (const auto *c : found)
        out.push_back(c->value);
    return out;
}

std::vector<checkpoint::RestartRecord> Collector::restarts() {
    auto found = scan(state_paths::recover_dir(model_->state_dir) / "jobs", ".jsonl", logs_,
                      [](const std::string &path) -> std::optional<checkpoint::RestartLog> {
                          auto log = checkpoint::read_restart_log(path);
                          return log ? std::optional(std::move(log).value()) : std::nullopt;
                      });
    std::vector<checkpoint::RestartRecord> out;
    for (const auto *c : found)
        out.insert(out.end(), c->value.records.begin(), c->value.records.end());
    return out;
}

// ai-recover's saved lease book, where its watch keeps one.
std::optional<metrics::SuiteInputs::Leases> Collector::leases() const {
    auto text = read_text_file(state_paths::lease_book(model_->state_dir), 64u << 20);
    lease::LeaseBook book(lease::LeaseTimes{});
    if (!text || book.restore(*text, 0))
        return std::nullopt;
    return metrics::SuiteInputs::Leases{book.nodes_with_jobs(), book.revoked_jobs()};
}

void Collector::resizes(metrics::SuiteInputs &in) const {
    std::error_code ec;
    for (fs::directory_iterator it(model_->view_dir, ec), end; !ec && it != end;
         it.increment(ec))
        if (auto view = read_view(it->path().string())) {
            in.grows += view->grows;
            in.shrinks += view->shrinks;
            in.replaces += view->generation - std::min(view->generation,
                                                       view->grows + view->shrinks);
        }
}

// The fabric with Slurm's node states, or Slurm's nodes alone without a fabric.
metrics::ClusterMap Collector::base_map(const std::vector<NodeInfo> &nodes) const {
    metrics::ClusterMap m;
    const std::string title = "Slurm AI suite: cluster map";
    if (model_->graph) {
        m = metrics::fabric_map(*model_->graph, title);
    } else {
        m.title = title;
        for (const auto &n : nodes)
            m.hosts.push_back({n.name, "", "", "", std::vector<std::uint32_t>(n.gpus, 0)});
    }
    std::map<std::string, const NodeInfo *> by_name;
    for (const auto &n : nodes)
        by_name[n.name] = &n;
    for (auto &h : m.hosts)
        if (auto it = by_name.find(h.name); it != by_name.end()) {
            h.state = it->second->state;
            if (h.gpu_jobs.size() < it->second->gpus)  // the fabric's node file knows fewer
                h.gpu_jobs.resize(it->second->gpus, 0);
        }
    m.at = std::time(nullptr);
    return m;
}

// Slurm's reason, and for the first kExplained pending jobs what holds them in the
// fabric's terms (each costs a few placement searches).
std::string Collector::pending_reason(const JobInfo &j, const std::vector<JobInfo> &jobs,
                                      const std::vector<NodeInfo> &nodes, int &explained) const {
    std::string reason = "Slurm: " + (j.shown_reason.empty() ? j.reason : j.shown_reason);
    if (explained >= kExplained || j.reason == "Dependency" || j.reason == "BeginTime")
        return reason;
    ++explained;
    const auto e = explain_pending(*model_, j, jobs, nodes);
    if (!e.wait)
        return reason;
    reason += ". " + e.wait->holds;
    if (!e.wait->frees.empty())
        reason += "; fits " + e.wait->frees;
    if (!e.wait->starts_now.empty())
        reason += ". Starts now with " + e.wait->starts_now.front();
    return reason;
}

void Collector::add_jobs(Snapshot &s, const std::vector<JobInfo> &jobs,
                         const std::vector<NodeInfo> &nodes, bool with_map) {
    int explained = 0;
    std::map<std::uint32_t, const JobRecord *> record_of;
    for (const auto &r : s.inputs.records)
        record_of[r.job_id] = &r;
    for (const auto &j : jobs) {
        const bool running = j.state == "RUNNING";
        if (!running && j.state != "PENDING")
            continue;
        metrics::JobNow now{j.job_id, running, {}, j.gpus_per_node()};
        if (running)
            if (auto hosts = expand_hostlist(j.nodes, "nodes"))
                now.hosts = std::move(hosts).value();
        s.inputs.jobs.push_back(now);
        if (!with_map)
            continue;
        auto rec = record_of.find(j.job_id);
        const JobRecord *record = rec == record_of.end() ? nullptr : rec->second;
        metrics::MapJob mj;
        mj.job_id = j.job_id;
        mj.name = j.name;
        mj.user = user_name(j.user_id);
        mj.running = running;
        mj.nodes = j.nodes;
        mj.gpus = now.gpus_per_node * std::max<std::uint32_t>(1, j.num_nodes);
        if (record && record->decision)
            mj.efficiency = record->decision->efficiency;
        mj.reason = running ? placed_how(record) : pending_reason(j, jobs, nodes, explained);
        if (running)
            metrics::place_job(s.map, std::move(mj), record ? record->gpus : "", now.hosts,
                               now.gpus_per_node);
        else
            s.map.jobs.push_back(std::move(mj));
    }
}

Snapshot Collector::take(bool with_map) {
    Snapshot s;
    s.inputs.records = records();
    s.inputs.restarts = restarts();
    resizes(s.inputs);
    s.inputs.now_s = static_cast<double>(std::time(nullptr));
    if (auto text = read_text_file(state_paths::select_state(model_->state_dir), 64u << 20))
        if (auto history = parse_failure_history(*text, "ai_select_state.json"))
            s.inputs.failures = std::move(history).value();
    s.inputs.leases = leases();
    std::vector<NodeInfo> nodes;
    std::vector<JobInfo> jobs;
    try {
        nodes = slurm_->nodes(true);
        jobs = slurm_->jobs();
    } catch (const std::exception &e) {
        s.slurm_up = false;
        s.slurm_error = e.what();
    }
    s.map = base_map(nodes);
    std::map<std::string, const metrics::MapHost *> host_of;
    for (const auto &h : s.map.hosts)
        host_of[h.name] = &h;
    for (const auto &n : nodes) {
        auto h = host_of.find(n.name);
        s.inputs.hosts.push_back({n.name, h == host_of.end() ? "" : h->second->leaf,
                                  h == host_of.end() ? "" : h->second->domain,
                                  n.gpus > n.gpus_used ? n.gpus - n.gpus_used : 0,
                                  !n.down && !n.drained, host_ports(n.name)});
    }
    s.inputs.leaves = leaves_;
    add_jobs(s, jobs, nodes, with_map);
    return s;
}

}  // namespace slurm_ai::metrics_daemon
