#!/usr/bin/env bash
# Slurm 25.11's expedited requeue (--requeue=expedite with
# SlurmctldParameters=enable_expedited_requeue) beside ai-recover, on a cluster of its own:
# a 2-node toy trainer with --ai-checkpoint loses a node. Slurm requeues the job at once
# with the highest priority; ai-recover, run by the node-down trigger and its watch loop,
# finds the job already back in the queue or running again and does not requeue it a
# second time. One recovery: the job restarts once, resumes from a checkpoint no older
# than the newest before the failure, and ends COMPLETED at the right step count with a
# state that verifies; ai-explain shows no requeue of ai-recover's (seen on 26.05.3: Slurm
# has requeued the job before the trigger runs, and ai-recover finds nothing to recover).
# Skipped (77) before Slurm 25.11.
source "$(dirname "$0")/lib.sh"
skip_before 25 11 '--requeue=expedite'
source "$(dirname "$0")/../trainer/cluster_helpers.bash"
t_begin=$SECONDS
trap ckpt_cluster_down EXIT
ckpt_cluster_up "$(mktemp -u /tmp/slurm-ai-ckpt-ex.XXXXXX)" \
    --extra-conf SlurmctldParameters=enable_expedited_requeue

ck=$WORK/ckpt
out=$WORK/a.out
CKPT_SHOW_ON_FAILURE=("$out")
steps=300
id=$(submit_trainer "$out" "$ck" -N2 --exclusive --requeue=expedite --ai-checkpoint="$ck" -- \
    --steps $steps --step-ms 100 --every 50 --startup-s 2)
wait_until 60 "job $id running with a checkpoint" output_has "$out" "checkpoint step=50 "
read -r a1 a2 < <(scontrol show hostnames "$(job_field "$id" NodeList)" | xargs)
fail_node "$a2" kill
t_fail=$FAILED_AT
wait_until 90 "job $id requeued and running again after $a2 failed" \
    job_running_with_restarts "$id" 1 "$t_fail"
wait_until 120 "job $id finished" job_gone "$id"
expect_eq "Restarts of job $id (one recovery)" 1 "$(job_field "$id" Restarts)"
expect_eq "end state" COMPLETED \
    "$(sed -n "s/^JobId=$id .*JobState=\([A-Z_]*\).*/\1/p" "$CKPT_DIR/log/jobcomp.log" | tail -n1)"

j=$(analyse "$out" "$t_fail")
expect_trainer_finished "$j" "$steps"
expect_eq "runs of the job the trainer saw" 2 "$(py "$j" 'len(d["runs"])')"
resume=$(py "$j" 'd["runs"][1]["resume_step"]')
newest_before=$(py "$j" 'd["failures"][0]["newest_checkpoint_before"]')
[ "$resume" -ge "$newest_before" ] ||
    fail "the restart resumed from step $resume, older than the newest checkpoint $newest_before"

# ai-recover saw the failure and left the requeue to Slurm.
grep -c "nodes down: .*$a2" "$CKPT_STATE/ai_recover/ai-recover.log" >/dev/null ||
    fail "ai-recover never saw $a2 go down: $(tail -n 20 "$CKPT_STATE/ai_recover/ai-recover.log")"
r=$(records "$id")
actions=$(py "$r" '[x.get("action", "") for x in d.get("restarts", []) if x["event"] == "node_failure"]')
case $actions in
    *requeue*) fail "ai-recover requeued job $id that Slurm had requeued already: $actions" ;;
esac
pass "--requeue=expedite on Slurm $SLURM_SERIES: $a2 failed, job $id restarted once from step $resume (newest checkpoint before: $newest_before), ai-recover's actions $actions ($((SECONDS - t_begin))s)"
