#!/usr/bin/env bash
# Checkpoint-triggered rescheduling, the other two paths, on a cluster of its own:
#   - an elastic job (--ai-elastic=2:3, --no-kill) on 3 nodes loses one that hangs (stops
#     responding: slurmd, steps and tasks stopped). Expected: it is not requeued; its
#     stalled survivors checkpoint, ai-recover ends the step that spanned the lost node,
#     and the job's script starts it again on the 2 nodes left, from that checkpoint,
#     losing no committed step;
#   - a job without --no-kill loses a node whose slurmd dies. Slurm kills and requeues it
#     at once (nobody left to checkpoint); ai-recover excludes the node and lifts Slurm's
#     start delay (120 s): it runs again within seconds, from its last periodic
#     checkpoint, losing no more than the steps done since.
# Both trainers end at the right count with a state that verifies.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/../trainer/cluster_helpers.bash"
t_begin=$SECONDS
trap ckpt_cluster_down EXIT
ckpt_cluster_up "$(mktemp -u /tmp/slurm-ai-ckpt-sh.XXXXXX)"

e_out=$WORK/e.out
b_out=$WORK/b.out
CKPT_SHOW_ON_FAILURE=("$e_out" "$b_out")
steps=300
e=$(submit_trainer "$e_out" "$WORK/e" -N3 --exclusive --no-kill --ai-elastic=2:3 --ai-checkpoint="$WORK/e" -- \
    --steps $steps --step-ms 100 --every 50)
b=$(submit_trainer "$b_out" "$WORK/b" -N2 --exclusive --ai-checkpoint="$WORK/b" -- \
    --steps $steps --step-ms 100 --every 50)
wait_until 60 "elastic job $e checkpointing" output_has "$e_out" "checkpoint step=50 "
wait_until 60 "job $b checkpointing" output_has "$b_out" "checkpoint step=50 "

pick_non_batch() {  # ID: a node of the job that is not its batch host
    local n batch
    batch=$(job_field "$1" BatchHost)
    for n in $(scontrol show hostnames "$(job_field "$1" NodeList)"); do
        [ "$n" = "$batch" ] || { echo "$n"; return; }
    done
}
e_nodes=$(job_field "$e" NodeList)
e_lost=$(pick_non_batch "$e")
b_lost=$(pick_non_batch "$b")
fail_node "$e_lost" stop
t_e=$FAILED_AT
fail_node "$b_lost" kill
t_b=$FAILED_AT

# The elastic job: a second step on the survivors, same job, no restart.
wait_until 90 "elastic job $e going on without $e_lost" \
    output_has "$e_out" "toy_job: step ended"
wait_until 30 "elastic job $e resumed on 2 nodes" output_has "$e_out" "resume step=[1-9]"
expect_eq "elastic job state" RUNNING "$(job_field "$e" JobState)"
expect_eq "elastic job restarts" 0 "$(job_field "$e" Restarts)"
survivors=$(scontrol show hostnames "$e_nodes" | grep -vx "$e_lost" | xargs)
expect_eq "elastic job nodes" "$survivors" "$(scontrol show hostnames "$(job_field "$e" NodeList)" | xargs)"
# The other job: requeued by Slurm, back within seconds instead of after the 121 s delay.
wait_until 90 "job $b running again after $b_lost died" job_running_with_restarts "$b" 1 "$t_b"
t_b_back=$(date +%s.%N)
wait_until 90 "elastic job $e finished" job_gone "$e"
wait_until 90 "job $b finished" job_gone "$b"

for k in e b; do
    out_var=${k}_out
    j=$(analyse "${!out_var}" "$([ $k = e ] && echo "$t_e" || echo "$t_b")")
    eval "${k}_json=$j"
    expect_trainer_finished "$j" "$steps" "job $k"
    expect_eq "job $k: runs" 2 "$(py "$j" 'len(d["runs"])')"
    newest=$(py "$j" 'd["failures"][0]["newest_checkpoint_before"]')
    resumed=$(py "$j" 'd["runs"][1]["resume_step"]')
    [ "$resumed" -ge "$newest" ] ||
        fail "job $k resumed from step $resumed, older than its newest checkpoint $newest before the failure"
done
# Elastic: the survivors' checkpoint; nothing committed was lost; the new step's ranks.
expect_eq "elastic job: steps lost" 0 "$(py "$e_json" 'd["runs"][1]["lost"]')"
expect_eq "elastic job: nodes of the second step" "$survivors" \
    "$(py "$e_json" '" ".join(d["runs"][1]["nodes"])')"
r=$(records "$e")
expect_eq "elastic job: records" '["node_failure"]' "$(py "$r" '[x["event"] for x in d["restarts"]]')"
expect_eq "elastic job: action" shrink "$(py "$r" 'd["restarts"][0]["action"]')"
expect_eq "elastic job: survivors" "$(scontrol show hostlist "${survivors// /,}")" \
    "$(py "$r" 'd["restarts"][0]["survivors"]')"
expect_contains "elastic job: reason" "$(py "$r" 'd["restarts"][0]["reason"]')" \
    "$e_lost DOWN (Not responding)"
expect_contains "elastic job: reason" "$(py "$r" 'd["restarts"][0]["reason"]')" "ended step $e.0"
expect_eq "elastic job: checkpoint step saved by the survivors" \
    "$(py "$e_json" 'd["runs"][1]["resume_step"]')" "$(py "$r" 'd["restarts"][0]["step_after"]')"

# Requeued by Slurm: resumed from the last periodic checkpoint there was when it came back
# (the one before the failure, or one the survivor wrote in the moment the kill took: both
# ranks had committed that step); lost only the steps since.
b_lost_steps=$(py "$b_json" 'd["runs"][1]["lost"]')
b_since=$(py "$b_json" 'd["failures"][0]["committed_before"] - d["failures"][0]["newest_checkpoint_before"]')
expect_eq "job b: resumed from" "$(py "$b_json" 'd["runs"][1]["checkpoint_before"]')" \
    "$(py "$b_json" 'd["runs"][1]["resume_step"]')"
# The trainer on the dead node may commit a step or two after FAILED_AT (the kill takes a
# moment); what it may lose is bounded by the checkpoint interval.
[ "$b_lost_steps" -le 50 ] ||
    fail "job b lost $b_lost_steps steps, more than the 50 between checkpoints (since its last: $b_since)"
r=$(records "$b")
expect_eq "job b: records" '["node_failure", "running_again"]' "$(py "$r" '[x["event"] for x in d["restarts"]]')"
expect_eq "job b: action" exclude "$(py "$r" 'd["restarts"][0]["action"]')"
expect_eq "job b: ExcNodeList" "$b_lost" "$(py "$r" 'd["restarts"][0]["excluded"]')"
back=$(python3 -c "print(round($t_b_back - $t_b))")
[ "$back" -lt 100 ] ||
    fail "job b ran again only ${back}s after its node died: Slurm's requeue delay was not lifted"

pass "elastic $e lost $e_lost (hung): shrank to $survivors, resumed from step $(py "$e_json" 'd["runs"][1]["resume_step"]') (0 lost); job $b lost $b_lost (killed, no --no-kill): requeued by Slurm, back after ${back}s from step $(py "$b_json" 'd["runs"][1]["resume_step"]') ($b_lost_steps lost); both verified at $steps ($((SECONDS - t_begin))s)"
