#include "page_template.hpp"

#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

namespace slurm_ai::sim {

std::string fill_page(std::string_view page_template, const Slots &slots) {
    std::string out;
    std::set<std::string> used;
    std::size_t at = 0;
    while (at < page_template.size()) {
        const std::size_t open = page_template.find("{{", at);
        if (open == std::string_view::npos) {
            out += page_template.substr(at);
            break;
        }
        const std::size_t close = page_template.find("}}", open + 2);
        if (close == std::string_view::npos)
            throw std::runtime_error("page template: '{{' without '}}'");
        out += page_template.substr(at, open - at);
        const std::string name(page_template.substr(open + 2, close - open - 2));
        const auto slot = slots.find(name);
        if (slot == slots.end())
            throw std::runtime_error("page template: no figure named {{" + name + "}}");
        used.insert(name);
        out += slot->second;
        at = close + 2;
        // A placeholder alone on its line that gives whole lines (or none) takes the line.
        const bool alone = (open == 0 || page_template[open - 1] == '\n') &&
                           at < page_template.size() && page_template[at] == '\n';
        if (alone && (slot->second.empty() || slot->second.back() == '\n'))
            ++at;
    }
    for (const auto &[name, text] : slots)
        if (!used.count(name))
            throw std::runtime_error("page template: figure {{" + name + "}} is not on the page");
    return out;
}

std::string read_page_template(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    if (!in)
        throw std::runtime_error("cannot read the page template " + path);
    return text.str();
}

}  // namespace slurm_ai::sim
