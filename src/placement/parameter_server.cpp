#include <algorithm>
#include <string>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/prim_minimum_spanning_tree.hpp>

#include "collectives.hpp"

namespace slurm_ai::detail {
namespace {

// The ranks of each host first combine their gradients locally (and share the result
// back at the end), so that one rank per host, its first, talks across the fabric.
double local_combine_s(const FlowModel &m, double bytes) {
    return ring_allreduce_s(m, m.ranks_by_host(), bytes);
}

// Depth of every vertex of a tree given as a parent array, and the deepest.
int tree_depth(const std::vector<std::size_t> &parent, std::size_t root) {
    int deepest = 0;
    for (std::size_t v = 0; v < parent.size(); ++v) {
        int d = 0;
        for (std::size_t u = v; u != root && d <= static_cast<int>(parent.size()); u = parent[u])
            ++d;
        deepest = std::max(deepest, d);
    }
    return deepest;
}

}  // namespace

// Two ways to run a parameter server over the job's hosts:
//  - fixed: every host sends its gradients straight to the server hosts (the first
//    `servers` hosts, each holding 1/servers of the parameters) and gets parameters back;
//  - mst: gradients are aggregated up a minimum spanning tree of the hosts, weighted by
//    the time to move the whole model between two hosts, rooted at its centre; each host
//    adds its children's gradients to its own before passing one copy up, and parameters
//    come back down the same tree.
// The estimate is the faster of the two; both are reported.
CommEstimate parameter_server(const FlowModel &m, std::uint32_t servers, double bytes) {
    const auto &by_host = m.ranks_by_host();
    const std::size_t n = by_host.size();
    double local = local_combine_s(m, bytes);
    if (n < 2)
        return CommEstimate{local, "ps:local", {{"inside the host", local}}};

    // Fixed servers.
    std::size_t s = std::clamp<std::size_t>(servers, 1, n);
    std::vector<Flow> up, down;
    for (std::size_t h = 0; h < n; ++h)
        for (std::size_t k = 0; k < s; ++k)
            if (h != k) {
                up.push_back({by_host[h][0], by_host[k][0], bytes / s});
                down.push_back({by_host[k][0], by_host[h][0], bytes / s});
            }
    double fixed = local + m.phase_time(up) + m.phase_time(down);
    {
        LedgerScope scope(m.ledger(), "ps:fixed");
        m.record(up, 1);
        m.record(down, 1);
    }

    // Aggregation tree: Prim's MST over the complete graph of hosts.
    using Graph =
        boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, boost::no_property,
                              boost::property<boost::edge_weight_t, double>>;
    Graph g(n);
    for (std::size_t a = 0; a < n; ++a)
        for (std::size_t b = a + 1; b < n; ++b)
            boost::add_edge(a, b, m.pair_time(by_host[a][0], by_host[b][0], bytes), g);
    std::vector<std::size_t> parent(n);
    // Root at the host whose tree is shallowest: try each as root (n is a job's host
    // count, small) and keep the best.
    std::size_t best_root = 0;
    int best_depth = static_cast<int>(n) + 1;
    std::vector<std::size_t> best_parent;
    for (std::size_t root = 0; root < n; ++root) {
        boost::prim_minimum_spanning_tree(g, &parent[0], boost::root_vertex(root));
        int d = tree_depth(parent, root);
        if (d < best_depth) {
            best_depth = d;
            best_root = root;
            best_parent = parent;
        }
        if (n > 64)
            break;  // large jobs: the first host's tree, to bound the cost of this loop
    }
    std::vector<Flow> tree_up, tree_down;
    for (std::size_t v = 0; v < n; ++v)
        if (v != best_root) {
            tree_up.push_back({by_host[v][0], by_host[best_parent[v]][0], bytes});
            tree_down.push_back({by_host[best_parent[v]][0], by_host[v][0], bytes});
        }
    double hop = m.alpha(by_host[0][0], by_host[1][0]);
    double mst = local + m.phase_time(tree_up) + m.phase_time(tree_down) +
                 2 * std::max(best_depth - 1, 0) * hop;
    {
        LedgerScope scope(m.ledger(), "ps:mst");
        m.record(tree_up, 1);
        m.record(tree_down, 1);
    }

    std::vector<std::pair<std::string, double>> terms{
        {"aggregation tree (depth " + std::to_string(best_depth) + ")", mst},
        {"fixed server" + std::string(s > 1 ? "s" : ""), fixed},
        {"inside hosts", local}};
    return mst <= fixed ? CommEstimate{mst, "ps:mst", terms}
                        : CommEstimate{fixed, "ps:fixed", terms};
}

}  // namespace slurm_ai::detail
