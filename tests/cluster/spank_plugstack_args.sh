#!/usr/bin/env bash
# The SPANK plugin's plugstack.conf arguments: an unknown key or a bad value stops sbatch
# with a message naming it (no job created); on a cluster of its own, parts switched off
# stay off, the NCCL topology file is written from the node's hwloc topology for the
# step and removed after it, ranks follow the fabric's order where it differs from
# Slurm's, and a node whose topology is unknown (live discovery finds no GPU here) still
# runs its tasks with the variables that apply.
source "$(dirname "$0")/lib.sh"
repo=$(cd "$(dirname "$0")/../.." && pwd)
data=$repo/../shared/data
spank=$SLURM_AI_PLUGIN_DIR/spank_ai.so

# Bad arguments, seen by sbatch through a copy of the cluster's configuration.
bad_args() {  # bad_args EXPECTED-IN-STDERR ARG...
    local want=$1 before after err rc=0
    shift
    sed "s|^PlugStackConfig=.*|PlugStackConfig=$WORK/plugstack.conf|" "$SLURM_CONF" >"$WORK/slurm.conf"
    echo "required $spank $*" >"$WORK/plugstack.conf"
    before=$(next_job_id)
    err=$(SLURM_CONF=$WORK/slurm.conf sbatch -o /dev/null --wrap=true 2>&1 >/dev/null) || rc=$?
    [ $rc -ne 0 ] || fail "plugstack arguments '$*' were accepted"
    expect_contains "stderr for '$*'" "$err" "$want"
    after=$(next_job_id)
    expect_eq "job ids consumed with plugstack arguments '$*'" $((before + 1)) "$after"
}
bad_args "bad_key" rank_env=on bad_key=1
bad_args "on or off" gpu_bind=maybe
bad_args "LOW-HIGH" master_port=70000
bad_args "an absolute path" node_topology=node.xml

# A cluster of its own: ranks interleaved across leaves, parts switched off.
second=/tmp/slurm-ai-args-$$
cleanup() { "$repo/tools/minicluster" down --dir "$second" >/dev/null 2>&1 || true; }
trap cleanup EXIT
cat >"$WORK/interleaved.conf" <<'CONF'
SwitchName=leafA Nodes=n1,n3
SwitchName=leafB Nodes=n2,n4
SwitchName=spine Switches=leafA,leafB
CONF
mkdir -p "$WORK/nccl"
chmod 1777 "$WORK/nccl"
"$repo/tools/minicluster" up --dir "$second" --nodes 4 --gpus 4 \
    --plugin-dir "$SLURM_AI_PLUGIN_DIR" --select select/ai_cons_tres --spank "$spank" \
    --spank-arg gpu_bind=off --spank-arg nic_bind=off --spank-arg nccl_topo=on \
    --spank-arg nccl_topo_dir="$WORK/nccl" --spank-arg master_port=31000-31009 \
    --ai-conf Fabric="$WORK/interleaved.conf" \
    --ai-conf NodeTopology="n[1-2]=$data/hwloc/nvidiaDGX2.xml" >"$WORK/up.log" 2>&1 ||
    fail "second cluster did not come up: $(tail -5 "$WORK/up.log")"
(
    source "$second/env"
    # While the step runs, each task counts the GPUs of its node's NCCL topology file.
    id=$(sbatch --parsable -N4 --ntasks-per-node=2 --gpus-per-node=4 -o "$WORK/job.out" \
        --wrap="srun bash -c 'echo \$SLURMD_NODENAME \$RANK \$MASTER_PORT \$AI_NODE_ORDER \$AI_RANK_ORDER \${CUDA_VISIBLE_DEVICES-unset} \${NCCL_IB_HCA-unset} \$(grep -c \"<gpu \" \${NCCL_TOPO_FILE:-/dev/null})'")
    for _ in $(seq 60); do squeue -h -j "$id" -o %i | grep -c . >/dev/null || break; sleep 1; done
    echo "$id" >"$WORK/job.id"
)
id=$(cat "$WORK/job.id")
[ -s "$WORK/job.out" ] || fail "job $id wrote nothing"
expect_eq "node order, rank order source, port (one line per distinct value)" \
    "$((31000 + id % 10)) n1,n3,n2,n4 topology" \
    "$(awk '{print $3, $4, $5}' "$WORK/job.out" | sort -u)"
# n1 (DGX-2 hwloc file): 16 GPUs in the generated NCCL file; n3 (live, no GPU here): none.
expect_eq "ranks, GPUs and NCCL topology GPUs per task" "n1 0 0,1,2,3 unset 16
n1 1 0,1,2,3 unset 16
n2 4 0,1,2,3 unset 16
n2 5 0,1,2,3 unset 16
n3 2 0,1,2,3 unset 0
n3 3 0,1,2,3 unset 0
n4 6 0,1,2,3 unset 0
n4 7 0,1,2,3 unset 0" "$(awk '{print $1, $2, $6, $7, $8}' "$WORK/job.out" | sort)"
expect_eq "NCCL topology files left after the job" "" "$(ls "$WORK/nccl")"
pass "bad arguments refused; job $id ranked n1,n3,n2,n4 with parts switched off"
