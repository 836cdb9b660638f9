#include "fault_trace.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <fstream>
#include <map>
#include <numeric>
#include <random>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace slurm_ai::sim {
namespace {

InputError bad(const std::string &file, std::size_t event, std::string field, std::string value,
               std::string expected) {
    return InputError{fmt::format("event {} {}", event, field), std::move(value),
                      std::move(expected), file, 0};
}

// Faults that start within this of each other count as one moment (the trace gives days
// to 4 decimals: 8.6 s).
constexpr double kSameMomentDays = 60.0 / 86400;

// Union-find over servers.
struct Groups {
    std::vector<int> parent;
    explicit Groups(int n) : parent(static_cast<std::size_t>(n)) {
        std::iota(parent.begin(), parent.end(), 0);
    }
    int find(int x) {
        while (parent[static_cast<std::size_t>(x)] != x)
            x = parent[static_cast<std::size_t>(x)] =
                parent[static_cast<std::size_t>(parent[static_cast<std::size_t>(x)])];
        return x;
    }
    void join(int a, int b) { parent[static_cast<std::size_t>(find(a))] = find(b); }
};

}  // namespace

Parsed<FaultTrace> load_fault_trace(const std::string &path, int population) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return InputError{"--fault-trace", path, "a readable fault trace (JSON)", path, 0};
    std::stringstream buf;
    buf << in.rdbuf();
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(buf.str());
    } catch (const nlohmann::json::exception &e) {
        return InputError{"JSON", e.what(), "a JSON array of fault events", path, 0};
    }
    if (!j.is_array())
        return InputError{"JSON", j.type_name(), "a JSON array of fault events", path, 0};
    FaultTrace t;
    t.source = path;
    std::map<std::string, int> index;
    // Server -> its faults not yet ended, oldest first: a node may have a second fault
    // before its first ends (the trace has such), and an end closes the oldest.
    std::map<int, std::deque<std::size_t>> open;
    double last = -1;
    for (std::size_t i = 0; i < j.size(); ++i) {
        const auto &e = j[i];
        if (!e.is_object())
            return bad(path, i, "", e.dump(), "an object");
        auto str = [&](const nlohmann::json &o, const char *key,
                       std::string &out) -> std::optional<InputError> {
            auto it = o.find(key);
            if (it == o.end() || !it->is_string() || it->get<std::string>().empty())
                return bad(path, i, key, it == o.end() ? "" : it->dump(), "a non-empty string");
            out = it->get<std::string>();
            return std::nullopt;
        };
        std::string node, type;
        if (auto err = str(e, "node_id", node))
            return *err;
        if (auto err = str(e, "event_type", type))
            return *err;
        auto time = e.find("event_time");
        if (time == e.end() || !time->is_number() || !std::isfinite(time->get<double>()) ||
            time->get<double>() < 0)
            return bad(path, i, "event_time", time == e.end() ? "" : time->dump(),
                       "days since the trace's start, a number >= 0");
        const double day = time->get<double>();
        if (day < last)
            return bad(path, i, "event_time", time->dump(), "events sorted by time");
        last = day;
        auto [it, fresh] = index.try_emplace(node, static_cast<int>(t.servers.size()));
        if (fresh)
            t.servers.push_back(node);
        const int server = it->second;
        if (type == "fault_start") {
            auto ft = e.find("fault_type");
            if (ft == e.end() || !ft->is_object())
                return bad(path, i, "fault_type", ft == e.end() ? "" : ft->dump(),
                           "an object with Level, Class and Desc");
            TraceFault f;
            f.server = server;
            f.start_day = f.end_day = day;
            if (auto err = str(*ft, "Level", f.level))
                return *err;
            if (auto err = str(*ft, "Class", f.cls))
                return *err;
            if (auto err = str(*ft, "Desc", f.desc))
                return *err;
            f.kind = classify_failure(f.level + " " + f.cls + " " + f.desc);
            open[server].push_back(t.faults.size());
            t.faults.push_back(std::move(f));
        } else if (type == "fault_end") {
            auto o = open.find(server);
            if (o == open.end() || o->second.empty())
                return bad(path, i, "event_type", type, "a fault_start of this node before it");
            t.faults[o->second.front()].end_day = day;
            o->second.pop_front();
        } else {
            return bad(path, i, "event_type", type, "fault_start or fault_end");
        }
    }
    if (t.faults.empty())
        return InputError{"JSON", "no fault", "at least one fault_start", path, 0};
    // A fault the trace never ends lasts to its end.
    for (auto &[server, ks] : open)
        for (auto k : ks)
            t.faults[k].end_day = last;
    if (population < static_cast<int>(t.servers.size()))
        return InputError{"--fault-population", std::to_string(population),
                          fmt::format("at least the {} servers with a fault in {}",
                                      t.servers.size(), path),
                          "", 0};
    t.population = population;
    t.first_day = t.faults.front().start_day;
    t.last_day = last;
    return t;
}

Replay replay_faults(const FaultTrace &trace, const ClusterGraph &graph, FaultMapping mapping,
                     double start_day, double length_days, std::uint64_t seed) {
    Replay r;
    r.start_day = start_day;
    const int hosts = graph.host_count();
    const int population = std::max(trace.population, 1);
    const int faulty = static_cast<int>(trace.servers.size());
    std::mt19937_64 rng(seed ^ 0x7265706c6179ull);

    // The population in the order hosts take it: servers 0..faulty-1 are those with
    // faults, the others have none (-1).
    std::vector<int> order(static_cast<std::size_t>(population));
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    std::vector<int> slot(static_cast<std::size_t>(hosts), -1);  // host -> population index
    if (mapping == FaultMapping::kRandom) {
        for (int h = 0; h < hosts; ++h)
            slot[static_cast<std::size_t>(h)] = order[static_cast<std::size_t>(h % population)];
    } else {
        // Groups of servers that fault at one moment, largest first, each onto the leaf with
        // the most room; the rest of the population in the drawn order.
        Groups g(faulty);
        for (std::size_t a = 0; a < trace.faults.size(); ++a)
            for (std::size_t b = a + 1; b < trace.faults.size() &&
                                        trace.faults[b].start_day - trace.faults[a].start_day <=
                                            kSameMomentDays;
                 ++b)
                g.join(trace.faults[a].server, trace.faults[b].server);
        std::map<int, std::vector<int>> members;
        for (int s : order)
            if (s < faulty)
                members[g.find(s)].push_back(s);
        std::vector<std::vector<int>> groups;
        for (auto &[root, m] : members)
            if (m.size() > 1)
                groups.push_back(std::move(m));
        std::stable_sort(groups.begin(), groups.end(),
                         [](const auto &a, const auto &b) { return a.size() > b.size(); });
        std::map<int, std::vector<int>> free_at;  // leaf -> hosts without a server yet
        for (int h = 0; h < hosts; ++h)
            free_at[graph.host_leaf(h)].push_back(h);
        std::vector<char> placed(static_cast<std::size_t>(population), 0);
        for (const auto &grp : groups) {
            auto leaf = std::max_element(free_at.begin(), free_at.end(), [](auto &a, auto &b) {
                return a.second.size() < b.second.size();
            });
            for (int s : grp) {
                if (leaf->second.empty())
                    break;
                slot[static_cast<std::size_t>(leaf->second.front())] = s;
                leaf->second.erase(leaf->second.begin());
                placed[static_cast<std::size_t>(s)] = 1;
            }
        }
        std::size_t next = 0;
        for (int h = 0; h < hosts; ++h) {
            if (slot[static_cast<std::size_t>(h)] >= 0)
                continue;
            while (next < order.size() && placed[static_cast<std::size_t>(order[next])])
                ++next;
            if (next < order.size()) {
                slot[static_cast<std::size_t>(h)] = order[next];
                placed[static_cast<std::size_t>(order[next])] = 1;
            } else {
                slot[static_cast<std::size_t>(h)] = order[static_cast<std::size_t>(h) % order.size()];
            }
        }
    }

    // Copies of the population beyond the first are shifted by a third of the trace each.
    const double span = std::max(trace.last_day - trace.first_day, 1.0);
    std::vector<std::vector<int>> hosts_of(static_cast<std::size_t>(faulty));
    std::vector<int> copy_of(static_cast<std::size_t>(hosts), 0);
    {
        std::vector<int> uses(static_cast<std::size_t>(population), 0);
        for (int h = 0; h < hosts; ++h) {
            const int s = slot[static_cast<std::size_t>(h)];
            copy_of[static_cast<std::size_t>(h)] = uses[static_cast<std::size_t>(s)]++;
            if (s < faulty)
                hosts_of[static_cast<std::size_t>(s)].push_back(h);
        }
    }
    r.server_of_host.assign(static_cast<std::size_t>(hosts), -1);
    for (int h = 0; h < hosts; ++h)
        if (slot[static_cast<std::size_t>(h)] < faulty)
            r.server_of_host[static_cast<std::size_t>(h)] = slot[static_cast<std::size_t>(h)];
    const double end_day = start_day + length_days;
    for (const auto &f : trace.faults)
        for (int h : hosts_of[static_cast<std::size_t>(f.server)]) {
            const double shift = copy_of[static_cast<std::size_t>(h)] * span / 3;
            double day = f.start_day + shift;
            if (shift > 0 && day > trace.last_day)
                day -= span;  // wrap into the trace
            const double dur = f.end_day - f.start_day;
            const double t = (day - start_day) * 86400;
            if (day < start_day) {
                r.history.push_back({h, t, f.kind});
            } else if (day < end_day) {
                r.faults.push_back({t, h, dur * 86400, f.kind, takes_link(f.kind)});
            }
        }
    std::sort(r.faults.begin(), r.faults.end(), [](const ReplayedFault &a, const ReplayedFault &b) {
        return a.t != b.t ? a.t < b.t : a.host < b.host;
    });
    std::sort(r.history.begin(), r.history.end(),
              [](const HostHistory &a, const HostHistory &b) { return a.t < b.t; });
    return r;
}

}  // namespace slurm_ai::sim
