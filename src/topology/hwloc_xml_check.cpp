// Checking and translating an hwloc XML file before libhwloc loads it.
//
// XML goes through libxml2 first, for three reasons: hwloc reports a bad file only as
// "load failed" (its reasons go to stderr, and only with HWLOC_XML_VERBOSE=1), and it
// silently ignores attributes it cannot parse, where we want an InputError naming the
// field and line; hwloc 3.0 writes XML version 3, which libhwloc 2.x refuses outright;
// and libhwloc's built-in XML reader (Debian builds hwloc without libxml2) accepts only
// the layout hwloc itself writes. So the document is checked, translated from v3 to v2
// where needed, and re-serialized in hwloc's layout before libhwloc loads it.
#include "hwloc_xml_check.hpp"

#include <charconv>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "slurm_ai/topology/node_topology.hpp"
#include "xml_document.hpp"

namespace slurm_ai::detail {
namespace {

// hwloc 3 OS device types are a bitmask; hwloc 2 had a single enum value. The mapping is
// the one hwloc 3.0 itself applies when it exports v2 XML.
namespace v3 {
constexpr unsigned long kStorage = 1ul << 0, kMemory = 1ul << 1, kGpu = 1ul << 2,
                        kCoproc = 1ul << 3, kNetwork = 1ul << 4, kOpenFabrics = 1ul << 5,
                        kDma = 1ul << 6;
constexpr unsigned long kDistancesHops = 1ul << 5, kDistancesLatency = 1ul << 2;
}  // namespace v3

const char *v2_osdev_type(unsigned long types, std::string_view name, std::string_view subtype) {
    if (types & (v3::kStorage | v3::kMemory))
        return "0";  // Block
    if (types & v3::kOpenFabrics)
        return "3";  // OpenFabrics
    if (types & v3::kNetwork)
        return subtype == "BXI" ? "3" : "2";  // BXI was OpenFabrics in v2, else Network
    if (types & v3::kDma)
        return "4";
    if (types & v3::kCoproc)  // NVML and RSMI devices were GPUs in v2, CUDA/OpenCL CoProc
        return name.starts_with("nvml") || name.starts_with("rsmi") ? "1" : "5";
    if (types & v3::kGpu)
        return "1";
    return "0";
}

template <class T>
bool parse_number(std::string_view s, T &out) {
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && end == s.data() + s.size() && !s.empty();
}

bool parse_hex_word(std::string_view s, unsigned long &out) {
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out, 16);
    return ec == std::errc() && end == s.data() + s.size() && !s.empty();
}

// hwloc's bitmap form: "0xf...f" (infinite) or ["0xf...f,"] then 32-bit hex words, most
// significant first, zero words left empty ("0x00000303,,0x0"). libhwloc's own parser
// asserts (aborting the process) on some malformed strings, so it never sees one.
constexpr std::size_t kMaxBitmapWords = 4096;  // 131072 bits
bool valid_bitmap(std::string_view s) {
    if (s.starts_with("0xf...f")) {
        s.remove_prefix(7);
        if (s.empty())
            return true;
        if (s.front() != ',')
            return false;
        s.remove_prefix(1);
    }
    std::size_t words = 0;
    for (std::size_t pos = 0;; ++words) {
        auto comma = s.find(',', pos);
        auto word = s.substr(pos, comma == std::string_view::npos ? s.npos : comma - pos);
        if (word.starts_with("0x"))
            word.remove_prefix(2);
        else if (!word.empty() || words == 0)
            return false;  // a word is 0x-prefixed, or empty for zero (never the first)
        if (word.size() > 8 || words >= kMaxBitmapWords)
            return false;
        unsigned long v = 0;
        if (!word.empty() && !parse_hex_word(word, v))
            return false;
        if (comma == std::string_view::npos)
            return true;
        pos = comma + 1;
    }
}

// Every attribute libhwloc parses as a bitmap, on any element (objects, cpukinds,
// memory attributes).
std::optional<InputError> check_bitmaps(xmlNode *n, std::string_view source) {
    for (xmlAttr *a = n->properties; a; a = a->next) {
        std::string_view key = a->name ? reinterpret_cast<const char *>(a->name) : "";
        if (!key.ends_with("cpuset") && !key.ends_with("nodeset"))
            continue;
        auto value = xml::attr(n, std::string(key).c_str()).value_or("");
        if (!valid_bitmap(value))
            return xml::attr_error(n, std::string(key), value,
                                   "an hwloc bitmap of comma-separated 0x words, e.g. 0x00ff00ff",
                                   source);
    }
    return std::nullopt;
}

// libhwloc 2 checks that an object's sets come in pairs only for v1 files; a v2 object
// with a cpuset and no complete_cpuset (say) crashes its import. Normal and memory
// objects carry all four sets, I/O and Misc objects none.
std::optional<InputError> check_sets(xmlNode *n, int major, std::string_view source) {
    static constexpr const char *kSets[] = {"cpuset", "complete_cpuset", "nodeset",
                                            "complete_nodeset"};
    bool has[4] = {};
    for (int i = 0; i < 4; ++i)
        has[i] = xmlHasProp(n, xml::to_xml(kSets[i])) != nullptr;
    auto type = xml::attr(n, "type").value_or("");
    const bool io_or_misc =
        type == "Bridge" || type == "PCIDev" || type == "OSDev" || type == "Misc";
    const char *missing = nullptr;
    if (has[0] != has[1])
        missing = has[0] ? kSets[1] : kSets[0];
    else if (has[2] != has[3])
        missing = has[2] ? kSets[3] : kSets[2];
    else if (has[2] && !has[0])
        missing = kSets[0];
    else if (major >= 2 && !io_or_misc)
        for (int i = 0; i < 4 && !missing; ++i)
            if (!has[i])
                missing = kSets[i];
    if (missing)
        return xml::attr_error(n, missing, "",
                               "cpuset, complete_cpuset, nodeset and complete_nodeset on every "
                               "normal object (hwloc writes all four)",
                               source);
    return std::nullopt;
}

// libhwloc fails on an <info> with any attribute but name and value (leaking the object
// that holds it).
std::optional<InputError> check_info(xmlNode *n, std::string_view source) {
    for (xmlAttr *a = n->properties; a; a = a->next) {
        std::string_view key = a->name ? reinterpret_cast<const char *>(a->name) : "";
        if (key != "name" && key != "value")
            return xml::attr_error(n, std::string(key),
                                   xml::attr(n, std::string(key).c_str()).value_or(""),
                                   "only name and value attributes on <info>", source);
    }
    if (!xmlHasProp(n, xml::to_xml("name")) || !xmlHasProp(n, xml::to_xml("value")))
        return xml::attr_error(n, "name", "", "both name and value on <info>", source);
    return std::nullopt;
}

// A PU's or NUMA node's OS index is a bit libhwloc sets in a bitmap; this bounds the
// bitmap (128 KiB) far above what Linux numbers (8192 CPUs, 1024 NUMA nodes).
constexpr unsigned kMaxSetIndex = 1u << 20;

// The attributes hwloc would silently drop when malformed, and that this loader relies on.
std::optional<InputError> check_object(xmlNode *n, int major, std::string_view source) {
    if (auto err = check_sets(n, major, source))
        return err;
    // libhwloc sets bit os_index of PUs and NUMA nodes in their sets: a huge index, or a
    // missing one (taken as 2^32-1), makes it allocate a 512 MiB bitmap. Other objects'
    // indexes are only numbers (POWER numbers cores and packages by hardware ids, and a
    // v1 export writes 4294967295 for "unknown"): any 32-bit value is theirs.
    auto os_index = xml::attr(n, "os_index");
    auto type = xml::attr(n, "type").value_or("");
    const bool in_sets = type == "PU" || type == "NUMANode";
    if (!os_index && in_sets)
        return xml::attr_error(n, "os_index", "", "an os_index on every PU and NUMANode", source);
    if (os_index) {
        unsigned long index = 0;
        if (!parse_number(*os_index, index) || index > 0xffffffffUL)
            return xml::attr_error(n, "os_index", *os_index, "an unsigned 32-bit OS index", source);
        if (in_sets && index >= kMaxSetIndex)
            return xml::attr_error(n, "os_index", *os_index,
                                   "a " + type + " OS index below " + std::to_string(kMaxSetIndex),
                                   source);
    }
    if (auto busid = xml::attr(n, "pci_busid")) {
        auto parsed = parse_pci_busid(*busid, "pci_busid");
        if (!parsed)
            return xml::attr_error(n, "pci_busid", *busid, parsed.error().expected, source);
    }
    if (auto pci_type = xml::attr(n, "pci_type")) {
        unsigned cls = 0, ven = 0, dev = 0, sven = 0, sdev = 0, rev = 0;
        if (std::sscanf(pci_type->c_str(), "%x [%x:%x] [%x:%x] %x", &cls, &ven, &dev, &sven, &sdev,
                        &rev) != 6 ||
            cls > 0xffff || ven > 0xffff || dev > 0xffff || sven > 0xffff || sdev > 0xffff)
            return xml::attr_error(n, "pci_type", *pci_type,
                                   "class [vendor:device] [subvendor:subdevice] revision in hex, "
                                   "e.g. 0302 [10de:1db8] [10de:131d] a1",
                                   source);
    }
    if (auto speed = xml::attr(n, "pci_link_speed")) {
        double gbs = 0;
        if (!parse_number(*speed, gbs) || !std::isfinite(gbs) || gbs < 0 || gbs > 1e6)
            return xml::attr_error(n, "pci_link_speed", *speed,
                                   "a link bandwidth in GB/s, e.g. 15.753846", source);
    }
    // libhwloc stores both of these into enums unchecked; out-of-range values would be
    // undefined behaviour wherever they are read.
    if (auto bridge = xml::attr(n, "bridge_type")) {
        if (*bridge != "0-1" && *bridge != "1-1")
            return xml::attr_error(n, "bridge_type", *bridge,
                                   "0-1 (host bridge) or 1-1 (PCI bridge)", source);
    }
    if (auto osdev = xml::attr(n, "osdev_type")) {
        unsigned long types = 0;
        if (!parse_number(*osdev, types) || (major < 3 && types > 5))
            return xml::attr_error(
                n, "osdev_type", *osdev,
                major < 3 ? "an OS device type from 0 to 5" : "an OS device type bitmask", source);
        if (major == 3) {
            auto name = xml::attr(n, "name").value_or("");
            auto subtype = xml::attr(n, "subtype").value_or("");
            xmlSetProp(n, xml::to_xml("osdev_type"),
                       xml::to_xml(v2_osdev_type(types, name, subtype)));
        }
    }
    return std::nullopt;
}

std::optional<InputError> check_distances(xmlNode *n, int major, std::string_view source) {
    auto kind = xml::attr(n, "kind");
    unsigned long k = 0;
    if (kind && !parse_number(*kind, k))
        return xml::attr_error(n, "kind", *kind, "a distances kind number", source);
    if (kind && major == 3 && (k & v3::kDistancesHops)) {  // v2 called hops latency
        k = (k & ~v3::kDistancesHops) | v3::kDistancesLatency;
        xmlSetProp(n, xml::to_xml("kind"), xml::to_xml(std::to_string(k).c_str()));
    }
    return std::nullopt;
}

// hwloc puts text only in distance matrices and userdata; elsewhere libhwloc's reader
// fails on it (and leaks the object it was reading), so it is an error of its own here.
std::optional<InputError> check_text(xmlNode *parent, xmlNode *text, std::string_view source) {
    auto tag = xml::name(parent);
    if (tag == "indexes" || tag == "u64values" || tag == "userdata")
        return std::nullopt;
    std::string content(text->content ? reinterpret_cast<const char *>(text->content) : "");
    auto first = content.find_first_not_of(" \t\r\n");
    if (first == std::string::npos)
        return std::nullopt;
    auto last = content.find_last_not_of(" \t\r\n");
    return InputError{"<" + std::string(tag) + ">",
                      content.substr(first, std::min<std::size_t>(last - first + 1, 40)),
                      "no text inside <" + std::string(tag) + ">", std::string(source),
                      static_cast<int>(xmlGetLineNo(text))};
}

// Comments and processing instructions would trip libhwloc's reader; they carry nothing.
void strip_non_elements(xmlNode *parent) {
    for (xmlNode *c = parent->children; c;) {
        xmlNode *next = c->next;
        if (c->type == XML_COMMENT_NODE || c->type == XML_PI_NODE) {
            xmlUnlinkNode(c);
            xmlFreeNode(c);
        }
        c = next;
    }
}

// hwloc 3 moved the root object's infos (HostName, OS...) to the topology element, and
// added PCI localities, memory tiers and a new memory attribute layout, all of which
// libhwloc 2 stops reading at. Infos go back into the root object, as hwloc 3's own v2
// export does; the rest is dropped (it is recomputed from the object tree, or unused).
void downgrade_topology_children(xmlNode *topology) {
    xmlNode *root_object = nullptr;
    for (xmlNode *c = topology->children; c; c = c->next)
        if (xml::is_element(c, "object")) {
            root_object = c;
            break;
        }
    for (xmlNode *c = topology->children; c;) {
        xmlNode *next = c->next;
        if (c->type == XML_ELEMENT_NODE) {
            auto tag = xml::name(c);
            if (tag == "info" && root_object) {
                xmlUnlinkNode(c);
                if (root_object->children)
                    xmlAddPrevSibling(root_object->children, c);
                else
                    xmlAddChild(root_object, c);
            } else if (tag != "object" && tag != "distances2" && tag != "distances2hetero" &&
                       tag != "support" && tag != "cpukind") {
                xmlUnlinkNode(c);
                xmlFreeNode(c);
            }
        }
        c = next;
    }
}

}  // namespace

// The document as libhwloc 2 will read it, or the first problem found.
Parsed<std::string> prepare_for_hwloc(std::string_view text, std::string_view source) {
    auto parsed = xml::read_document(text, source);
    if (!parsed)
        return parsed.error();
    xmlDoc *doc = parsed.value().get();
    xmlNode *root = xmlDocGetRootElement(doc);
    if (xml::name(root) != "topology")
        return InputError{"root element", std::string(xml::name(root)), "<topology> (hwloc XML)",
                          std::string(source), xml::line(root)};

    int major = 1;  // v1 files carry no version
    if (auto version = xml::attr(root, "version")) {
        auto dot = version->find('.');
        unsigned minor = 0;
        unsigned maj = 0;
        if (dot == std::string::npos ||
            !parse_number(std::string_view(*version).substr(0, dot), maj) ||
            !parse_number(std::string_view(*version).substr(dot + 1), minor) || maj < 1 || maj > 3)
            return xml::attr_error(root, "version", *version, "hwloc XML version 1.x, 2.x or 3.x",
                                   source);
        major = static_cast<int>(maj);
    }

    // Depth-first over every element; libxml2 caps nesting (256), so recursion is bounded.
    std::optional<InputError> problem;
    auto visit = [&](auto &self, xmlNode *n) -> void {
        strip_non_elements(n);
        for (xmlNode *c = n->children; c && !problem; c = c->next) {
            if (c->type == XML_TEXT_NODE || c->type == XML_CDATA_SECTION_NODE) {
                problem = check_text(n, c, source);
                continue;
            }
            if (c->type != XML_ELEMENT_NODE)
                continue;
            auto tag = xml::name(c);
            if (xml::name(n) == "object" && tag != "object" && tag != "info" &&
                tag != "page_type" && tag != "distances" && tag != "userdata")
                // libhwloc fails on other children of an object (and leaks it)
                problem = InputError{"<object>", "<" + std::string(tag) + ">",
                                     "object, info, page_type, distances or userdata elements "
                                     "inside an object",
                                     std::string(source), xml::line(c)};
            else if (tag == "object")
                problem = check_object(c, major, source);
            else if (tag == "info")
                problem = check_info(c, source);
            else if (tag == "distances2" || tag == "distances2hetero")
                problem = check_distances(c, major, source);
            if (!problem)
                problem = check_bitmaps(c, source);
            if (!problem)
                self(self, c);
        }
    };
    visit(visit, root);
    if (problem)
        return *problem;

    if (major == 3) {
        downgrade_topology_children(root);
        xmlSetProp(root, xml::to_xml("version"), xml::to_xml("2.0"));
    }
    strip_non_elements(reinterpret_cast<xmlNode *>(doc));
    if (xmlDtd *dtd = doc->intSubset) {  // libhwloc skips only a one-line DOCTYPE
        xmlUnlinkNode(reinterpret_cast<xmlNode *>(dtd));
        xmlFreeDtd(dtd);
    }

    xmlChar *out = nullptr;
    int size = 0;
    xmlDocDumpFormatMemoryEnc(doc, &out, &size, "UTF-8", 1);
    if (!out)
        return InputError{"xml", "", "memory to re-serialize the document", std::string(source), 0};
    std::string result(reinterpret_cast<const char *>(out), static_cast<std::size_t>(size));
    xmlFree(out);
    return result;
}

}  // namespace slurm_ai::detail
