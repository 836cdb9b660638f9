#!/usr/bin/env bash
# A 3-node srun with 2 GPUs per node: one task per node, each on its own node, each
# seeing exactly its 2 GPUs.
source "$(dirname "$0")/lib.sh"

out=$(srun -N3 --ntasks-per-node=1 --gpus-per-node=2 -t 1 \
    bash -c 'echo "$SLURM_PROCID $SLURMD_NODENAME $CUDA_VISIBLE_DEVICES"' | sort)
expect_eq "lines of output" 3 "$(grep -c . <<<"$out")"
expect_eq "task ids" "0 1 2" "$(awk '{print $1}' <<<"$out" | tr '\n' ' ' | sed 's/ $//')"
expect_eq "distinct nodes" 3 "$(awk '{print $2}' <<<"$out" | sort -u | grep -c .)"
while read -r _ node gpus; do
    expect_eq "GPUs on $node ($gpus)" 2 "$(tr ',' '\n' <<<"$gpus" | grep -c .)"
done <<<"$out"
pass "$(tr '\n' ';' <<<"$out")"
