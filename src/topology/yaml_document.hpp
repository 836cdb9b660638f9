// A YAML document read with libyaml, for the topology readers (topograph's models): the
// tree of nodes with their line numbers, aliases resolved to the node they name. Only
// the reader that walks it decides what a node must be, and says so with an InputError.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "slurm_ai/common/input_error.hpp"

struct yaml_document_s;
struct yaml_node_s;

namespace slurm_ai::yaml {

class Node {
  public:
    enum class Kind { kScalar, kSequence, kMapping, kEmpty };
    Kind kind() const;
    bool is_scalar() const { return kind() == Kind::kScalar; }
    bool is_sequence() const { return kind() == Kind::kSequence; }
    bool is_mapping() const { return kind() == Kind::kMapping; }
    int line() const;                                         // 1-based
    std::string scalar() const;                               // empty unless a scalar
    std::vector<Node> items() const;                          // a sequence's
    std::vector<std::pair<std::string, Node>> pairs() const;  // a mapping's; keys as scalars
    std::optional<Node> get(std::string_view key) const;      // a mapping's value for key

  private:
    friend class Document;
    Node(yaml_document_s *doc, yaml_node_s *node) : doc_(doc), node_(node) {}
    yaml_document_s *doc_;
    yaml_node_s *node_;
};

class Document {
  public:
    // The first document of `text`; an empty text gives an empty root. Errors name the
    // line and libyaml's problem.
    static Parsed<Document> parse(std::string_view text, std::string_view source);
    Node root() const;

  private:
    struct Free {
        void operator()(yaml_document_s *d) const;
    };
    std::unique_ptr<yaml_document_s, Free> doc_;
};

}  // namespace slurm_ai::yaml
