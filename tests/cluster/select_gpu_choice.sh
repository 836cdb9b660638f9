#!/usr/bin/env bash
# The plugin, not cons_tres, picks the GPUs inside a node. The emulated node's GPUs are
# NVLink pairs (0,1) and (2,3): not all linked alike. With a pair's job gone and one GPU
# of the other pair busy, a 1-GPU job gets the busy GPU's partner, which keeps a linked
# pair free for the next 2-GPU job. cons_tres alone (what the plugin logs with Debug=yes)
# takes the lowest-numbered free GPU, which breaks the pair. The record's GPUs are what
# slurmctld allocated (gres_bit_alloc at the job's start).
source "$(dirname "$0")/lib.sh"
node=n8
record() { json_get "$STATE_DIR/ai_select/jobs/$1.json" gpus; }
running() {
    for _ in $(seq 30); do [ "$(squeue -h -j "$1" -o %T)" = RUNNING ] && return 0; sleep 1; done
    fail "job $1 did not start"
}

pair=$(sbatch --parsable -w $node --gpus=2 -o /dev/null --wrap='sleep 120')
trap 'scancel "$pair" "${one:-}" 2>/dev/null || true' EXIT
running "$pair"
one=$(sbatch --parsable -w $node --gpus=1 -o /dev/null --wrap='sleep 120')
running "$one"
pair_gpus=$(record "$pair")
one_gpu=$(record "$one")
one_gpu=${one_gpu#$node:}
case "$pair_gpus" in
    "$node:0,1" | "$node:2,3") partner=$((one_gpu ^ 1)) ;;
    *) fail "the 2-GPU job did not get a linked pair: $pair_gpus" ;;
esac
# The 1-GPU job sits on the other pair; free now: its partner, and then the first pair.
scancel "$pair"
wait_job_gone "$pair" 60

id=$(sbatch --parsable -w $node --gpus=1 -o /dev/null --wrap='sleep 1')
wait_job_gone "$id" 60
got=$(record "$id")
stock=$(json_get "$STATE_DIR/ai_select/jobs/$id.json" stock_nodes 2>/dev/null || true)
expect_eq "GPU of the 1-GPU job (pair job had $pair_gpus, the other job GPU $one_gpu)" \
    "$node:$partner" "$got"
grep -q "JobId=$id: the engine's GPUs on 1 node" "$MINICLUSTER_DIR/log/slurmctld.log" ||
    fail "slurmctld's log does not say the engine chose the GPUs"
pass "1-GPU job on GPU $partner beside GPU $one_gpu; pair $pair_gpus kept whole ($stock)"
