#include "slurm_ai/topology/topology_file.hpp"

#include "slurm_ai/common/enum_names.hpp"
#include "slurm_ai/common/file_io.hpp"
#include "slurm_ai/common/text_scan.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace slurm_ai {

std::string_view to_string(TopologyFileKind k) {
    static constexpr std::string_view kNames[] = {"hwloc-xml",       "nccl-xml",
                                                  "topology.conf",   "ibnetdiscover",
                                                  "topograph-model", "topology.yaml"};
    return enum_name(k, kNames);
}

Parsed<TopologyFileKind> detect_topology_file(std::string_view text, std::string_view source) {
    // XML: the root element after any declaration, doctype and comments.
    std::string_view x = text;
    for (;;) {
        auto first = x.find_first_not_of(" \t\r\n");
        if (first == std::string_view::npos)
            break;
        x.remove_prefix(first);
        auto skip_past = [&](std::string_view end) {
            auto at = x.find(end);
            x = at == std::string_view::npos ? std::string_view{} : x.substr(at + end.size());
        };
        if (x.starts_with("<?"))
            skip_past("?>");
        else if (x.starts_with("<!--"))
            skip_past("-->");
        else if (x.starts_with("<!"))
            skip_past(">");
        else
            break;
    }
    if (x.starts_with("<topology"))
        return TopologyFileKind::kHwlocXml;
    if (x.starts_with("<system"))
        return TopologyFileKind::kNcclXml;

    // Text formats: the first line that is not blank or a comment.
    text::LineReader lines(text);
    for (std::string_view l; lines.next(l);) {
        const int line = lines.number();
        auto first = l.find_first_not_of(" \t\r");
        if (first == std::string_view::npos)
            continue;
        l.remove_prefix(first);
        if (l.starts_with('#'))
            continue;
        const std::string head = text::lower(l.substr(0, 11));
        if (head == "switchname=" || head.starts_with("blockname=") ||
            head.starts_with("blocksizes="))
            return TopologyFileKind::kTopologyConf;
        // topograph's model: a YAML mapping whose first key is one of its sections.
        if (l.starts_with("switches:") || l.starts_with("blocks:"))
            return TopologyFileKind::kTopographModel;
        if (l.starts_with("- topology:") || l.starts_with("-   topology:"))
            return TopologyFileKind::kTopologyYaml;
        if (looks_like_clos_csv(l))
            return TopologyFileKind::kClosCsv;
        if (l.starts_with("vendid=") || l.starts_with("Switch") || l.starts_with("Ca") ||
            l.starts_with("Hca") || l.starts_with("caguid=") || l.starts_with("switchguid="))
            return TopologyFileKind::kIbnetdiscover;
        return InputError{"content", std::string(l.substr(0, 40)),
                          "hwloc XML, NCCL topology XML, topology.conf, topology.yaml, "
                          "ibnetdiscover output, a topograph model or a host,switch,... CSV",
                          std::string(source), line};
    }
    return InputError{"content", "", "a non-empty topology file", std::string(source), 0};
}

Parsed<TopologyFile> parse_topology_file(const std::string &text, const std::string &path,
                                         const GuidMap *map) {
    auto kind = detect_topology_file(text, path);
    if (!kind)
        return kind.error();
    auto wrap = [](auto parsed) -> Parsed<TopologyFile> {
        if (!parsed)
            return parsed.error();
        return TopologyFile(std::move(parsed).value());
    };
    switch (kind.value()) {
        case TopologyFileKind::kHwlocXml:
            return wrap(parse_hwloc_xml(text, path));
        case TopologyFileKind::kNcclXml:
            return wrap(parse_nccl_topo(text, path));
        case TopologyFileKind::kTopologyConf:
            return wrap(parse_topology_conf(text, path));
        case TopologyFileKind::kIbnetdiscover:
            return wrap(parse_ibnetdiscover(text, path, map));
        case TopologyFileKind::kTopographModel:
            return wrap(parse_topograph_model(text, path));
        case TopologyFileKind::kTopologyYaml:
            return wrap(parse_topology_yaml(text, path));
        case TopologyFileKind::kClosCsv:
            return wrap(parse_clos_csv(text, path));
    }
    return InputError{"file", path, "a topology file", path, 0};
}

Parsed<TopologyFile> load_topology_file(const std::string &path, const GuidMap *map) {
    auto text = read_text_file(path);
    if (!text)
        return text.error();
    return parse_topology_file(text.value(), path, map);
}

}  // namespace slurm_ai
