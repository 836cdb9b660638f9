// Private to the topology library: the one way its loaders read XML (hwloc and NCCL
// topology files) through libxml2, and turn libxml2's complaint into an InputError.
//
// Topology files come from admins and from other machines, so parsing is hardened: no
// network access, no DTD loading, no entity substitution, and documents that declare
// entities are refused outright (nothing legitimate needs them, and refusing them rules
// out entity expansion attacks when attribute values are read later).
#pragma once

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "slurm_ai/common/input_error.hpp"

namespace slurm_ai::xml {

// Larger files than this are no topology of one node (a 4-socket, 8-GPU hwloc export with
// every PCI device is under 1 MiB); the cap also keeps sizes within libxml2's int.
inline constexpr std::size_t kMaxDocumentBytes = 64u << 20;

struct DocFree {
    void operator()(xmlDoc *d) const { xmlFreeDoc(d); }
};
using Doc = std::unique_ptr<xmlDoc, DocFree>;

inline const xmlChar *to_xml(const char *s) {
    return reinterpret_cast<const xmlChar *>(s);
}
inline std::string_view name(const xmlNode *n) {
    return n->name ? std::string_view(reinterpret_cast<const char *>(n->name)) : std::string_view();
}
inline bool is_element(const xmlNode *n, std::string_view want) {
    return n->type == XML_ELEMENT_NODE && name(n) == want;
}
inline int line(const xmlNode *n) {
    return static_cast<int>(xmlGetLineNo(n));
}

inline std::optional<std::string> attr(const xmlNode *n, const char *key) {
    xmlChar *v = xmlGetProp(n, to_xml(key));
    if (!v)
        return std::nullopt;
    std::string s(reinterpret_cast<const char *>(v));
    xmlFree(v);
    return s;
}

// An InputError for attribute `field` of element `n`, at the element's line.
inline InputError attr_error(const xmlNode *n, std::string field, std::string value,
                             std::string expected, std::string_view source) {
    return InputError{std::move(field), std::move(value), std::move(expected), std::string(source),
                      line(n)};
}

// libxml2 keeps only the last error, which after a fatal one is often a consequence
// ("Premature end of data"); the first names the real problem and its line.
struct FirstError {
    bool set = false;
    std::string message;
    int line = 0;
};
inline void record_first_error(void *user, xmlErrorPtr e) {
    auto *ctxt = static_cast<xmlParserCtxt *>(user);
    auto *first = ctxt ? static_cast<FirstError *>(ctxt->_private) : nullptr;
    if (!first || first->set || !e || e->level < XML_ERR_ERROR)
        return;
    first->set = true;
    first->message = e->message ? e->message : "";
    first->line = e->line;
}

// The parsed document, or an InputError naming the source with libxml2's message and line.
inline Parsed<Doc> read_document(std::string_view text, std::string_view source) {
    auto error = [&](std::string value, std::string expected, int line) {
        return InputError{"xml", std::move(value), std::move(expected), std::string(source), line};
    };
    if (text.find_first_not_of(" \t\r\n") == std::string_view::npos)
        return error("", "an XML document (the input is empty)", 0);
    if (text.size() > kMaxDocumentBytes)
        return error(std::to_string(text.size()) + " bytes",
                     "at most " + std::to_string(kMaxDocumentBytes >> 20) + " MiB", 0);

    xmlInitParser();
    std::unique_ptr<xmlParserCtxt, decltype(&xmlFreeParserCtxt)> ctxt(xmlNewParserCtxt(),
                                                                      &xmlFreeParserCtxt);
    if (!ctxt)
        return error("", "memory to parse XML", 0);
    FirstError first;
    ctxt->_private = &first;
    ctxt->sax->serror = &record_first_error;
    const int options = XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING |
                        XML_PARSE_NOBLANKS | XML_PARSE_BIG_LINES;
    Doc doc(xmlCtxtReadMemory(ctxt.get(), text.data(), static_cast<int>(text.size()), nullptr,
                              nullptr, options));
    if (!doc || first.set) {
        const xmlError *last = xmlCtxtGetLastError(ctxt.get());
        std::string msg = first.set               ? first.message
                          : last && last->message ? last->message
                                                  : "unreadable XML";
        while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' '))
            msg.pop_back();
        return error(msg, "well-formed XML", first.set ? first.line : last ? last->line : 0);
    }
    if (doc->intSubset && (doc->intSubset->entities || doc->intSubset->pentities)) {
        // libxml2 keeps no line for declarations; the first one in the text is the culprit.
        auto at = text.find("<!ENTITY");
        int line = 1;
        for (std::size_t i = 0; at != std::string_view::npos && i < at; ++i)
            line += text[i] == '\n';
        return error("<!ENTITY", "a document without entity declarations",
                     at == std::string_view::npos ? 0 : line);
    }
    if (!xmlDocGetRootElement(doc.get()))
        return error("", "a root element", 0);
    return Parsed<Doc>(std::move(doc));
}

}  // namespace slurm_ai::xml
