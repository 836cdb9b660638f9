#!/usr/bin/env bash
# The suite's main job on a fresh Debian 12 machine, as root: install what is needed,
# build, bring up an 8-node mini-cluster (4 emulated GPUs per node, two-level switch
# tree) with the suite's select and SPANK plugins loaded, submit a demo training job
# with AI hints, and print what the plugins saw and decided. The cluster stays up for
# you to use; the last lines say how to reach it and how to take it down.
#
#   tools/demo.sh            DEMO_DIR (default /tmp/slurm-ai-demo) holds the cluster
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
dir=${DEMO_DIR:-/tmp/slurm-ai-demo}

step() { printf '\n== %s\n' "$*"; }

step "installing dependencies and building"
BUILD_DIR=$build tools/build.sh
plugins=$(cd "$build" && pwd)/plugins
bin=$(cd "$build" && pwd)/bin

step "bringing up the mini-cluster in $dir"
tools/minicluster down --dir "$dir" >/dev/null 2>&1 || true
tools/minicluster up --dir "$dir" --plugin-dir "$plugins" --select select/ai_cons_tres \
    --spank "$plugins/spank_ai.so" --extra-conf DebugFlags=SelectType \
    --ai-conf NodeTopology="$PWD/tests/inputs/minicluster-node.xml" \
    --ai-conf NodeTopology="n[5-8]=$PWD/tests/inputs/minicluster-node-2nic.xml" --ai-conf Debug=yes
# shellcheck disable=SC1091
source "$dir/env"
scontrol show config | grep -E '^(SelectType|PluginDir|PlugStackConfig) '
scontrol show topology

step "submitting a 2-node data-parallel job with 2 GPUs per node"
job=$(mktemp "$dir/demo-job.XXXXXX.sh")
cat >"$job" <<'JOB'
#!/bin/bash
#SBATCH --job-name=demo-allreduce
#SBATCH -N2 --ntasks-per-node=2 --gpus-per-node=2
#SBATCH --ai-comm=allreduce:bytes=1G,algo=ring
#SBATCH --ai-locality=soft:1m
# Each task prints what the suite's SPANK plugin gave it.
srun bash -c 'echo "RANK=$RANK LOCAL_RANK=$LOCAL_RANK NODE_RANK=$NODE_RANK WORLD_SIZE=$WORLD_SIZE on $SLURMD_NODENAME: MASTER=$MASTER_ADDR:$MASTER_PORT CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES NCCL_IB_HCA=$NCCL_IB_HCA CPUs=$(sed -n "s/^Cpus_allowed_list:\s*//p" /proc/self/status)"' | sort
JOB
echo "+ sbatch $(grep '^#SBATCH' "$job" | sed 's/^#SBATCH //' | tr '\n' ' ')"
id=$(sbatch --parsable --wait -o "$dir/demo-%j.out" "$job")

step "job $id output"
cat "$dir/demo-$id.out"

step "what the select plugin decided for job $id (ai-explain $id)"
"$bin/ai-explain" "$id"
scontrol show job "$id" | grep -o 'SystemComment=.*'

step "what slurmctld logged about job $id"
grep -E "JobId=$id[^0-9]" "$dir/log/slurmctld.log" | grep -E 'ai_cons_tres|sched' |
    grep -v 'hints {' | tail -n 8

step "the cluster is still up"
cat <<TXT
  use it:      source $dir/env; sinfo; sbatch --ai-comm=pipeline:stages=4 -N4 --wrap=hostname
  help:        sbatch --help | grep -A1 -- --ai-
  explain:     $bin/ai-explain JOBID
  take down:   tools/minicluster down --dir $dir
TXT
