#include "yaml_document.hpp"

#include <yaml.h>

namespace slurm_ai::yaml {

Node::Kind Node::kind() const {
    if (!node_)
        return Kind::kEmpty;
    switch (node_->type) {
        case YAML_SCALAR_NODE:
            return Kind::kScalar;
        case YAML_SEQUENCE_NODE:
            return Kind::kSequence;
        case YAML_MAPPING_NODE:
            return Kind::kMapping;
        default:
            return Kind::kEmpty;
    }
}

int Node::line() const {
    return node_ ? static_cast<int>(node_->start_mark.line) + 1 : 0;
}

std::string Node::scalar() const {
    if (!is_scalar())
        return {};
    return std::string(reinterpret_cast<const char *>(node_->data.scalar.value),
                       node_->data.scalar.length);
}

std::vector<Node> Node::items() const {
    std::vector<Node> out;
    if (!is_sequence())
        return out;
    for (yaml_node_item_t *i = node_->data.sequence.items.start; i < node_->data.sequence.items.top;
         ++i)
        out.push_back(Node(doc_, yaml_document_get_node(doc_, *i)));
    return out;
}

std::vector<std::pair<std::string, Node>> Node::pairs() const {
    std::vector<std::pair<std::string, Node>> out;
    if (!is_mapping())
        return out;
    for (yaml_node_pair_t *p = node_->data.mapping.pairs.start; p < node_->data.mapping.pairs.top;
         ++p)
        out.emplace_back(Node(doc_, yaml_document_get_node(doc_, p->key)).scalar(),
                         Node(doc_, yaml_document_get_node(doc_, p->value)));
    return out;
}

std::optional<Node> Node::get(std::string_view key) const {
    if (!is_mapping())
        return std::nullopt;
    for (yaml_node_pair_t *p = node_->data.mapping.pairs.start; p < node_->data.mapping.pairs.top;
         ++p) {
        Node k(doc_, yaml_document_get_node(doc_, p->key));
        if (k.is_scalar() && k.scalar() == key)
            return Node(doc_, yaml_document_get_node(doc_, p->value));
    }
    return std::nullopt;
}

void Document::Free::operator()(yaml_document_s *d) const {
    yaml_document_delete(d);
    delete d;
}

Parsed<Document> Document::parse(std::string_view text, std::string_view source) {
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser))
        return InputError{"yaml", "", "memory for libyaml's parser", std::string(source), 0};
    yaml_parser_set_input_string(&parser, reinterpret_cast<const unsigned char *>(text.data()),
                                 text.size());
    Document doc;
    doc.doc_.reset(new yaml_document_t{});
    const bool ok = yaml_parser_load(&parser, doc.doc_.get()) != 0;
    if (!ok) {
        std::string problem = parser.problem ? parser.problem : "unreadable";
        if (parser.context)
            problem = std::string(parser.context) + ": " + problem;
        const int line = static_cast<int>(parser.problem_mark.line) + 1;
        yaml_parser_delete(&parser);
        delete doc.doc_.release();  // yaml_parser_load has freed its contents already
        return InputError{"yaml", problem, "well-formed YAML", std::string(source), line};
    }
    yaml_parser_delete(&parser);
    return doc;
}

Node Document::root() const {
    return Node(doc_.get(), doc_ ? yaml_document_get_root_node(doc_.get()) : nullptr);
}

}  // namespace slurm_ai::yaml
