#!/usr/bin/env bash
# The PyTorch data-parallel trainer on three hosts, launched by srun with only the suite's
# environment: its ranks meet at rank 0's host (MASTER_ADDR, a container's name, not a
# loopback address), all end with the same parameters, and those equal, bit for bit, the
# same training in one process.
source "$(dirname "$0")/lib.sh"
steps=60
opts=(--steps $steps --seed 3 --every 20)
id=$(ddp_submit "$WORK/job.out" -N3 --ai-checkpoint="$WORK/ckpt" -- "${opts[@]}" --final "$WORK/final.pt")
ref=$(ddp_standalone "$HOST_DIR/alone.out" "$WORK/alone.pt" "${opts[@]}")
wait_until 180 "job $id finished" job_gone "$id"
out=$HOST_DIR/job.out
expect_eq "end state ($(tail -n 3 "$out"))" COMPLETED "$(job_end_state "$id")"
expect_eq "world size" 3 "$(ddp_worlds "$out")"
master=$(sed -n 's/.* rank=0 .* resume step=.* master=\([^ :]*\):.*/\1/p' "$out" | head -n1)
host0=$(sed -n 's/.* rank=0 node=\([^ ]*\) resume .*/\1/p' "$out" | head -n1)
[[ $master =~ ^c[1-4]$ && $master = "$host0" ]] ||
    fail "MASTER_ADDR is '$master', rank 0 runs on '$host0'"
expect_eq "hosts of the ranks" 3 "$(sed -n 's/.* rank=[0-9]* node=\([^ ]*\) done .*/\1/p' "$out" | sort -u | grep -c .)"
expect_eq "ranks done" 3 "$(grep -c " done step=$steps " "$out")"
expect_eq "digest of every rank against one process" "$ref" "$(ddp_digests "$out")"
ddp_same_params "$WORK/final.pt" "$WORK/alone.pt"
echo "job $id: 3 ranks on $(sed -n 's/.* rank=[0-9]* node=\([^ ]*\) done .*/\1/p' "$out" | sort | xargs), master $master; digest ${ref:0:16} equals one process's"
