#!/usr/bin/env bash
# Will-run (what backfill and `squeue --start` report) agrees with run-now: a job queued
# behind a full cluster is predicted to start when the blocking job's time limit ends,
# and it does start then, on as many nodes as predicted. The blocker is cancelled at
# its predicted end rather than waiting for Slurm's periodic time-limit pass, so the
# comparison is tight.
source "$(dirname "$0")/lib.sh"

blocker=$(sbatch --parsable -N8 --exclusive --time=1 -o /dev/null --wrap='sleep 300')
trap 'scancel "$blocker" "${job:-}" 2>/dev/null || true' EXIT
for _ in $(seq 30); do [ "$(squeue -h -j "$blocker" -o %T)" = RUNNING ] && break; sleep 1; done
expect_eq "blocker state" RUNNING "$(squeue -h -j "$blocker" -o %T)"
job=$(sbatch --parsable -N2 --gpus-per-node=2 --ai-comm=allreduce -o /dev/null --wrap='sleep 5')

predicted=""
for _ in $(seq 30); do
    predicted=$(squeue -h --start -j "$job" -o %S)
    [[ $predicted =~ ^[0-9]{4}- ]] && break
    sleep 1
done
[[ $predicted =~ ^[0-9]{4}- ]] || fail "no predicted start for job $job (got '$predicted')"
predicted_nodes=$(squeue -h --start -j "$job" -o %D)
blocker_end=$(scontrol show job "$blocker" | sed -n 's/.* EndTime=\([^ ]*\).*/\1/p')
expect_eq "predicted start vs the blocker's end" "$blocker_end" "$predicted"

# Let the blocker end at its predicted time.
wait_s=$(($(date -d "$predicted" +%s) - $(date +%s)))
[ "$wait_s" -le 70 ] || fail "predicted start $predicted is $wait_s s away"
[ "$wait_s" -le 0 ] || sleep "$wait_s"
scancel "$blocker"
for _ in $(seq 30); do [ "$(squeue -h -j "$job" -o %T)" = RUNNING ] && break; sleep 0.5; done
actual=$(scontrol show job "$job" | sed -n 's/.* StartTime=\([^ ]*\).*/\1/p')
delta=$(($(date -d "$actual" +%s) - $(date -d "$predicted" +%s)))
[ "$delta" -ge -1 ] && [ "$delta" -le 10 ] ||
    fail "job $job started at $actual, predicted $predicted ($delta s apart)"
expect_eq "nodes: predicted vs actual" "$predicted_nodes" "$(squeue -h -j "$job" -o %D)"
wait_job_gone "$job" 60
expect_eq "end state" COMPLETED "$(job_end_state "$job")"
pass "predicted $predicted on $predicted_nodes nodes; started $actual ($delta s)"
