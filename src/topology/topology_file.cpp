#include "slurm_ai/topology_file.hpp"

#include "slurm_ai/text_scan.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <unistd.h>

namespace slurm_ai {

std::string_view to_string(TopologyFileKind k) {
    switch (k) {
        case TopologyFileKind::kHwlocXml:
            return "hwloc-xml";
        case TopologyFileKind::kNcclXml:
            return "nccl-xml";
        case TopologyFileKind::kTopologyConf:
            return "topology.conf";
        case TopologyFileKind::kIbnetdiscover:
            return "ibnetdiscover";
    }
    return "?";
}

Parsed<std::string> read_text_file(const std::string &path, std::size_t limit) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return InputError{"file", path,
                          std::string("a readable file (") + std::strerror(errno) + ")", path, 0};
    std::ostringstream buf;
    buf << in.rdbuf();
    std::string text = std::move(buf).str();
    if (text.size() > limit)
        return InputError{"file", path, "a file of at most " + std::to_string(limit >> 20) + " MiB",
                          path, 0};
    return text;
}

void write_text_file_atomically(const std::string &path, std::string_view text,
                                const std::function<void(const std::string &)> &prepare) {
    const std::string tmp = path + ".tmp." + std::to_string(getpid());
    std::error_code ec;
    try {
        {
            std::ofstream out(tmp, std::ios::trunc | std::ios::binary);
            out.write(text.data(), static_cast<std::streamsize>(text.size()));
            out.flush();
            if (!out)
                throw std::runtime_error("cannot write " + tmp + ": " + std::strerror(errno));
        }
        if (prepare)
            prepare(tmp);
        std::filesystem::rename(tmp, path, ec);
        if (ec)
            throw std::runtime_error("cannot replace " + path + ": " + ec.message());
    } catch (...) {
        std::filesystem::remove(tmp, ec);
        throw;
    }
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
        if (text::lower(l.substr(0, 11)) == "switchname=")
            return TopologyFileKind::kTopologyConf;
        if (l.starts_with("vendid=") || l.starts_with("Switch") || l.starts_with("Ca") ||
            l.starts_with("Hca") || l.starts_with("caguid=") || l.starts_with("switchguid="))
            return TopologyFileKind::kIbnetdiscover;
        return InputError{"content", std::string(l.substr(0, 40)),
                          "hwloc XML, NCCL topology XML, topology.conf or ibnetdiscover output",
                          std::string(source), line};
    }
    return InputError{"content", "", "a non-empty topology file", std::string(source), 0};
}

Parsed<TopologyFile> load_topology_file(const std::string &path, const GuidMap *map) {
    auto text = read_text_file(path);
    if (!text)
        return text.error();
    auto kind = detect_topology_file(text.value(), path);
    if (!kind)
        return kind.error();
    auto wrap = [](auto parsed) -> Parsed<TopologyFile> {
        if (!parsed)
            return parsed.error();
        return TopologyFile(std::move(parsed).value());
    };
    switch (kind.value()) {
        case TopologyFileKind::kHwlocXml:
            return wrap(parse_hwloc_xml(text.value(), path));
        case TopologyFileKind::kNcclXml:
            return wrap(parse_nccl_topo(text.value(), path));
        case TopologyFileKind::kTopologyConf:
            return wrap(parse_topology_conf(text.value(), path));
        case TopologyFileKind::kIbnetdiscover:
            return wrap(parse_ibnetdiscover(text.value(), path, map));
    }
    return InputError{"file", path, "a topology file", path, 0};
}

}  // namespace slurm_ai
