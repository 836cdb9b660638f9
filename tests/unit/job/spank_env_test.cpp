#include "slurm_ai/job/spank_env.hpp"

#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "slurm_ai/job/job_hints.hpp"
#include "slurm_ai/job/job_options.hpp"

using namespace slurm_ai;

TEST_CASE("option variables are named as Slurm names them", "[spank_env]") {
    // plugstack.c (_opt_env_name): _SLURM_SPANK_OPTION_<plugin>_<option>, every character
    // but a letter or a digit made '_'; prologs see SPANK_ before it, sbatch's copy in the
    // batch script's environment and the commands' own variables have SLURM_SPANK_.
    CHECK(spank_option_env_name("ai-comm") == "_SLURM_SPANK_OPTION_ai_ai_comm");
    CHECK(spank_option_env_name("ai-comm", SpankEnvCopy::kProlog) ==
          "SPANK__SLURM_SPANK_OPTION_ai_ai_comm");
    CHECK(spank_option_env_name("ai-comm", SpankEnvCopy::kCommand) ==
          "SLURM_SPANK__SLURM_SPANK_OPTION_ai_ai_comm");
    CHECK(spank_option_env_name("a.b/c:d9") == "_SLURM_SPANK_OPTION_ai_a_b_c_d9");
    CHECK(spank_dag_env_name() == "AI_DAG");
    CHECK(spank_dag_env_name(SpankEnvCopy::kCommand) == "SLURM_SPANK_AI_DAG");
}

TEST_CASE("an entry is read back in every form, and only the suite's", "[spank_env]") {
    for (auto copy : {SpankEnvCopy::kJob, SpankEnvCopy::kProlog, SpankEnvCopy::kCommand}) {
        for (const auto &opt : hint_options()) {
            const std::string entry = spank_option_env_name(opt.name, copy) + "=v=1";
            auto read = read_spank_env_entry(entry);
            INFO(entry);
            REQUIRE(read);
            CHECK(read->option == opt.name);
            CHECK(read->value == "v=1");
            CHECK(read->copy == copy);
        }
        const std::string dag_entry = spank_dag_env_name(copy) + "={}";
        auto dag = read_spank_env_entry(dag_entry);
        REQUIRE(dag);
        CHECK(dag->option == kDagEnvName);
        CHECK(dag->value == "{}");
    }
    CHECK(read_spank_env_entry("_SLURM_SPANK_OPTION_ai_ai_comm=")->value.empty());
    for (const char *other :
         {"_SLURM_SPANK_OPTION_pyxis_container_image=ubuntu", "_SLURM_SPANK_OPTION_ai_ai_colour=red",
          "_SLURM_SPANK_OPTION_ai_ai_comm", "SLURM_JOB_ID=7", "XSPANK__SLURM_SPANK_OPTION_ai_ai_comm=tp",
          "", "SPANK_SLURM_SPANK_AI_DAG=x", "AI_DAGS=x"})
        CHECK_FALSE(read_spank_env_entry(other));
}

TEST_CASE("a job's options are decoded from its SPANK environment", "[spank_env][hints]") {
    std::vector<const char *> env = {
        "_SLURM_SPANK_OPTION_pyxis_container_image=ubuntu",
        "_SLURM_SPANK_OPTION_ai_ai_comm=pipeline:stages=4",
        "SPANK__SLURM_SPANK_OPTION_ai_ai_elastic=2:8",
        "_SLURM_SPANK_OPTION_ai_ai_gang=g:1",
        "SLURM_SPANK__SLURM_SPANK_OPTION_ai_ai_locality=sideways",
        nullptr,
    };
    auto read = decode_job_options(env);
    REQUIRE(read.hints.comm);
    CHECK(read.hints.comm->stages == 4);
    REQUIRE(read.hints.elastic);
    CHECK(read.hints.elastic->max_nodes == 8);
    CHECK_FALSE(read.hints.gang);
    // Bad options in the environment's order, each named, and kept as typed.
    REQUIRE(read.errors.size() == 2);
    CHECK_THAT(read.errors[0].field, Catch::Contains("--ai-gang"));
    CHECK(read.errors[1].value == "sideways");
    CHECK(read.typed.at("ai-gang") == "g:1");
    CHECK(read.typed.size() == 4);

    nlohmann::json j = read.hints;
    CHECK(j["comm"]["pattern"] == "pipeline");
    CHECK(j["elastic"]["min_nodes"] == 2);

    CHECK(decode_job_options({}).hints.empty());
}

TEST_CASE("the DAG travels under its own name, in any form", "[spank_env][hints]") {
    const std::string dag = spank_dag_env_name(SpankEnvCopy::kCommand) + "={";
    std::vector<const char *> env = {dag.c_str()};
    auto read = decode_job_options(env);
    REQUIRE(read.hints.dag);
    CHECK(*read.hints.dag == "{");
    CHECK_FALSE(read.dag);
    CHECK(read.dag_error);
}
