// SpankStep: what the SPANK plugin does in slurmstepd, without Slurm. The step's setup
// (the node's topology, the NCCL topology file and its removal), the --ai-* values Slurm
// handed the option callback, and one task's environment read and written through TaskIo.
#include "slurm_ai/spank_elastic/spank_step.hpp"

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <unistd.h>
#include <catch2/catch.hpp>

#include "slurm_ai/job/spank_env.hpp"
#include "scratch_dir.hpp"

using namespace slurm_ai;

namespace {

const std::string kInputs = SLURM_AI_TEST_INPUTS;
const std::string kData = SLURM_AI_DATA_DIR;

// A task's environment as a map: what get reads and set writes.
struct FakeTask {
    std::map<std::string, std::string> env;
    TaskIo io() {
        TaskIo io;
        io.get = [this](const char *name) -> const char * {
            auto it = env.find(name);
            return it == env.end() ? nullptr : it->second.c_str();
        };
        io.set = [this](const char *name, const char *value) {
            env[name] = value;
            return true;
        };
        return io;
    }
};

}  // namespace

TEST_CASE("a step's NCCL topology file is written at setup and removed at cleanup",
          "[spank]") {
    const test::ScratchDir scratch("spank-step");
    const auto &dir = scratch.path;
    SpankStep step;
    // An hwloc file (a DGX-2): tasks need NCCL's format, so the step writes one.
    const std::string node = "node_topology=" + kData + "/hwloc/nvidiaDGX2.xml";
    const std::string topo_dir = "nccl_topo_dir=" + dir.string();
    const std::string conf = "config=" + (dir / "absent.conf").string();
    std::vector<std::string_view> args{node, "nccl_topo=on", topo_dir, conf, "cpu_bind=off"};
    REQUIRE_FALSE(step.configure(args));

    const std::string notes = step.setup("", "", "g1", 7, 0);
    CHECK_THAT(notes, Catch::Contains("no ai_select.conf at " + (dir / "absent.conf").string()));
    const std::string file = step.nccl_topo_file();
    CHECK(file == (dir / "ai-nccl-topo-7.0.g1.xml").string());
    CHECK(std::filesystem::exists(file));
    CHECK_FALSE(step.cleanup());
    CHECK_FALSE(std::filesystem::exists(file));
    CHECK_FALSE(step.cleanup());  // once

    // A node already described in NCCL's format is handed over as it is, never removed.
    SpankStep nccl;
    const std::string nccl_node = "node_topology=" + kInputs + "/minicluster-node.xml";
    std::vector<std::string_view> nccl_args{nccl_node, "nccl_topo=on", topo_dir, conf};
    REQUIRE_FALSE(nccl.configure(nccl_args));
    nccl.setup("", "", "g1", 7, 0);
    CHECK(nccl.nccl_topo_file() == kInputs + "/minicluster-node.xml");
    CHECK_FALSE(nccl.cleanup());
    CHECK(std::filesystem::exists(kInputs + "/minicluster-node.xml"));

    std::vector<std::string_view> bad{"nccl_topo=maybe"};
    auto e = step.configure(bad);
    REQUIRE(e);
    CHECK_THAT(e->message(), Catch::Contains("nccl_topo='maybe'"));
}

TEST_CASE("a task's environment from Slurm's variables and the options Slurm handed over",
          "[spank]") {
    SpankStep step;
    const std::string node = "node_topology=" + kInputs + "/minicluster-node.xml";
    std::vector<std::string_view> args{node, "cpu_bind=off"};
    REQUIRE_FALSE(step.configure(args));
    step.setup("", "", "g1", 9, 0);

    FakeTask task;
    task.env = {{"SLURM_STEP_NODELIST", "g[1-2]"},
                {"SLURM_STEP_TASKS_PER_NODE", "2(x2)"},
                {"SLURMD_NODENAME", "g2"},
                {"SLURM_STEP_GPUS", "0,1,2,3"},
                {"SLURM_RESTART_COUNT", "1"}};
    // Slurm took --ai-checkpoint out of the task's environment and handed it to the plugin.
    step.remember_option("ai-checkpoint", "/ckpt/%j,keep=2");
    auto notes = step.task_setup(task.io(), 9, false, 1);
    REQUIRE(notes);
    CHECK(task.env["RANK"] == "3");  // second task of the second node
    CHECK(task.env["WORLD_SIZE"] == "4");
    CHECK(task.env["AI_CHECKPOINT_DIR"] == "/ckpt/9");
    CHECK(task.env["AI_CHECKPOINT_KEEP"] == "2");
    // How the task reports a lost peer: the package's ai-lease unless plugstack.conf names one.
    CHECK(task.env["AI_REPORT_FAILURE"] == SpankConfig::default_lease_program() + " report");
    CHECK(SpankConfig::default_lease_program().ends_with("/ai-lease"));

    // Not handed over: the batch environment's copy (sbatch's SLURM_SPANK_...) serves.
    SpankStep fresh;
    REQUIRE_FALSE(fresh.configure(args));
    FakeTask copy;
    copy.env = task.env;
    copy.env.erase("AI_CHECKPOINT_DIR");
    copy.env[spank_option_env_name("ai-checkpoint", SpankEnvCopy::kCommand)] = "/other/%j";
    REQUIRE(fresh.task_setup(copy.io(), 9, false, 0));
    CHECK(copy.env["AI_CHECKPOINT_DIR"] == "/other/9");

    // Without the step's node list there is no rank to give: an error naming the variable.
    FakeTask empty;
    auto none = step.task_setup(empty.io(), 9, false, 0);
    REQUIRE_FALSE(none);
    CHECK_THAT(none.error().message(), Catch::Contains("SLURM_STEP_NODELIST"));
}
