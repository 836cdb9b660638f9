// GRES lists: a node's as slurmctld reports it and a job's TRES per node: the GPU count of
// every gpu entry, with and without a type, around detail lists that hold commas, beside
// other GRES and TRES.
#include <catch2/catch.hpp>

#include "slurm_ai/common/gres_text.hpp"

using slurm_ai::gres_gpu_count;

TEST_CASE("GRES lists: GPUs counted, whatever their type and details", "[gres]") {
    CHECK(gres_gpu_count("gpu:v100:4(S:0-1)") == 4);  // the mini-cluster's nodes
    CHECK(gres_gpu_count("gpu:v100:2(IDX:0,2)") == 2);
    CHECK(gres_gpu_count("gpu:a100:2(S:0),gpu:h100:4(S:1),shard:8") == 6);
    CHECK(gres_gpu_count("gpu:8") == 8);
    CHECK(gres_gpu_count("gpu:v100:0(IDX:N/A)") == 0);
    CHECK(gres_gpu_count("gpu_mem:4,mps:100") == 0);
    CHECK(gres_gpu_count("") == 0);
    CHECK(gres_gpu_count("(null)") == 0);
    CHECK(gres_gpu_count("gpu:v100:x") == 0);
}

TEST_CASE("GRES lists: a job's TRES per node, as JobInfo::gpus_per_node reads it", "[gres]") {
    CHECK(gres_gpu_count("gres/gpu:4") == 4);
    CHECK(gres_gpu_count("gres:gpu:4") == 4);  // before Slurm 23.x
    CHECK(gres_gpu_count("gres/gpu:v100:2") == 2);
    CHECK(gres_gpu_count("cpu=4;gres/gpu:a100:8") == 8);
    CHECK(gres_gpu_count("gres/shard:4,gres/gpu:1") == 1);
    CHECK(gres_gpu_count("gres/gpumem:4") == 0);
    CHECK(gres_gpu_count("license/gpu:4") == 0);
}
