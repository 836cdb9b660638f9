// A Clos fabric given host by host: a CSV whose first column is the host and whose other
// columns are its switches from the top level down (Alibaba's Lingjun dataset, topo.csv:
// ip,DSW,PSW,ASW = host, core, aggregation, ToR).
#include <cctype>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "slurm_ai/common/file_io.hpp"
#include "slurm_ai/common/hostlist.hpp"
#include "slurm_ai/common/text_scan.hpp"
#include "slurm_ai/topology/fabric.hpp"

namespace slurm_ai {
namespace {

constexpr std::size_t kMaxHosts = std::size_t{1} << 20;
constexpr std::size_t kMaxColumns = 16;

std::vector<std::string_view> split(std::string_view line) {
    std::vector<std::string_view> out;
    while (true) {
        auto comma = line.find(',');
        out.push_back(text::trim(line.substr(0, comma)));
        if (comma == std::string_view::npos)
            return out;
        line.remove_prefix(comma + 1);
    }
}

bool header_word(std::string_view w) {
    if (w.empty() || !(std::isalpha(static_cast<unsigned char>(w[0])) || w[0] == '_'))
        return false;
    for (char c : w)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-')
            return false;
    return true;
}

}  // namespace

bool looks_like_clos_csv(std::string_view first_line) {
    auto cols = split(text::trim(first_line));
    if (cols.size() < 2 || cols.size() > kMaxColumns)
        return false;
    for (auto c : cols)
        if (!header_word(c))
            return false;
    return true;
}

Parsed<Fabric> parse_clos_csv(std::string_view text, std::string_view source, double default_gbps) {
    auto error = [&](std::string field, std::string_view value, std::string expected, int line) {
        return InputError{std::move(field), std::string(value), std::move(expected),
                          std::string(source), line};
    };
    Fabric fabric;
    fabric.source = source;
    fabric.format = "clos-csv";

    // The rows first: a switch's name depends on whether its column reuses names under
    // different parents (Lingjun's ToRs S1, S2, ... exist under each aggregation switch).
    struct Row {
        std::string host;
        std::vector<std::string> path;  // top level first
        int line = 0;
    };
    std::vector<Row> rows;
    std::vector<std::string> columns;
    std::unordered_map<std::string, int> host_line;
    text::LineReader lines(text);
    for (std::string_view raw; lines.next(raw);) {
        std::string_view line = text::trim(raw);
        if (line.empty() || line.starts_with('#'))
            continue;
        auto cells = split(line);
        if (columns.empty()) {
            if (!looks_like_clos_csv(line))
                return error("header", line.substr(0, 60),
                             "a header naming the host column and 1 to 15 switch columns, "
                             "e.g. ip,DSW,PSW,ASW",
                             lines.number());
            for (auto c : cells)
                columns.emplace_back(c);
            continue;
        }
        if (cells.size() != columns.size())
            return error("row", line.substr(0, 60),
                         std::to_string(columns.size()) + " comma-separated values, as the header",
                         lines.number());
        Row row;
        row.line = lines.number();
        for (std::size_t c = 0; c < cells.size(); ++c) {
            std::string value(cells[c]);
            if (!is_host_name(value) || value.size() > kSlurmNameMax)
                return error(columns[c], value, name_rule("a name"), row.line);
            (c == 0 ? row.host : row.path.emplace_back()) = std::move(value);
        }
        if (auto [it, fresh] = host_line.emplace(row.host, row.line); !fresh)
            return error(columns[0], row.host,
                         "each host on one row (also at line " + std::to_string(it->second) + ")",
                         row.line);
        if (rows.size() >= kMaxHosts)
            return error(columns[0], row.host, "at most " + std::to_string(kMaxHosts) + " hosts",
                         row.line);
        rows.push_back(std::move(row));
    }
    if (columns.empty())
        return error("header", "", "a header line such as ip,DSW,PSW,ASW", 0);

    // Columns whose names repeat under different parents: their switches are named
    // "<parent>-<name>" (the parent's own name, as written in the file).
    const std::size_t levels = columns.size() - 1;
    std::vector<bool> qualified(levels, false);
    for (std::size_t c = 1; c < levels; ++c) {
        std::map<std::string_view, std::string_view> parent_of;
        for (const auto &r : rows)
            if (auto [it, fresh] = parent_of.emplace(r.path[c], r.path[c - 1]);
                !fresh && it->second != r.path[c - 1])
                qualified[c] = true;
    }

    std::unordered_map<std::string, int> index;
    std::set<std::pair<int, int>> linked;
    auto link = [&](int a, int b) {
        if (!linked.emplace(a, b).second)
            return;
        LinkRate rate;
        rate.width = 0;
        rate.gbps = default_gbps;
        rate.assumed = true;
        fabric.links.push_back({a, b, 0, 0, rate});
    };
    for (const auto &r : rows) {
        int parent = -1;
        for (std::size_t c = 0; c < levels; ++c) {
            std::string name = qualified[c] ? r.path[c - 1] + "-" + r.path[c] : r.path[c];
            if (name.size() > kSlurmNameMax)  // Slurm's limit on a switch name
                return error(columns[c + 1], name,
                             "a switch name of at most 64 characters, its parent's name and '-' "
                             "included (this column repeats names under different parents)",
                             r.line);
            auto [it, fresh] = index.emplace(name, static_cast<int>(fabric.nodes.size()));
            if (fresh) {
                FabricNode n;
                n.name = name;
                n.is_switch = true;
                fabric.nodes.push_back(std::move(n));
            } else if (!fabric.nodes[static_cast<std::size_t>(it->second)].is_switch) {
                return error(columns[c + 1], name, "a switch name that is no host's", r.line);
            }
            if (parent >= 0)
                link(parent, it->second);
            parent = it->second;
        }
        auto [it, fresh] = index.emplace(r.host, static_cast<int>(fabric.nodes.size()));
        if (!fresh)
            return error(columns[0], r.host, "a host name that is no switch's", r.line);
        FabricNode n;
        n.name = r.host;
        fabric.nodes.push_back(std::move(n));
        link(parent, it->second);
    }
    fabric.index_links();
    fabric.infer_levels();
    return fabric;
}

Parsed<Fabric> load_clos_csv(const std::string &path, double default_gbps) {
    auto text = read_text_file(path);
    if (!text)
        return text.error();
    return parse_clos_csv(*text, path, default_gbps);
}

}  // namespace slurm_ai
