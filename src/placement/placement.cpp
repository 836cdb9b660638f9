#include "slurm_ai/placement/placement.hpp"

#include <algorithm>
#include <charconv>
#include <sstream>

#include <nlohmann/json.hpp>

#include "slurm_ai/common/hostlist.hpp"

namespace slurm_ai {

std::size_t Placement::rank_count() const {
    std::size_t n = 0;
    for (std::size_t i = 0; i < hosts.size(); ++i)
        n += i < gpus.size() && !gpus[i].empty() ? gpus[i].size() : 1;
    return n;
}

std::vector<GpuRef> Placement::ranks() const {
    std::vector<GpuRef> out;
    out.reserve(rank_count());
    for (std::size_t i = 0; i < hosts.size(); ++i) {
        if (i >= gpus.size() || gpus[i].empty())
            out.push_back({hosts[i], -1});
        else
            for (int g : gpus[i])
                out.push_back({hosts[i], g});
    }
    return out;
}

std::vector<int> ring_host_order(const ClusterGraph &graph, std::vector<int> hosts) {
    std::stable_sort(hosts.begin(), hosts.end(), [&](int a, int b) {
        int la = graph.host_leaf(a), lb = graph.host_leaf(b);
        return la != lb ? la < lb : a < b;
    });
    return hosts;
}

std::string host_list(const ClusterGraph &graph, const Placement &p) {
    std::vector<std::string> names;
    for (int h : p.hosts)
        names.push_back(graph.host_name(h));
    return compress_hostlist(names);
}

std::string gpu_list(const ClusterGraph &graph, const Placement &p) {
    std::string out;
    for (std::size_t i = 0; i < p.hosts.size(); ++i) {
        if (!out.empty())
            out += ' ';
        out += graph.host_name(p.hosts[i]);
        if (i < p.gpus.size() && !p.gpus[i].empty()) {
            out += ':';
            for (std::size_t k = 0; k < p.gpus[i].size(); ++k)
                out += (k ? "," : "") + std::to_string(p.gpus[i][k]);
        }
    }
    return out;
}

std::optional<std::vector<HostGpus>> parse_gpu_list(std::string_view text) {
    std::vector<HostGpus> out;
    std::istringstream items{std::string(text)};
    for (std::string item; items >> item;) {
        const auto colon = item.find(':');
        HostGpus h{item.substr(0, colon), {}};
        if (h.first.empty())
            return std::nullopt;
        if (colon != std::string::npos) {
            std::istringstream list(item.substr(colon + 1));
            for (std::string g; std::getline(list, g, ',');) {
                int v = 0;
                auto [end, ec] = std::from_chars(g.data(), g.data() + g.size(), v);
                if (ec != std::errc() || end != g.data() + g.size() || v < 0)
                    return std::nullopt;
                h.second.push_back(v);
            }
        }
        out.push_back(std::move(h));
    }
    return out;
}

void to_json(nlohmann::json &j, const Placement &p) {
    j = nlohmann::json{{"policy", p.policy},
                       {"hosts", p.hosts},
                       {"gpus", p.gpus},
                       {"comm_s", p.comm_s},
                       {"lower_bound_s", p.lower_bound_s},
                       {"efficiency", p.efficiency},
                       {"risk", p.risk},
                       {"algorithm", p.algorithm}};
}

}  // namespace slurm_ai
