#!/usr/bin/env bash
# sbatch, salloc and srun all list every --ai-* option with the plugin's tag.
source "$(dirname "$0")/lib.sh"

for cmd in sbatch salloc srun; do
    help=$($cmd --help 2>&1)
    for opt in ai-comm ai-dag ai-elastic ai-gang ai-checkpoint ai-locality; do
        line=$(grep -E -- "--$opt[= ]" <<<"$help" || true)
        [ -n "$line" ] || fail "$cmd --help does not list --$opt"
        # The help text sits on the option's line or the next one.
        grep -A1 -E -- "--$opt[= ]" <<<"$help" | grep -q '\[ai\]' ||
            fail "$cmd --help: --$opt has no [ai] help text"
    done
done
pass "6 options in sbatch, salloc and srun --help"
