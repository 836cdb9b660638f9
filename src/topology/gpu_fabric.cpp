// NVLink domains from the GPUs' own fabric info: the rule for a GPU and a node, and a
// cluster assembled from host reports (see gpu_fabric.hpp).
#include "slurm_ai/topology/gpu_fabric.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "slurm_ai/common/file_io.hpp"
#include "slurm_ai/common/hostlist.hpp"
#include "slurm_ai/common/text_scan.hpp"

namespace slurm_ai {

using text::LineReader;
using text::is_hex;
using text::lower;
using text::natural_less;
using text::trim;

namespace {

bool all_zeros(std::string_view uuid) {
    return std::all_of(uuid.begin(), uuid.end(), [](char c) { return c == '0' || c == '-'; });
}

std::string gpu_name(std::size_t i, const GpuFabricInfo &g) {
    return g.bus_id.empty() ? fmt::format("GPU {}", i) : fmt::format("GPU {} ({})", i, g.bus_id);
}

// Why a GPU that is in no domain is not: for a node whose other GPUs are.
std::string outside_reason(const GpuFabricInfo &g) {
    if (lower(g.state) != "completed")
        return fmt::format("fabric state '{}'", g.state.empty() ? "N/A" : g.state);
    if (lower(g.status) != "success")
        return fmt::format("fabric status '{}'", g.status.empty() ? "N/A" : g.status);
    if (!g.clique_id)
        return "no clique id";
    return fmt::format("cluster UUID '{}'", g.cluster_uuid.empty() ? "N/A" : g.cluster_uuid);
}

}  // namespace

bool is_cluster_uuid(std::string_view s) {
    bool uuid = s.size() == 36;
    for (std::size_t i = 0; uuid && i < s.size(); ++i)
        uuid = i == 8 || i == 13 || i == 18 || i == 23 ? s[i] == '-' : is_hex(s[i]);
    return uuid;
}

std::string NvlinkCliqueId::label() const {
    return fmt::format("{}.{}", cluster_uuid, clique_id);
}

std::optional<NvlinkCliqueId> GpuFabricInfo::domain() const {
    if (lower(state) != "completed" || lower(status) != "success" || !clique_id ||
        cluster_uuid.empty() || all_zeros(cluster_uuid))
        return std::nullopt;
    return NvlinkCliqueId{lower(cluster_uuid), *clique_id};
}

std::string GpuFabricInfo::unhealthy() const {
    if (!health.empty() && lower(health) != "healthy")
        return fmt::format("fabric health summary '{}'", health);
    if (!bandwidth.empty() && lower(bandwidth) != "full")
        return fmt::format("fabric bandwidth '{}'", bandwidth);
    return {};
}

void NodeGpuFabric::settle() {
    domain.reset();
    problem.clear();
    const auto in_one = std::find_if(gpus.begin(), gpus.end(),
                                     [](const GpuFabricInfo &g) { return g.domain().has_value(); });
    if (in_one == gpus.end())
        return;
    const auto first_at = static_cast<std::size_t>(in_one - gpus.begin());
    const std::optional<NvlinkCliqueId> first = in_one->domain();
    for (std::size_t i = 0; i < gpus.size(); ++i) {
        const auto d = gpus[i].domain();
        if (!d) {
            problem = fmt::format("{} reports NVLink domain {} but {} is in none ({})",
                                  gpu_name(first_at, gpus[first_at]), first->label(),
                                  gpu_name(i, gpus[i]), outside_reason(gpus[i]));
            return;
        }
        if (*d != *first) {
            problem = fmt::format("its GPUs disagree: {} reports NVLink domain {}, {} reports {}",
                                  gpu_name(first_at, gpus[first_at]), first->label(),
                                  gpu_name(i, gpus[i]), d->label());
            return;
        }
        if (auto why = gpus[i].unhealthy(); !why.empty()) {
            problem = fmt::format("{} is in NVLink domain {} but reports {}",
                                  gpu_name(i, gpus[i]), first->label(), why);
            return;
        }
    }
    domain = first;
}

namespace {

nlohmann::json domain_json(const std::optional<NvlinkCliqueId> &d) {
    if (!d)
        return nullptr;
    return {{"cluster_uuid", d->cluster_uuid}, {"clique_id", d->clique_id}};
}

nlohmann::json text_or_null(const std::string &s) {
    return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s);
}

}  // namespace

void to_json(nlohmann::json &j, const NodeGpuFabric &n) {
    nlohmann::json gpus = nlohmann::json::array();
    for (const auto &g : n.gpus)
        gpus.push_back({{"bus_id", text_or_null(g.bus_id)},
                        {"product", text_or_null(g.product)},
                        {"state", text_or_null(g.state)},
                        {"status", text_or_null(g.status)},
                        {"cluster_uuid", text_or_null(g.cluster_uuid)},
                        {"clique_id", g.clique_id ? nlohmann::json(*g.clique_id) : nullptr},
                        {"health", text_or_null(g.health)},
                        {"bandwidth", text_or_null(g.bandwidth)},
                        {"nvlink_domain", domain_json(g.domain())}});
    j = {{"source", n.source},       {"format", n.format},
         {"driver", text_or_null(n.driver)},
         {"gpus", std::move(gpus)}, {"nvlink_domain", domain_json(n.domain)},
         {"problem", text_or_null(n.problem)}};
}

Parsed<NodeGpuFabric> load_gpu_fabric(const std::string &path) {
    auto text = read_text_file(path, 64u << 20);
    if (!text)
        return text.error();
    return parse_gpu_fabric(text.value(), path);
}

namespace {

// `host cluster_uuid clique_id` lines, or `host -`; a UUID of zeros or N/A: in no domain.
Parsed<std::vector<HostGpuFabric>> parse_host_lines(std::string_view text,
                                                    const std::string &source) {
    std::vector<HostGpuFabric> out;
    LineReader lines(text);
    for (std::string_view line; lines.next(line);) {
        const int line_no = lines.number();
        line = trim(line.substr(0, line.find('#')));
        if (line.empty())
            continue;
        std::vector<std::string_view> words;
        for (std::size_t i = 0; i < line.size();) {
            const std::size_t end = std::min(line.find_first_of(" \t", i), line.size());
            if (end > i)
                words.push_back(line.substr(i, end - i));
            i = end + 1;
        }
        auto bad = [&](std::string field, std::string_view value, std::string expected) {
            return InputError{std::move(field), std::string(value), std::move(expected), source,
                              line_no};
        };
        HostGpuFabric h{std::string(words[0]), std::nullopt, ""};
        if (words.size() == 2 && words[1] == "-") {
            out.push_back(std::move(h));
            continue;
        }
        if (words.size() != 3)
            return bad("line", line, "'host cluster_uuid clique_id' or 'host -'");
        // As nvidia-smi prints a GPU in no domain: N/A, or an all-zero UUID.
        const bool outside = words[1] == "N/A" || all_zeros(words[1]);
        std::uint32_t clique = 0;
        const char *last = words[2].data() + words[2].size();
        auto [end, ec] = std::from_chars(words[2].data(), last, clique);
        if ((ec != std::errc() || end != last) &&
            !(outside && words[2] == "N/A"))
            return bad("clique_id", words[2], "an unsigned 32-bit integer");
        if (!is_cluster_uuid(words[1]) && words[1] != "N/A")
            return bad("cluster_uuid", words[1], "a UUID of 8-4-4-4-12 hex digits, or N/A");
        if (!outside)
            h.domain = NvlinkCliqueId{lower(words[1]), clique};
        out.push_back(std::move(h));
    }
    return out;
}

}  // namespace

Parsed<std::vector<HostGpuFabric>> load_host_gpu_fabrics(const std::string &path) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::is_directory(path, ec)) {
        auto text = read_text_file(path);
        if (!text)
            return text.error();
        return parse_host_lines(text.value(), path);
    }
    std::vector<fs::path> files;
    for (const auto &e : fs::directory_iterator(path, ec))
        if (e.is_regular_file() && e.path().filename().string().front() != '.')
            files.push_back(e.path());
    std::sort(files.begin(), files.end(), [](const fs::path &a, const fs::path &b) {
        return natural_less(a.filename().string(), b.filename().string());
    });
    if (files.empty())
        return InputError{"directory", path, "captures named by host (none found)", "", 0};
    std::vector<HostGpuFabric> out;
    for (const auto &f : files) {
        auto node = load_gpu_fabric(f.string());
        if (!node)
            return node.error();
        const std::string name = f.filename().string();
        out.push_back({name.substr(0, name.find('.')), node->domain, node->problem});
    }
    return out;
}

Parsed<Fabric> fabric_from_gpu_fabrics(const std::vector<HostGpuFabric> &hosts,
                                       std::string_view source) {
    Fabric f;
    f.source = std::string(source);
    f.format = "gpu-fabric";
    std::vector<const HostGpuFabric *> order;
    for (const auto &h : hosts)
        order.push_back(&h);
    std::stable_sort(order.begin(), order.end(), [](const auto *a, const auto *b) {
        return natural_less(a->host, b->host);
    });
    std::map<NvlinkCliqueId, std::size_t> domain_of;
    std::set<std::string_view> named;
    for (const auto *h : order) {
        if (!named.insert(h->host).second)
            return InputError{"host", h->host, "each host once", f.source, 0};
        FabricNode n;
        n.name = h->host;
        f.nodes.push_back(std::move(n));
        if (!h->domain)
            continue;
        auto [it, added] = domain_of.emplace(*h->domain, f.nvlink_domains.size());
        if (added)
            f.nvlink_domains.push_back(
                NvlinkDomain{fmt::format("nvl{}", f.nvlink_domains.size() + 1), {}, "", 0, false});
        f.nvlink_domains[it->second].hosts.push_back(static_cast<int>(f.nodes.size() - 1));
    }
    std::size_t largest = 0;
    for (const auto &d : f.nvlink_domains) {
        f.blocks.push_back(FabricBlock{d.name, d.hosts, d.name});
        largest = std::max(largest, d.hosts.size());
    }
    if (largest > 0)
        f.block_sizes = {static_cast<int>(largest)};
    f.index_links();
    return f;
}

std::string write_nvlink_domain_lines(const Fabric &fabric,
                                      const std::vector<HostGpuFabric> &hosts) {
    std::map<std::string, const HostGpuFabric *> by_name;
    for (const auto &h : hosts)
        by_name[h.host] = &h;
    std::string out = fmt::format(
        "# NVLink domains of ai_select.conf, from the GPUs' fabric info ({})\n", fabric.source);
    for (const auto &d : fabric.nvlink_domains) {
        std::vector<std::string> names;
        for (int h : d.hosts)
            names.push_back(fabric.nodes[static_cast<std::size_t>(h)].name);
        const auto *first = by_name.at(names.front());
        out += fmt::format("# {}: cluster UUID {}, clique {}, {} host{}\n", d.name,
                           first->domain->cluster_uuid, first->domain->clique_id, names.size(),
                           names.size() == 1 ? "" : "s");
        out += fmt::format("NvlinkDomain={}\n", compress_hostlist(names));
    }
    for (const auto &h : hosts)
        if (!h.problem.empty())
            out += fmt::format("# left out: {}: {}\n", h.host, h.problem);
    return out;
}

}  // namespace slurm_ai
