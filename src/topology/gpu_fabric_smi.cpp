// What nvidia-smi prints about the GPUs' fabric, in its three forms (see gpu_fabric.hpp):
//   - `-q -x`: <gpu id=BUS> elements with <product_name> and <fabric> (state, status,
//     cliqueId, clusterUuid, health/summary, health/bandwidth); any may be missing;
//   - `-q`: "GPU BUS" lines, then "    Fabric" (4 spaces) with "State", "Status",
//     "CliqueId", "ClusterUUID" (8 spaces) and a "Health" subsection ("Bandwidth",
//     "Summary", 12 spaces); the colon's column differs by driver, so a field is split at
//     the first " : ". Drivers before 550 print State and Status only;
//   - `--query-gpu=...,fabric.clusterUuid,fabric.cliqueId --format=csv[,noheader]`: with a
//     header, its columns by name (pci.bus_id, name, fabric.state, fabric.status,
//     fabric.clusterUuid, fabric.cliqueId, fabric.health.summary); without one, the two
//     columns topograph asks for. A CSV without state and status columns takes a GPU
//     with a cluster UUID as registered (Completed, Success), as topograph does.
// "N/A" and empty values read as not reported.
#include <algorithm>
#include <charconv>
#include <map>

#include "slurm_ai/common/text_scan.hpp"
#include "slurm_ai/topology/gpu_fabric.hpp"
#include "xml_document.hpp"

namespace slurm_ai {

using text::LineReader;
using text::printable;
using text::split;
using text::trim;

namespace {

// A value as reported, "" for N/A; bytes outside printable ASCII read as '?' (names and
// states are ASCII; the JSON of a report must be UTF-8).
std::string reported(std::string_view v) {
    v = trim(v);
    return v == "N/A" || v == "[N/A]" ? std::string() : printable(v);
}

// A cluster UUID as printed (8-4-4-4-12 hex digits); "" when not reported.
Parsed<std::string> uuid_of(std::string_view v, std::string_view field, std::string_view source,
                            int line) {
    std::string s = reported(v);
    if (!s.empty() && !is_cluster_uuid(s))
        return InputError{std::string(field), s, "a UUID of 8-4-4-4-12 hex digits, or N/A",
                          std::string(source), line};
    return s;
}

// A clique id as printed; nullopt when not reported.
Parsed<std::optional<std::uint32_t>> clique_of(std::string_view v, std::string_view field,
                                               std::string_view source, int line) {
    const std::string s = reported(v);
    if (s.empty())
        return std::optional<std::uint32_t>();
    std::uint32_t out = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    if (ec != std::errc() || end != s.data() + s.size())
        return InputError{std::string(field), s, "an unsigned 32-bit clique id or N/A",
                          std::string(source), line};
    return std::optional<std::uint32_t>(out);
}

std::string text_of(const xmlNode *n) {
    xmlChar *c = xmlNodeGetContent(n);
    std::string s = c ? reinterpret_cast<const char *>(c) : "";
    xmlFree(c);
    return s;
}

const xmlNode *child(const xmlNode *n, std::string_view name) {
    for (const xmlNode *c = n ? n->children : nullptr; c; c = c->next)
        if (xml::is_element(c, name))
            return c;
    return nullptr;
}

std::string child_text(const xmlNode *n, std::string_view name) {
    const xmlNode *c = child(n, name);
    return c ? reported(text_of(c)) : std::string();
}

Parsed<NodeGpuFabric> parse_xml(std::string_view text, std::string_view source) {
    auto doc = xml::read_document(text, source);
    if (!doc)
        return doc.error();
    const xmlNode *root = xmlDocGetRootElement(doc.value().get());
    if (!xml::is_element(root, "nvidia_smi_log"))
        return InputError{"root element", std::string(xml::name(root)),
                          "<nvidia_smi_log> (nvidia-smi -q -x)", std::string(source),
                          xml::line(root)};
    NodeGpuFabric node;
    node.source = std::string(source);
    node.format = "nvidia-smi-xml";
    node.driver = child_text(root, "driver_version");
    for (const xmlNode *g = root->children; g; g = g->next) {
        if (!xml::is_element(g, "gpu"))
            continue;
        GpuFabricInfo info;
        info.bus_id = reported(xml::attr(g, "id").value_or(""));
        info.product = child_text(g, "product_name");
        if (const xmlNode *f = child(g, "fabric")) {
            info.state = child_text(f, "state");
            info.status = child_text(f, "status");
            const xmlNode *u = child(f, "clusterUuid");
            auto uuid = uuid_of(u ? text_of(u) : "", "clusterUuid", source, u ? xml::line(u) : 0);
            if (!uuid)
                return uuid.error();
            info.cluster_uuid = uuid.value();
            const xmlNode *c = child(f, "cliqueId");
            auto clique = clique_of(c ? text_of(c) : "", "cliqueId", source, c ? xml::line(c) : 0);
            if (!clique)
                return clique.error();
            info.clique_id = clique.value();
            const xmlNode *h = child(f, "health");
            info.health = child_text(h, "summary");
            info.bandwidth = child_text(h, "bandwidth");
        }
        node.gpus.push_back(std::move(info));
    }
    node.settle();
    return node;
}

std::size_t indent_of(std::string_view line) {
    std::size_t i = 0;
    while (i < line.size() && line[i] == ' ')
        ++i;
    return i;
}

Parsed<NodeGpuFabric> parse_text(std::string_view text, std::string_view source) {
    NodeGpuFabric node;
    node.source = std::string(source);
    node.format = "nvidia-smi-text";
    // The section a field line belongs to: "Fabric" at 4 spaces, "Health" at 8 inside it.
    std::string section, subsection;
    LineReader lines(text);
    for (std::string_view raw; lines.next(raw);) {
        std::string_view line = raw.substr(0, raw.find_last_not_of(" \r") + 1);
        const std::size_t indent = indent_of(line);
        const auto colon = line.find(" : ");
        if (indent == 0 && line.substr(0, 4) == "GPU ") {
            node.gpus.push_back({});
            node.gpus.back().bus_id = reported(line.substr(4));
            section.clear();
            continue;
        }
        const std::string key(trim(line.substr(0, colon)));
        const std::string_view value =
            colon == std::string_view::npos ? std::string_view() : line.substr(colon + 3);
        if (indent == 0 && key == "Driver Version")
            node.driver = reported(value);
        if (node.gpus.empty() || indent == 0)
            continue;
        if (colon == std::string_view::npos) {  // a section or subsection title
            if (indent <= 4) {
                section = key;
                subsection.clear();
            } else if (indent <= 8) {
                subsection = key;
            }
            continue;
        }
        GpuFabricInfo &g = node.gpus.back();
        if (indent <= 4) {
            section.clear();
            if (key == "Product Name")
                g.product = reported(value);
            continue;
        }
        if (section != "Fabric")
            continue;
        if (indent <= 8) {
            subsection.clear();
            if (key == "State")
                g.state = reported(value);
            else if (key == "Status")
                g.status = reported(value);
            else if (key == "ClusterUUID") {
                auto uuid = uuid_of(value, "ClusterUUID", source, lines.number());
                if (!uuid)
                    return uuid.error();
                g.cluster_uuid = uuid.value();
            }
            else if (key == "CliqueId") {
                auto clique = clique_of(value, "CliqueId", source, lines.number());
                if (!clique)
                    return clique.error();
                g.clique_id = clique.value();
            }
        } else if (subsection == "Health") {
            if (key == "Summary")
                g.health = reported(value);
            else if (key == "Bandwidth")
                g.bandwidth = reported(value);
        }
    }
    node.settle();
    return node;
}

Parsed<NodeGpuFabric> parse_csv(std::string_view text, std::string_view source) {
    NodeGpuFabric node;
    node.source = std::string(source);
    node.format = "nvidia-smi-csv";
    std::vector<std::string> columns{"fabric.clusterUuid", "fabric.cliqueId"};
    LineReader lines(text);
    bool first = true;
    for (std::string_view line; lines.next(line);) {
        line = trim(line);
        if (line.empty())
            continue;
        auto fields = split(line, ',');
        if (first && line.find("fabric.") != std::string_view::npos) {
            columns.clear();
            for (auto f : fields)
                columns.emplace_back(trim(f));
            first = false;
            continue;
        }
        first = false;
        if (fields.size() != columns.size())
            return InputError{"line", std::string(line),
                              std::to_string(columns.size()) + " comma-separated values",
                              std::string(source), lines.number()};
        GpuFabricInfo g;
        std::map<std::string, std::string> at;
        for (std::size_t i = 0; i < columns.size(); ++i)
            at[columns[i]] = reported(fields[i]);
        g.bus_id = at["pci.bus_id"];
        g.product = at["name"];
        auto uuid =
            uuid_of(at["fabric.clusterUuid"], "fabric.clusterUuid", source, lines.number());
        if (!uuid)
            return uuid.error();
        g.cluster_uuid = uuid.value();
        g.health = at["fabric.health.summary"];
        auto clique = clique_of(at["fabric.cliqueId"], "fabric.cliqueId", source, lines.number());
        if (!clique)
            return clique.error();
        g.clique_id = clique.value();
        const bool has_state = at.count("fabric.state") > 0;
        g.state = has_state ? at["fabric.state"] : (g.cluster_uuid.empty() ? "" : "Completed");
        g.status = at.count("fabric.status") ? at["fabric.status"]
                                             : (g.cluster_uuid.empty() ? "" : "Success");
        node.gpus.push_back(std::move(g));
    }
    if (node.gpus.empty())
        return InputError{"csv", "", "a line per GPU", std::string(source), 0};
    node.settle();
    return node;
}

enum class SmiForm { kNone, kXml, kText, kCsv };

SmiForm form_of(std::string_view text) {
    const std::string_view head = text.substr(0, 4096);
    if (head.find("<nvidia_smi_log") != std::string_view::npos)
        return SmiForm::kXml;
    if (head.find("NVSMI LOG") != std::string_view::npos ||
        head.find("\nGPU 0000") != std::string_view::npos)
        return SmiForm::kText;
    LineReader lines(head);
    for (std::string_view line; lines.next(line);) {
        line = trim(line);
        if (line.empty())
            continue;
        if (line.find("fabric.") != std::string_view::npos)
            return SmiForm::kCsv;
        // noheader: a UUID (or N/A) and a clique id.
        auto fields = split(line, ',');
        const std::string first = reported(fields[0]);
        return fields.size() == 2 && (is_cluster_uuid(first) || first.empty()) ? SmiForm::kCsv
                                                                                : SmiForm::kNone;
    }
    return SmiForm::kNone;
}

}  // namespace

bool looks_like_gpu_fabric(std::string_view text) {
    return form_of(text) != SmiForm::kNone;
}

Parsed<NodeGpuFabric> parse_gpu_fabric(std::string_view text, std::string_view source) {
    switch (form_of(text)) {
        case SmiForm::kXml:
            return parse_xml(text, source);
        case SmiForm::kText:
            return parse_text(text, source);
        case SmiForm::kCsv:
            return parse_csv(text, source);
        case SmiForm::kNone:
            break;
    }
    return InputError{"format", std::string(trim(text.substr(0, text.find('\n')))).substr(0, 60),
                      "nvidia-smi output: -q -x (XML), -q (text) or "
                      "--query-gpu=fabric.clusterUuid,fabric.cliqueId --format=csv",
                      std::string(source), 1};
}

}  // namespace slurm_ai
