#!/usr/bin/env bash
# An elastic PyTorch job follows its resizes: the data-parallel trainer (ddp_trainer.py)
# runs under ddp_job.sh with --ai-elastic=2:3:signal=USR2 and starts on 3 nodes; its owner
# shrinks it by one node, then grows it by one, with ai-resize. Expected: at each resize
# the job's script gets USR2, stops the step (the trainer checkpoints the step it holds:
# its last committed one when the shrink took a peer, a step boundary all ranks agree on
# for the grow), re-sources the view and starts a new step, whose process group has the
# new world size (3, 2, 3); nothing committed is done again, and the final parameters
# equal, bit for bit, those of the same training in one process.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/../trainer/cluster_helpers.bash"
source "$(dirname "$0")/../trainer/ddp_helpers.bash"
ddp_need_torch
t_begin=$SECONDS
resize=$SLURM_AI_BIN_DIR/ai-resize
trap 'show_on_failure $? "$MINICLUSTER_DIR" "$WORK/job.out"; cancel_named ddp-elastic' EXIT

out=$WORK/job.out
ck=$WORK/ckpt
steps=150
opts=(--steps $steps --seed 5 --every 50)
pace=(--step-ms 100)  # the job only: the pace changes nothing in the result
id=$(ddp_submit "$out" -J ddp-elastic --ai-elastic=2:3:signal=USR2 --ai-checkpoint="$ck" -- \
    "${opts[@]}" "${pace[@]}" --final "$WORK/final.pt")
ref=$(ddp_standalone "$WORK/alone.out" "$WORK/alone.pt" "${opts[@]}")

# run N: rank 0 of the Nth run of the trainer said where it resumes from.
runs_started() { [ "$(grep -cE '^[0-9.]+ rank=0 .* resume step=' "$out" 2>/dev/null)" -ge "$1" ]; }
last_step() { sed -n 's/^[0-9.]* rank=0 node=[^ ]* step=\([0-9]*\) .*/\1/p' "$out" | tail -n1; }
steps_past() { local s; s=$(last_step); [ -n "$s" ] && [ "$s" -ge "$1" ]; }

wait_until 60 "job $id running on 3 nodes" runs_started 1
expect_eq "nodes at the start" 3 "$(job_field "$id" NumNodes)"
wait_until 60 "job $id training" steps_past 15
"$resize" shrink "$id" --by 1 --json >"$WORK/shrink.json" 2>&1 ||
    fail "ai-resize shrink: $(cat "$WORK/shrink.json")"
released=$(py "$WORK/shrink.json" '",".join(d["released"])')
wait_until 60 "job $id training again on 2 nodes after releasing $released" runs_started 2
at=$(last_step)
wait_until 60 "job $id training on 2 nodes" steps_past $((at + 15))
"$resize" grow "$id" --by 1 --timeout 30s >"$WORK/grow.out" 2>&1 ||
    fail "ai-resize grow: $(cat "$WORK/grow.out")"
wait_until 60 "job $id training again on 3 nodes" runs_started 3
wait_until 120 "job $id finished" job_gone "$id"

expect_eq "end state of job $id ($(grep ddp_job: "$out" | tail -n 3))" COMPLETED "$(job_end_state "$id")"
j=$(analyse "$out")
expect_eq "trainer errors" "[]" "$(py "$j" 'd["errors"]')"
expect_eq "world sizes of the trainer's runs" "3 2 3" "$(ddp_worlds "$out")"
expect_eq "runs" 3 "$(py "$j" 'len(d["runs"])')"
expect_eq "nodes of the second run without $released" "" \
    "$(py "$j" '" ".join(d["runs"][1]["nodes"])' | tr ' ' '\n' | grep -x "$released" || true)"
expect_eq "committed steps done again after the shrink and the grow" "0 0" \
    "$(py "$j" '" ".join(str(r["lost"]) for r in d["runs"][1:])')"
expect_eq "restarts of the job (a resize is not one)" 0 "$(py "$j" 'max(r["restart"] for r in d["runs"])')"
expect_eq "ranks done" 3 "$(grep -c " done step=$steps " "$out")"
expect_eq "digest of every rank against one process" "$ref" "$(ddp_digests "$out")"
ddp_same_params "$WORK/final.pt" "$WORK/alone.pt"
pass "3 -> 2 (released $released) -> 3 nodes, resumed at steps $(py "$j" '", ".join(str(r["resume_step"]) for r in d["runs"][1:])') with nothing redone; digest ${ref:0:16} equals one process's ($((SECONDS - t_begin))s)"
