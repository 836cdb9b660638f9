#!/usr/bin/env bash
# Checkpoint-triggered rescheduling, requeue path, on a cluster of its own (it kills nodes):
# a 2-node toy trainer (--no-kill, --ai-checkpoint) loses a node whose slurmd dies with
# its tasks. Expected: a failure of a node outside the job (killed just before) leaves the
# job alone; ai-recover, run by slurmctld's PERM node-down trigger, asks the stalled
# survivor to checkpoint, requeues the job with the failed node excluded and lifts
# Slurm's start delay; the job resumes from that checkpoint without losing a committed
# step, on the other leaf switch (the failure-risk model steers it away from the two
# failures). A node of the restarted job is then set DOWN while the job is still loading
# its checkpoint: it is requeued again and resumes from the newest complete checkpoint,
# again losing nothing committed. Last, with only the trigger left (the watch loop
# stopped), a node of the next run is set DOWN before the job's script starts its step:
# the step cannot start on the one node left and the job ends FAILED before the trigger
# fires; ai-recover requeues it all the same. The trainer ends at the right count with a
# state that verifies; every restart is in ai-explain.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/../trainer/cluster_helpers.bash"
t_begin=$SECONDS
trap ckpt_cluster_down EXIT
ckpt_cluster_up "$(mktemp -u /tmp/slurm-ai-ckpt-rq.XXXXXX)"

ck=$WORK/ckpt
out=$WORK/a.out
CKPT_SHOW_ON_FAILURE=("$out")
steps=400
hold=$WORK/hold-step  # toy_job.sh waits before its step while this file exists
id=$(TOY_JOB_HOLD=$hold submit_trainer "$out" "$ck" -N2 --exclusive --no-kill --ai-checkpoint="$ck" -- \
    --steps $steps --step-ms 100 --every 50 --startup-s 6)
wait_until 60 "job $id running with a checkpoint" output_has "$out" "checkpoint step=50 "
read -r a1 a2 < <(scontrol show hostnames "$(job_field "$id" NodeList)" | xargs)
batch=$(job_field "$id" BatchHost)
[ "$a1" = "$batch" ] || { t=$a1; a1=$a2; a2=$t; }  # a2: not the batch host
[ "$a1" = "$batch" ] || fail "batch host $batch is not one of the job's nodes $a1 $a2"
leaf=$(leaf_of "$a2")
# A node outside the job, under the same leaf switch: its failure must not touch the job.
outside=""
for n in $(sinfo -h -N -t idle -o %N); do
    if [ "$(leaf_of "$n")" = "$leaf" ]; then outside=$n; break; fi
done
[ -n "$outside" ] || fail "no idle node beside the job on leaf $leaf: $(sinfo -h -N -o '%N %t' | tr '\n' ' ')"

fail_node "$outside" kill
t_outside=$FAILED_AT
sleep 3
fail_node "$a2" kill
t_fail=$FAILED_AT
wait_until 90 "job $id requeued and running again after $a2 failed" job_running_with_restarts "$id" 1 "$t_fail"
run2=$(job_field "$id" NodeList)
batch2=$(job_field "$id" BatchHost)
d=""
for n in $(scontrol show hostnames "$run2"); do [ "$n" = "$batch2" ] || d=$n; done
# The second failure, while the restarted job is still loading its checkpoint (both
# ranks said where they resume from; --startup-s keeps them loading for a while).
loading() { [ "$(grep -c "resume .* restart=1\$" "$out")" -ge 2 ]; }
wait_until 30 "restart 1 of job $id loading its checkpoint" loading
touch "$hold"  # the next run's script waits before its step
fail_node "$d" down
t_fail2=$FAILED_AT
wait_until 90 "job $id running again after $d failed during its restart" \
    job_running_with_restarts "$id" 2 "$t_fail2"

# The third failure, before the next run's step starts, with only the trigger left.
stop_daemon "$CKPT_DIR/run/ai-recover.pid" "ai-recover's watch loop" 120
wait_until 30 "restart 2 of job $id about to start its step" output_has "$out" "toy_job: restart 2: holding"
run3=$(job_field "$id" NodeList)
batch3=$(job_field "$id" BatchHost)
e=""
for n in $(scontrol show hostnames "$run3"); do [ "$n" = "$batch3" ] || e=$n; done
# Slurm drops the node from the job (--no-kill) before `scontrol update` returns; the
# script then starts its 2-node step with one node left.
fail_node "$e" down
t_fail3=$FAILED_AT
rm -f "$hold"
wait_until 90 "job $id requeued and running again after $e failed before its step" \
    job_running_with_restarts "$id" 3 "$t_fail3"
wait_until 120 "job $id finished" job_gone "$id"

# --- what the trainer saw ------------------------------------------------------------
j=$(analyse "$out" "$t_fail" "$t_fail2" "$t_fail3")
expect_trainer_finished "$j" "$steps"
expect_eq "end state" COMPLETED "$(sed -n "s/^JobId=$id .*JobState=\([A-Z_]*\).*/\1/p" "$CKPT_DIR/log/jobcomp.log" | tail -n1)"
# Four runs; the third never started its step, so the trainer saw three.
expect_eq "runs of the job the trainer saw" 3 "$(py "$j" 'len(d["runs"])')"
# Restart 1: the survivor stalled at the last committed step and checkpointed it.
committed=$(py "$j" 'd["runs"][1]["committed_before"]')
newest_before=$(py "$j" 'd["failures"][0]["newest_checkpoint_before"]')
resume1=$(py "$j" 'd["runs"][1]["resume_step"]')
[ "$resume1" -ge "$newest_before" ] ||
    fail "restart 1 resumed from step $resume1, older than the newest checkpoint $newest_before before the failure"
expect_eq "steps lost by restart 1 (committed $committed, resumed $resume1)" 0 "$(py "$j" 'd["runs"][1]["lost"]')"
expect_eq "restart count seen by the trainer" 1 "$(py "$j" 'd["runs"][1]["restart"]')"
# Restarts 2 and 3: the failures hit the job while it was loading and before its step
# started (no step committed: the same checkpoint again); nothing committed is lost.
expect_eq "restart count seen by the trainer's last run" 3 "$(py "$j" 'd["runs"][2]["restart"]')"
resume3=$(py "$j" 'd["runs"][2]["resume_step"]')
[ "$resume3" -ge "$(py "$j" 'd["failures"][2]["newest_checkpoint_before"]')" ] ||
    fail "restart 3 resumed from step $resume3, older than the newest checkpoint before its failure"
[ "$resume3" -ge "$resume1" ] || fail "restart 3 resumed from step $resume3, before restart 1's $resume1"
expect_eq "steps lost by restarts 2 and 3" 0 "$(py "$j" 'd["runs"][2]["lost"]')"

# --- what ai-recover did, as ai-explain shows it -------------------------------------
r=$(records "$id")
expect_eq "restart records (events)" \
    '["node_failure", "running_again", "node_failure", "running_again", "node_failure", "running_again"]' \
    "$(py "$r" '[x["event"] for x in d["restarts"]]')"
expect_eq "failure 1: action" requeue "$(py "$r" 'd["restarts"][0]["action"]')"
expect_eq "failure 1: failed nodes" "[\"$a2\"]" "$(py "$r" 'd["restarts"][0]["failed"]')"
expect_eq "failure 1: checkpoint it resumes from" "$(py "$j" 'd["runs"][1]["resume_from"]')" \
    "$(py "$r" 'd["restarts"][0]["checkpoint"]')"
expect_eq "failure 1: step the survivors saved" "$resume1" "$(py "$r" 'd["restarts"][0]["step_after"]')"
expect_eq "failure 2: action" requeue "$(py "$r" 'd["restarts"][2]["action"]')"
expect_eq "failure 2: failed nodes" "[\"$d\"]" "$(py "$r" 'd["restarts"][2]["failed"]')"
expect_eq "failure 3: action" requeue "$(py "$r" 'd["restarts"][4]["action"]')"
expect_eq "failure 3: failed nodes" "[\"$e\"]" "$(py "$r" 'd["restarts"][4]["failed"]')"
# The job fails within half a second of the DOWN and the trigger runs every 15 s: it
# nearly always finds the job FAILED. Should it run in that half second, it finds the job
# running on one node and requeues it as such.
why3=$(py "$r" 'd["restarts"][4]["reason"]')
case $why3 in
    *"lost $e and ended FAILED with it: requeued with $e excluded"*) path3="ended FAILED" ;;
    *"lost $e: requeued with $e excluded"*) path3="still running when the trigger ran" ;;
    *) fail "failure 3: why: $why3" ;;
esac
for k in 0 2 4; do
    case $(py "$r" "d['restarts'][$k]['reason']") in
        *"$outside"*) fail "a restart record names $outside, which was never the job's: $(py "$r" "d['restarts'][$k]['reason']")" ;;
    esac
done
grep -c "nodes down: .*$outside" "$CKPT_STATE/ai_recover/ai-recover.log" >/dev/null ||
    fail "ai-recover never saw $outside go down: $(cat "$CKPT_STATE/ai_recover/ai-recover.log")"
excluded=$(scontrol show hostnames "$(job_field "$id" ExcNodeList)" 2>/dev/null | sort | xargs)
expect_eq "ExcNodeList after the three failures" "$(printf '%s\n' "$a2" "$d" "$e" | sort | xargs)" "$excluded"
text=$("$EXPLAIN" "$id" --state-dir "$CKPT_STATE")
expect_contains "ai-explain" "$text" "node failure: $a2 DOWN"
expect_contains "ai-explain" "$text" "requeued with $a2 excluded"
# The node list ai-recover logs for "running again" can be read while Slurm still lists
# part of the run's nodes (a race in ai-recover's record, noted in the issue): the event
# is checked here, the run's nodes by ExcNodeList above and the trainer's log.
expect_contains "ai-explain" "$text" "running again on "
expect_contains "ai-explain" "$text" "restarts:    3"

# --- where it went: away from the failed nodes' leaf, which had room elsewhere --------
for n in $(scontrol show hostnames "$run2"); do
    [ "$(leaf_of "$n")" != "$leaf" ] ||
        fail "restart 1 went to $run2, on leaf $leaf of the failures ($a2, $outside), with the other leaf free"
done

down1=$(py "$r" 'round(d["restarts"][1]["down_s"], 1)')
pass "outside failure ignored; $a2 killed, $committed steps committed -> requeued, resumed from $resume1 (0 lost) on $run2 ${down1}s after DOWN; $d DOWN while loading, then $e DOWN before the step (job $path3, trigger only) -> resumed from $resume3 (0 lost); final $steps verified ($((SECONDS - t_begin))s)"
