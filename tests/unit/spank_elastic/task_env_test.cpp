// The SPANK plugin's task environment: plugstack arguments, the rank layout every task
// computes on its own, GPU/NIC/CPU binding on real node topologies (shared/data and the
// mini-cluster's emulated nodes), and the NCCL topology file written from a topology.
#include "slurm_ai/spank_elastic/task_env.hpp"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "slurm_ai/spank_elastic/spank_config.hpp"
#include "slurm_ai/topology/cluster_files.hpp"
#include "slurm_ai/topology/fabric.hpp"
#include "slurm_ai/topology/node_topology.hpp"

using namespace slurm_ai;

namespace {

const std::string kData = SLURM_AI_DATA_DIR;
const std::string kInputs = SLURM_AI_TEST_INPUTS;

NodeTopology load(const std::string &path) {
    auto t = load_node_topology(path);
    INFO(path);
    REQUIRE(t.ok());
    return t.value();
}

Parsed<SpankConfig> args(std::vector<std::string_view> a) {
    return parse_spank_args(a);
}

std::map<std::string, std::string> as_map(const EnvList &env) {
    return {env.begin(), env.end()};
}

StepInfo step(std::string_view nodes, std::string_view tasks, bool batch = false) {
    auto s = parse_step_info(42, batch, nodes, tasks);
    REQUIRE(s.ok());
    return s.value();
}

ClusterGraph graph_of(const std::string &topology_conf_text) {
    auto fabric = parse_topology_conf(topology_conf_text, "test.topology.conf");
    REQUIRE(fabric.ok());
    auto g = ClusterGraph::build(fabric.value());
    REQUIRE(g.ok());
    return std::move(g).value();
}

}  // namespace

TEST_CASE("plugstack arguments: defaults, every key, and errors that name the argument") {
    auto d = args({});
    REQUIRE(d.ok());
    CHECK(d->rank_env);
    CHECK(d->gpu_bind);
    CHECK(d->nic_bind);
    CHECK(d->cpu_bind);
    CHECK_FALSE(d->nccl_topo);
    CHECK(d->master_port_min == 29500);

    auto all = args({"rank_env=off", "GPU_BIND=no", "nic_bind=0", "cpu_bind=false", "nccl_topo=on",
                     "nccl_topo_dir=/var/tmp", "master_port=40000-40099",
                     "config=/etc/slurm/ai.conf", "node_topology=/etc/slurm/node.xml"});
    REQUIRE(all.ok());
    CHECK_FALSE(all->rank_env);
    CHECK_FALSE(all->gpu_bind);
    CHECK_FALSE(all->nic_bind);
    CHECK_FALSE(all->cpu_bind);
    CHECK(all->nccl_topo);
    CHECK(all->nccl_topo_dir == "/var/tmp");
    CHECK(all->master_port_min == 40000);
    CHECK(all->master_port_max == 40099);
    CHECK(all->config == "/etc/slurm/ai.conf");
    CHECK(all->node_topology == "/etc/slurm/node.xml");
    auto one_port = args({"master_port=29400"});
    REQUIRE(one_port.ok());
    CHECK(one_port->master_port_max == 29400);

    struct Bad {
        const char *arg, *field, *expected;
    };
    for (auto [arg, field, expected] : {
             Bad{"rank_envs=on", "rank_envs", "a known key"},
             Bad{"gpu_bind=maybe", "gpu_bind", "on or off"},
             Bad{"master_port=80", "master_port", "LOW-HIGH"},
             Bad{"master_port=30000-29000", "master_port", "LOW-HIGH"},
             Bad{"config=ai.conf", "config", "an absolute path"},
             Bad{"debug", "plugstack.conf argument", "KEY=VALUE"},
         }) {
        auto p = args({arg});
        INFO(arg);
        REQUIRE_FALSE(p.ok());
        CHECK_THAT(p.error().message(), Catch::Contains(field) && Catch::Contains(expected));
    }
}

TEST_CASE("step info: Slurm's node list and compressed task counts") {
    auto s = step("n[1-3],m7", "2(x2),1,4");
    CHECK(s.nodes == std::vector<std::string>{"n1", "n2", "n3", "m7"});
    CHECK(s.tasks == std::vector<std::uint32_t>{2, 2, 1, 4});
    for (auto [nodes, tasks] :
         {std::pair{"n[1-3]", "2(x2)"}, std::pair{"n[1-2]", "2(x"}, std::pair{"n[1-2]", "a,b"},
          std::pair{"n[1-2", "1,1"}, std::pair{"", ""}}) {
        INFO(nodes << " " << tasks);
        CHECK_FALSE(parse_step_info(1, false, nodes, tasks).ok());
    }
}

TEST_CASE("rank layout: nodes grouped by leaf as the engine orders them, ranks contiguous") {
    // Leaves interleave with Slurm's (sorted) node order.
    auto g = graph_of(
        "SwitchName=a Nodes=n1,n3\nSwitchName=b Nodes=n2,n4\n"
        "SwitchName=top Switches=a,b\n");
    auto s = step("n[1-4]", "2,1,3,2");
    auto l = rank_layout(s, &g);
    CHECK(l.by_topology);
    std::vector<std::string> order;
    for (auto i : l.order)
        order.push_back(s.nodes[i]);
    CHECK(order == std::vector<std::string>{"n1", "n3", "n2", "n4"});
    CHECK(l.world_size == 8);
    // n1: 0-1, n3: 2-4, n2: 5, n4: 6-7.
    CHECK(l.first_rank == std::vector<std::uint32_t>{0, 5, 2, 6});

    // A node the fabric does not know: Slurm's order for all, so every task still agrees.
    auto s2 = step("n1,n2,x9", "1(x3)");
    auto l2 = rank_layout(s2, &g);
    CHECK_FALSE(l2.by_topology);
    CHECK(l2.order == std::vector<std::size_t>{0, 1, 2});
    CHECK(rank_layout(s2, nullptr).first_rank == std::vector<std::uint32_t>{0, 1, 2});
}

TEST_CASE("binding on NDv4 (8 GPUs, one NIC each, 4 NUMA nodes): one GPU per task, its NUMA CPUs") {
    auto t = load(kData + "/nccl-topo/ndv4-topo.xml");
    std::vector<int> all{0, 1, 2, 3, 4, 5, 6, 7};
    std::set<int> seen;
    for (std::uint32_t task = 0; task < 8; ++task) {
        auto b = bind_task(&t, all, task, 8);
        REQUIRE(b.gpus.size() == 1);
        seen.insert(b.gpus[0]);
        const Gpu &gpu = t.gpus[static_cast<std::size_t>(b.gpus[0])];
        CHECK(b.numa_node == gpu.numa_node);
        CHECK(b.cpus == gpu.cpus);
        CHECK(b.cpus.size() == 24);
        // The NICs of this file have no device names: nothing to put in NCCL_IB_HCA.
        CHECK(b.hcas.empty());
    }
    CHECK(seen.size() == 8);
    // Two tasks of four GPUs: the ring order keeps NUMA neighbours together.
    auto half = bind_task(&t, all, 0, 2);
    CHECK(half.gpus.size() == 4);
    // Uneven split (3 tasks, 8 GPUs): each task sees all of them.
    CHECK(bind_task(&t, all, 1, 3).gpus.size() == 8);
}

TEST_CASE(
    "binding follows each GPU's nearest named InfiniBand NIC; EFA and unknown NICs get none") {
    auto two = load(kInputs + "/minicluster-node-2nic.xml");
    std::vector<int> all{0, 1, 2, 3};
    std::vector<std::string> hca;
    std::vector<int> cpu;
    for (std::uint32_t task = 0; task < 4; ++task) {
        auto b = bind_task(&two, all, task, 4);
        REQUIRE(b.hcas.size() == 1);
        hca.push_back(b.hcas[0]);
        REQUIRE(b.cpus.size() == 1);
        cpu.push_back(b.cpus[0]);
    }
    CHECK(hca == std::vector<std::string>{"mlx5_0", "mlx5_0", "mlx5_1", "mlx5_1"});
    CHECK(cpu == std::vector<int>{0, 0, 1, 1});
    // A task over both pairs gets both NICs and both CPUs.
    auto both = bind_task(&two, all, 0, 1);
    CHECK(both.hcas == std::vector<std::string>{"mlx5_0", "mlx5_1"});
    CHECK(both.cpus == std::vector<int>{0, 1});
    // Only GPUs 1 and 3 in the step (Slurm's indexes): positions refer to that list.
    auto part = bind_task(&two, {3, 1}, 0, 2);
    REQUIRE(part.gpus.size() == 1);
    CHECK(part.gpus[0] == 1);  // GPU 1 comes first in ring order, at position 1
    CHECK(part.hcas == std::vector<std::string>{"mlx5_0"});

    auto p4d = load(kData + "/nccl-topo/p4d-24xl-topo.xml");
    auto efa = bind_task(&p4d, {0, 1, 2, 3, 4, 5, 6, 7}, 5, 8);
    CHECK(efa.gpus.size() == 1);
    CHECK(efa.hcas.empty());  // EFA is not driven through NCCL_IB_HCA
    CHECK_FALSE(efa.cpus.empty());

    // No topology, or GPU indexes beyond it: GPUs split in Slurm's order, nothing else.
    auto blind = bind_task(nullptr, {0, 1, 2, 3}, 1, 2);
    CHECK(blind.gpus == std::vector<int>{2, 3});
    CHECK(blind.hcas.empty());
    CHECK(blind.cpus.empty());
    CHECK(bind_task(&two, {0, 7}, 0, 1).hcas.empty());
}

TEST_CASE("task environment: ranks, binding, and parts switched off") {
    auto two = load(kInputs + "/minicluster-node-2nic.xml");
    auto s = step("n[1-2]", "4(x2)");
    auto l = rank_layout(s, nullptr);
    TaskPlace place{"n2", 2, {0, 1, 2, 3}, {"0", "1", "2", "3"}};
    SpankConfig on;
    auto env = task_environment(on, s, l, place, &two, "10.0.0.1", "/tmp/topo.xml");
    auto m = as_map(env.set);
    CHECK(m["MASTER_ADDR"] == "10.0.0.1");
    CHECK(m["MASTER_PORT"] == std::to_string(29500 + 42));
    CHECK(m["WORLD_SIZE"] == "8");
    CHECK(m["RANK"] == "6");
    CHECK(m["LOCAL_RANK"] == "2");
    CHECK(m["LOCAL_WORLD_SIZE"] == "4");
    CHECK(m["NODE_RANK"] == "1");
    CHECK(m["AI_NODE_ORDER"] == "n1,n2");
    CHECK(m["CUDA_VISIBLE_DEVICES"] == "2");
    CHECK(m["NCCL_IB_HCA"] == "=mlx5_1");
    CHECK(m["AI_NUMA_NODE"] == "1");
    CHECK(env.cpus == std::vector<int>{1});
    CHECK(m.count("NCCL_TOPO_FILE") == 0);  // nccl_topo is off by default

    // Slurm bound the task itself (--gpus-per-task): its CUDA_VISIBLE_DEVICES stands.
    TaskPlace bound{"n2", 2, {0, 1, 2, 3}, {"2"}};
    auto kept = as_map(task_environment(on, s, l, bound, &two, "a", "").set);
    CHECK(kept.count("CUDA_VISIBLE_DEVICES") == 0);
    CHECK(kept.count("NCCL_IB_HCA") == 0);

    SpankConfig off;
    off.rank_env = off.gpu_bind = off.nic_bind = off.cpu_bind = false;
    off.nccl_topo = true;
    auto quiet = task_environment(off, s, l, place, &two, "a", "/tmp/topo.xml");
    CHECK(as_map(quiet.set) ==
          std::map<std::string, std::string>{{"NCCL_TOPO_FILE", "/tmp/topo.xml"}});
    CHECK(quiet.cpus.empty());

    // The batch script's step: job-level variables only.
    auto batch = step("n[1-2]", "1(x2)", true);
    auto b = as_map(task_environment(on, batch, rank_layout(batch, nullptr),
                                     TaskPlace{"n1", 0, {0, 1, 2, 3}, {"0", "1", "2", "3"}}, &two,
                                     "a", "")
                        .set);
    CHECK(b.count("MASTER_ADDR") == 1);
    CHECK(b.count("RANK") == 0);
    CHECK(b.count("CUDA_VISIBLE_DEVICES") == 0);

    // A node without GPUs: ranks only.
    auto plain =
        as_map(task_environment(on, s, l, TaskPlace{"n1", 0, {}, {}}, nullptr, "a", "").set);
    CHECK(plain.count("RANK") == 1);
    CHECK(plain.count("CUDA_VISIBLE_DEVICES") == 0);
    CHECK(plain.count("NCCL_IB_HCA") == 0);
}

TEST_CASE("NCCL topology written from a topology reads back with the same GPUs, NICs and links") {
    for (const std::string &path :
         {kData + "/nccl-topo/ndv4-topo.xml", kData + "/nccl-topo/ndv5-topo.xml",
          kData + "/nccl-topo/p4d-24xl-topo.xml", kData + "/hwloc/nvidiaDGX2.xml",
          kData + "/hwloc/power8gpudistances.xml", kInputs + "/minicluster-node-2nic.xml"}) {
        INFO(path);
        auto t = load(path);
        auto back = parse_nccl_topo(write_nccl_topo(t), "written");
        REQUIRE(back.ok());
        const NodeTopology &r = back.value();
        REQUIRE(r.gpus.size() == t.gpus.size());
        REQUIRE(r.nics.size() == t.nics.size());
        CHECK(r.gpu_nic_pairing() == t.gpu_nic_pairing());
        for (std::size_t g = 0; g < t.gpus.size(); ++g) {
            CHECK(r.gpus[g].pci_busid == t.gpus[g].pci_busid);
            CHECK(r.gpus[g].numa_node == t.gpus[g].numa_node);
            CHECK(r.gpus[g].cpus == t.gpus[g].cpus);
            for (std::size_t h = 0; h < t.gpus.size(); ++h) {
                auto want = t.path(static_cast<int>(g), static_cast<int>(h));
                auto got = r.path(static_cast<int>(g), static_cast<int>(h));
                // PXB comes back as PIX (one synthetic switch); everything else as it was.
                if (want == PathType::kPCIeBridges)
                    want = PathType::kPCIeSwitch;
                CHECK(to_string(got) == to_string(want));
                if (want == PathType::kNVLink || want == PathType::kNVSwitch)
                    CHECK(
                        r.bandwidth(static_cast<int>(g), static_cast<int>(h)) ==
                        Approx(t.bandwidth(static_cast<int>(g), static_cast<int>(h))).epsilon(0.1));
            }
        }
        CHECK((r.nvswitches > 0) == (t.nvswitches > 0));
    }
}

TEST_CASE("the plugstack.conf line shipped in contrib/ parses, and every key is documented there") {
    std::ifstream in(std::string(SLURM_AI_CONTRIB) + "/slurm.conf.d/plugstack.conf.d/ai.conf");
    REQUIRE(in);
    std::string line, text, plugin_line;
    while (std::getline(in, line)) {
        text += line + "\n";
        if (line.starts_with("required ") || line.starts_with("optional "))
            plugin_line = line;
    }
    REQUIRE_FALSE(plugin_line.empty());
    std::istringstream words(plugin_line);
    std::vector<std::string> all{std::istream_iterator<std::string>(words), {}};
    REQUIRE(all.size() >= 2);
    std::vector<std::string_view> a(all.begin() + 2, all.end());
    auto parsed = parse_spank_args(a);
    INFO(plugin_line);
    REQUIRE(parsed.ok());
    for (const char *key : {"rank_env=", "gpu_bind=", "nic_bind=", "cpu_bind=", "nccl_topo=",
                            "nccl_topo_dir=", "master_port=", "config=", "node_topology=",
                            "lease_program="})
        CHECK_THAT(text, Catch::Contains(std::string("#   ") + key));
}

TEST_CASE("plugstack.conf: lease_program= names the command of AI_REPORT_FAILURE", "[spank]") {
    std::vector<std::string_view> good{"lease_program=/opt/slurm-ai/bin/ai-lease"};
    auto c = parse_spank_args(good);
    REQUIRE(c.ok());
    CHECK(c->lease_program == "/opt/slurm-ai/bin/ai-lease");
    CHECK(parse_spank_args({}).value().lease_program == SpankConfig::default_lease_program());
    std::vector<std::string_view> relative{"lease_program=ai-lease"};
    auto bad = parse_spank_args(relative);
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().field == "plugstack.conf argument lease_program");
}
