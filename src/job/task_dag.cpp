#include "slurm_ai/job/task_dag.hpp"

#include <algorithm>
#include <cmath>
#include <queue>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "slurm_ai/common/file_io.hpp"
#include "slurm_ai/job/job_hints.hpp"

namespace slurm_ai {
namespace {

using nlohmann::json;

struct DagReader {
    std::string source;
    InputError fail(std::string field, const json &value, std::string expected) const {
        std::string v = value.is_string() ? value.get<std::string>() : value.dump();
        if (v.size() > 60)
            v = v.substr(0, 57) + "...";
        return InputError{std::move(field), v, std::move(expected), source, 0};
    }
};

// The compact form written by compact_task_dag ({"t": [[name, gpus, compute_s]...],
// "e": [[from, to, bytes]...]}) rewritten in place as the full one.
std::optional<InputError> expand_compact(json &doc, const DagReader &r) {
    if (!doc.is_object() || !doc.contains("t") || doc.contains("tasks"))
        return std::nullopt;
    json full{{"tasks", json::array()}, {"edges", json::array()}};
    for (const auto &t : doc["t"]) {
        if (!t.is_array() || t.size() != 3)
            return r.fail("t[]", t, "[name, gpus, compute_s]");
        full["tasks"].push_back({{"name", t[0]}, {"gpus", t[1]}, {"compute_s", t[2]}});
    }
    if (doc.contains("e"))
        for (const auto &e : doc["e"]) {
            if (!e.is_array() || e.size() != 3 || !e[0].is_number_unsigned() ||
                !e[1].is_number_unsigned() || e[0].get<std::size_t>() >= full["tasks"].size() ||
                e[1].get<std::size_t>() >= full["tasks"].size())
                return r.fail("e[]", e, "[from index, to index, bytes]");
            full["edges"].push_back({{"from", full["tasks"][e[0].get<std::size_t>()]["name"]},
                                     {"to", full["tasks"][e[1].get<std::size_t>()]["name"]},
                                     {"bytes", e[2]}});
        }
    doc = std::move(full);
    return std::nullopt;
}

int line_of(std::string_view text, std::size_t byte) {
    byte = std::min(byte, text.size());
    return 1 +
           static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(byte), '\n'));
}

}  // namespace

std::uint32_t TaskDag::total_gpus() const {
    std::uint32_t n = 0;
    for (const auto &t : tasks)
        n += t.gpus;
    return n;
}

std::vector<std::uint32_t> TaskDag::topological_order() const {
    // Kahn's algorithm with a min-heap, so that the file's order is kept where it can be.
    std::vector<std::uint32_t> indegree(tasks.size(), 0), order;
    std::vector<std::vector<std::uint32_t>> out(tasks.size());
    for (const auto &e : edges) {
        ++indegree[e.to];
        out[e.from].push_back(e.to);
    }
    std::priority_queue<std::uint32_t, std::vector<std::uint32_t>, std::greater<>> ready;
    for (std::uint32_t i = 0; i < tasks.size(); ++i)
        if (indegree[i] == 0)
            ready.push(i);
    while (!ready.empty()) {
        auto t = ready.top();
        ready.pop();
        order.push_back(t);
        for (auto n : out[t])
            if (--indegree[n] == 0)
                ready.push(n);
    }
    return order;  // shorter than tasks.size() when there is a cycle
}

Parsed<TaskDag> parse_task_dag(std::string_view text, std::string_view source) {
    DagReader r{std::string(source)};
    json doc;
    try {
        doc = json::parse(text);
    } catch (const json::parse_error &e) {
        return InputError{"JSON", std::string(e.what()).substr(0, 120), "a JSON task DAG", r.source,
                          line_of(text, e.byte)};
    } catch (const json::exception &e) {  // e.g. a number too large for any type
        return InputError{"JSON", std::string(e.what()).substr(0, 120), "a JSON task DAG", r.source,
                          0};
    }
    if (auto err = expand_compact(doc, r))
        return *err;
    if (!doc.is_object())
        return r.fail("(top level)", doc, "an object with \"tasks\" and \"edges\"");
    for (const auto &[key, _] : doc.items())
        if (key != "tasks" && key != "edges")
            return r.fail(key, key, "only the keys \"tasks\" and \"edges\"");
    if (!doc.contains("tasks") || !doc["tasks"].is_array() || doc["tasks"].empty())
        return r.fail("tasks", doc.value("tasks", json()), "a non-empty array of tasks");
    if (doc["tasks"].size() > kMaxDagTasks)
        return r.fail("tasks", json(doc["tasks"].size()),
                      "at most " + std::to_string(kMaxDagTasks) + " tasks");

    TaskDag dag;
    std::unordered_map<std::string, std::uint32_t> index;
    for (std::size_t i = 0; i < doc["tasks"].size(); ++i) {
        const json &t = doc["tasks"][i];
        std::string at = "tasks[" + std::to_string(i) + "]";
        if (!t.is_object())
            return r.fail(at, t, "an object with \"name\", \"gpus\", \"compute_s\"");
        for (const auto &[key, _] : t.items())
            if (key != "name" && key != "gpus" && key != "compute_s")
                return r.fail(at + "." + key, key, "one of name, gpus, compute_s");
        DagTask task;
        if (!t.contains("name") || !t["name"].is_string() || t["name"].get<std::string>().empty())
            return r.fail(at + ".name", t.value("name", json()), "a non-empty string");
        task.name = t["name"].get<std::string>();
        if (t.contains("gpus")) {
            const json &g = t["gpus"];
            if (!g.is_number_integer() || g.get<long long>() < 1 || g.get<long long>() > 65536)
                return r.fail(at + ".gpus", g, "an integer from 1 to 65536");
            task.gpus = g.get<std::uint32_t>();
        }
        if (t.contains("compute_s")) {
            const json &c = t["compute_s"];
            if (!c.is_number() || !std::isfinite(c.get<double>()) || c.get<double>() < 0)
                return r.fail(at + ".compute_s", c, "a number of seconds >= 0");
            task.compute_s = c.get<double>();
        }
        if (!index.emplace(task.name, static_cast<std::uint32_t>(i)).second)
            return r.fail(at + ".name", t["name"], "a name no other task has");
        dag.tasks.push_back(std::move(task));
    }
    if (doc.contains("edges")) {
        if (!doc["edges"].is_array())
            return r.fail("edges", doc["edges"], "an array of edges");
        for (std::size_t i = 0; i < doc["edges"].size(); ++i) {
            const json &e = doc["edges"][i];
            std::string at = "edges[" + std::to_string(i) + "]";
            if (!e.is_object())
                return r.fail(at, e, "an object with \"from\", \"to\", \"bytes\"");
            for (const auto &[key, _] : e.items())
                if (key != "from" && key != "to" && key != "bytes")
                    return r.fail(at + "." + key, key, "one of from, to, bytes");
            DagEdge edge;
            for (const char *end : {"from", "to"}) {
                if (!e.contains(end) || !e[end].is_string() ||
                    !index.count(e[end].get<std::string>()))
                    return r.fail(at + "." + end, e.value(end, json()), "the name of a task");
                (std::string_view(end) == "from" ? edge.from : edge.to) =
                    index.at(e[end].get<std::string>());
            }
            if (edge.from == edge.to)
                return r.fail(at + ".to", e["to"], "a task other than \"from\"");
            if (e.contains("bytes")) {
                const json &b = e["bytes"];
                if (b.is_number_unsigned()) {
                    edge.bytes = b.get<std::uint64_t>();
                } else if (b.is_string()) {
                    auto size = parse_size(at + ".bytes", b.get<std::string>());
                    if (!size) {
                        auto err = size.error();
                        err.source = r.source;
                        return err;
                    }
                    edge.bytes = size.value();
                } else {
                    return r.fail(at + ".bytes", b, "a byte count or a size such as 64M");
                }
            }
            dag.edges.push_back(edge);
        }
    }
    if (dag.topological_order().size() != dag.tasks.size()) {
        // Name one task on a cycle: one whose in-degree never reached zero.
        auto order = dag.topological_order();
        std::vector<bool> done(dag.tasks.size(), false);
        for (auto t : order)
            done[t] = true;
        auto stuck = std::find(done.begin(), done.end(), false) - done.begin();
        return InputError{"edges", dag.tasks[stuck].name,
                          "an acyclic graph (this task is on a cycle)", r.source, 0};
    }
    return dag;
}

Parsed<TaskDag> load_task_dag(const std::string &path) {
    auto text = read_text_file(path, 64u << 20);
    if (!text)
        return text.error();
    return parse_task_dag(text.value(), path);
}

std::string compact_task_dag(const TaskDag &dag) {
    json t = json::array(), e = json::array();
    for (const auto &task : dag.tasks)
        t.push_back({task.name, task.gpus, task.compute_s});
    for (const auto &edge : dag.edges)
        e.push_back({edge.from, edge.to, edge.bytes});
    return json{{"t", t}, {"e", e}}.dump();
}

void to_json(nlohmann::json &j, const TaskDag &dag) {
    j = json{{"tasks", json::array()}, {"edges", json::array()}};
    for (const auto &t : dag.tasks)
        j["tasks"].push_back({{"name", t.name}, {"gpus", t.gpus}, {"compute_s", t.compute_s}});
    for (const auto &e : dag.edges)
        j["edges"].push_back(
            {{"from", dag.tasks[e.from].name}, {"to", dag.tasks[e.to].name}, {"bytes", e.bytes}});
}

}  // namespace slurm_ai
