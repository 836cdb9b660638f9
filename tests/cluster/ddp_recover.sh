#!/usr/bin/env bash
# Checkpoint-triggered recovery of a real PyTorch job, on a cluster of its own (it kills a
# node): the 3-node data-parallel trainer (ddp_trainer.py, --no-kill, --ai-checkpoint)
# loses a node whose slurmd dies with its tasks, after its first periodic checkpoint.
# Expected: the survivors' all_reduce fails and they hold their last committed step;
# ai-recover, run by slurmctld's node-down trigger, asks them to checkpoint, requeues the
# job with the node excluded and lifts Slurm's start delay; the job resumes from the
# newest complete checkpoint and finishes. Its final parameters equal, bit for bit, those
# of an uninterrupted run with the same seed, and the steps it did again are at most those
# done since the last complete checkpoint before the failure.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/../trainer/cluster_helpers.bash"
source "$(dirname "$0")/../trainer/ddp_helpers.bash"
ddp_need_torch
t_begin=$SECONDS
trap ckpt_cluster_down EXIT
ckpt_cluster_up "$(mktemp -u /tmp/slurm-ai-ddp-rc.XXXXXX)"

out=$WORK/job.out
ck=$WORK/ckpt
CKPT_SHOW_ON_FAILURE=("$out")
steps=150
opts=(--steps $steps --seed 11 --every 25)
pace=(--step-ms 100)  # the job only: the pace changes nothing in the result
id=$(ddp_submit "$out" -N3 --exclusive --no-kill --ai-checkpoint="$ck" -- "${opts[@]}" "${pace[@]}" \
    --final "$WORK/final.pt")
ref=$(ddp_standalone "$WORK/alone.out" "$WORK/alone.pt" "${opts[@]}")
[ -n "$ref" ] || fail "the standalone run printed no digest: $(tail -n 3 "$WORK/alone.out")"
wait_until 90 "job $id running with a complete checkpoint" output_has "$out" "checkpoint step=25 "

batch=$(job_field "$id" BatchHost)
victim=""
for n in $(scontrol show hostnames "$(job_field "$id" NodeList)"); do
    [ "$n" = "$batch" ] || victim=$n
done
[ -n "$victim" ] || fail "job $id has no node but its batch host $batch"
fail_node "$victim" kill
t_fail=$(date +%s.%N)  # the node is dead now: what was committed and saved by then counts
wait_until 90 "job $id requeued and running again after $victim died" \
    job_running_with_restarts "$id" 1 "$FAILED_AT"
wait_until 120 "job $id finished" job_gone "$id"

j=$(analyse "$out" "$t_fail")
expect_eq "trainer errors" "[]" "$(py "$j" 'd["errors"]')"
expect_eq "end state" COMPLETED \
    "$(sed -n "s/^JobId=$id .*JobState=\([A-Z_]*\).*/\1/p" "$CKPT_DIR/log/jobcomp.log" | tail -n1)"
expect_eq "runs the trainer saw" 2 "$(py "$j" 'len(d["runs"])')"
expect_eq "restart count seen by the second run" 1 "$(py "$j" 'd["runs"][1]["restart"]')"
ddp_expect_recovered "$out" "$j" "$victim" $steps
newest=$NEWEST committed=$COMMITTED resumed=$RESUMED redone=$REDONE
[ "$newest" -ge 25 ] || fail "no complete checkpoint before the failure (newest: $newest)"
expect_eq "resumed from" "$ck/step-$(printf %08d "$resumed")" "$(py "$j" 'd["runs"][1]["resume_from"]')"
expect_eq "digest of every rank against an uninterrupted run" "$ref" "$(ddp_digests "$out")"
ddp_same_params "$WORK/final.pt" "$WORK/alone.pt"

r=$(records "$id")
expect_eq "restart records" '["node_failure", "running_again"]' "$(py "$r" '[x["event"] for x in d["restarts"]]')"
expect_eq "action" requeue "$(py "$r" 'd["restarts"][0]["action"]')"
expect_eq "failed nodes" "[\"$victim\"]" "$(py "$r" 'd["restarts"][0]["failed"]')"
saved=$(grep -c ' checkpoint step=[0-9]* why=signal' "$out" || true)
pass "$victim killed at step $committed (checkpoint $newest): requeued, resumed from $resumed ($redone redone; survivors' checkpoints on request: $saved); digest ${ref:0:16} equals the uninterrupted run's ($((SECONDS - t_begin))s)"
