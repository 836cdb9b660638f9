#include "slurm_ai/spank_elastic/task_env.hpp"

#include <algorithm>
#include <charconv>
#include <set>

#include "slurm_ai/common/hostlist.hpp"
#include "slurm_ai/common/text_scan.hpp"
#include "slurm_ai/placement/placement.hpp"

namespace slurm_ai {
namespace {

using text::lower;
using text::split;
using text::trim;

std::optional<std::uint32_t> to_uint(std::string_view s) {
    std::uint32_t n = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
    if (ec != std::errc() || end != s.data() + s.size() || s.empty())
        return std::nullopt;
    return n;
}

// "2(x3),1" -> 2 2 2 1, Slurm's compressed form of SLURM_STEP_TASKS_PER_NODE.
Parsed<std::vector<std::uint32_t>> expand_counts(std::string_view text) {
    constexpr std::uint32_t kMaxNodes = 1u << 20;
    InputError bad{"SLURM_STEP_TASKS_PER_NODE", std::string(text), "counts like 2(x3),1", "", 0};
    std::vector<std::uint32_t> out;
    for (std::string_view item : split(text, ',')) {
        std::uint32_t repeat = 1;
        if (auto open = item.find("(x"); open != std::string_view::npos) {
            if (!item.ends_with(')'))
                return bad;
            auto r = to_uint(item.substr(open + 2, item.size() - open - 3));
            if (!r || *r == 0 || *r > kMaxNodes)
                return bad;
            repeat = *r;
            item = item.substr(0, open);
        }
        auto n = to_uint(item);
        if (!n || out.size() + repeat > kMaxNodes)
            return bad;
        out.insert(out.end(), repeat, *n);
    }
    return out;
}

std::string join(const std::vector<std::string> &items, char sep) {
    std::string out;
    for (const auto &s : items) {
        if (!out.empty())
            out += sep;
        out += s;
    }
    return out;
}

// A NIC NCCL drives through verbs (InfiniBand or RoCE): the only kind NCCL_IB_HCA names.
bool verbs_device(const Nic &nic) {
    // Files that give no device name (only a PCI bus id) cannot say what to name.
    if (nic.name.empty() || nic.name == nic.pci_busid)
        return false;
    if (nic.kind == "ib" || nic.kind == "roce")
        return true;
    for (std::string_view prefix : {"mlx4_", "mlx5_", "bnxt_re", "irdma", "qedr"})
        if (nic.name.starts_with(prefix))
            return true;
    return false;
}

}  // namespace

Parsed<StepInfo> parse_step_info(std::uint32_t job_id, bool batch, std::string_view node_list,
                                 std::string_view tasks_per_node) {
    StepInfo s;
    s.job_id = job_id;
    s.batch = batch;
    auto nodes = expand_hostlist(node_list, "SLURM_STEP_NODELIST");
    if (!nodes)
        return nodes.error();
    if (nodes->empty())
        return InputError{"SLURM_STEP_NODELIST", std::string(node_list), "at least one node", "",
                          0};
    auto counts = expand_counts(tasks_per_node);
    if (!counts)
        return counts.error();
    if (counts->size() != nodes->size())
        return InputError{"SLURM_STEP_TASKS_PER_NODE", std::string(tasks_per_node),
                          "one count per node of " + std::string(node_list) + " (" +
                              std::to_string(nodes->size()) + ")",
                          "", 0};
    s.nodes = std::move(nodes).value();
    s.tasks = std::move(counts).value();
    return s;
}

RankLayout rank_layout(const StepInfo &step, const ClusterGraph *fabric) {
    RankLayout l;
    const std::size_t n = step.nodes.size();
    for (std::size_t i = 0; i < n; ++i)
        l.order.push_back(i);
    if (fabric) {
        std::vector<int> hosts;
        for (const auto &name : step.nodes)
            hosts.push_back(fabric->host_index(name));
        if (std::find(hosts.begin(), hosts.end(), -1) == hosts.end() &&
            std::set<int>(hosts.begin(), hosts.end()).size() == n) {
            auto ordered = ring_host_order(*fabric, hosts);
            for (std::size_t r = 0; r < n; ++r)
                l.order[r] = static_cast<std::size_t>(
                    std::find(hosts.begin(), hosts.end(), ordered[r]) - hosts.begin());
            l.by_topology = true;
        }
    }
    l.first_rank.assign(n, 0);
    for (std::size_t idx : l.order) {
        l.first_rank[idx] = l.world_size;
        l.world_size += step.tasks[idx];
    }
    return l;
}

TaskBinding bind_task(const NodeTopology *topo, const std::vector<int> &node_gpus,
                      std::uint32_t local_id, std::uint32_t local_count,
                      const std::vector<int> &gpu_rails) {
    TaskBinding b;
    if (node_gpus.empty())
        return b;
    const bool known = topo && std::all_of(node_gpus.begin(), node_gpus.end(), [&](int g) {
                           return g >= 0 && static_cast<std::size_t>(g) < topo->gpus.size();
                       });
    // Ring order over topology indexes, then back to positions in node_gpus.
    std::vector<int> ring;
    if (known) {
        std::vector<int> sorted = node_gpus;
        std::sort(sorted.begin(), sorted.end());
        for (int g : gpu_rank_order(*topo, sorted, gpu_rails))
            ring.push_back(static_cast<int>(std::find(node_gpus.begin(), node_gpus.end(), g) -
                                            node_gpus.begin()));
    } else {
        for (std::size_t i = 0; i < node_gpus.size(); ++i)
            ring.push_back(static_cast<int>(i));
    }
    const std::size_t n = ring.size();
    if (local_count > 0 && local_id < local_count && n % local_count == 0) {
        std::size_t k = n / local_count;
        b.gpus.assign(ring.begin() + static_cast<long>(local_id * k),
                      ring.begin() + static_cast<long>((local_id + 1) * k));
    } else {
        b.gpus = ring;
    }
    if (!known)
        return b;
    auto pairing = topo->gpu_nic_pairing();
    std::set<int> cpus;
    for (int pos : b.gpus) {
        int g = node_gpus[static_cast<std::size_t>(pos)];
        if (int nic = pairing[static_cast<std::size_t>(g)]; nic >= 0) {
            const Nic &dev = topo->nics[static_cast<std::size_t>(nic)];
            if (verbs_device(dev) &&
                std::find(b.hcas.begin(), b.hcas.end(), dev.name) == b.hcas.end())
                b.hcas.push_back(dev.name);
        }
        const Gpu &gpu = topo->gpus[static_cast<std::size_t>(g)];
        cpus.insert(gpu.cpus.begin(), gpu.cpus.end());
        if (b.numa_node < 0)
            b.numa_node = gpu.numa_node;
    }
    b.cpus.assign(cpus.begin(), cpus.end());
    return b;
}

std::uint32_t master_port(const SpankConfig &config, std::uint32_t job_id) {
    std::uint32_t span = config.master_port_max - config.master_port_min + 1;
    return config.master_port_min + job_id % span;
}

Parsed<std::vector<int>> parse_gpu_list(std::string_view field, std::string_view text) {
    std::vector<int> out;
    if (trim(text).empty())
        return out;
    for (std::string_view item : split(text, ',')) {
        auto n = to_uint(trim(item));
        if (!n || *n > 4096)
            return InputError{std::string(field), std::string(text),
                              "GPU indexes separated by commas", "", 0};
        out.push_back(static_cast<int>(*n));
    }
    return out;
}

TaskEnv task_environment(const SpankConfig &config, const StepInfo &step, const RankLayout &layout,
                         const TaskPlace &task, const NodeTopology *topo,
                         std::string_view master_addr, std::string_view nccl_topo_file) {
    TaskEnv env;
    auto set = [&](std::string name, std::string value) {
        env.set.emplace_back(std::move(name), std::move(value));
    };
    auto node_it = std::find(step.nodes.begin(), step.nodes.end(), task.node);
    if (node_it == step.nodes.end()) {
        env.notes.push_back("node " + task.node + " is not in the step's node list");
        return env;
    }
    const auto node = static_cast<std::size_t>(node_it - step.nodes.begin());
    const std::uint32_t local_count = step.tasks[node];

    if (config.rank_env) {
        std::vector<std::string> order;
        for (std::size_t idx : layout.order)
            order.push_back(step.nodes[idx]);
        set("MASTER_ADDR", std::string(master_addr));
        set("MASTER_PORT", std::to_string(master_port(config, step.job_id)));
        set("AI_NODE_ORDER", join(order, ','));
        set("AI_RANK_ORDER", layout.by_topology ? "topology" : "slurm");
        if (!step.batch) {
            const auto node_rank = static_cast<std::size_t>(
                std::find(layout.order.begin(), layout.order.end(), node) - layout.order.begin());
            set("WORLD_SIZE", std::to_string(layout.world_size));
            set("RANK", std::to_string(layout.first_rank[node] + task.local_id));
            set("LOCAL_RANK", std::to_string(task.local_id));
            set("LOCAL_WORLD_SIZE", std::to_string(local_count));
            set("NODE_RANK", std::to_string(node_rank));
            set("GROUP_RANK", std::to_string(node_rank));
            set("NNODES", std::to_string(step.nodes.size()));
        }
    }
    if (step.batch)  // the batch script runs once for the whole job: no per-task binding
        return env;

    TaskBinding b = bind_task(topo, task.node_gpus, task.local_id, local_count, task.gpu_rails);
    // Slurm already bound GPUs per task (--gpu-bind, --gpus-per-task): the user chose.
    const bool slurm_bound = task.cuda_ids.size() != task.node_gpus.size();
    if (config.gpu_bind && !b.gpus.empty()) {
        if (slurm_bound) {
            env.notes.push_back("GPUs already bound per task by Slurm; CUDA_VISIBLE_DEVICES kept");
        } else {
            std::vector<std::string> ids;
            for (int pos : b.gpus)
                ids.push_back(task.cuda_ids[static_cast<std::size_t>(pos)]);
            set("CUDA_DEVICE_ORDER", "PCI_BUS_ID");
            set("CUDA_VISIBLE_DEVICES", join(ids, ','));
        }
    }
    if (config.nic_bind && !b.hcas.empty() && !slurm_bound) {
        // "=" asks NCCL for these devices exactly, not every name they prefix.
        set("NCCL_IB_HCA", "=" + join(b.hcas, ','));
    } else if (config.nic_bind && !task.node_gpus.empty() && b.hcas.empty()) {
        env.notes.push_back("no InfiniBand/RoCE NIC known near the task's GPUs");
    }
    if (config.nccl_topo && !nccl_topo_file.empty())
        set("NCCL_TOPO_FILE", std::string(nccl_topo_file));
    if (config.cpu_bind && !slurm_bound) {
        env.cpus = b.cpus;
        if (b.numa_node >= 0)
            set("AI_NUMA_NODE", std::to_string(b.numa_node));
    }
    return env;
}

}  // namespace slurm_ai
