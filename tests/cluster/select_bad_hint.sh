#!/usr/bin/env bash
# A job whose hint cannot be met (hard locality while no leaf has room) waits with its
# reason logged, and every other job keeps being scheduled normally around it.
source "$(dirname "$0")/lib.sh"

# Time limits on every job, as on a real cluster: backfill plans with them.
hold=()
for n in n1 n2 n5 n6; do
    hold+=("$(sbatch --parsable -w "$n" --exclusive --time=3 -o /dev/null --wrap='sleep 120')")
done
trap 'scancel "${hold[@]}" "${stuck:-}" 2>/dev/null || true' EXIT
for j in "${hold[@]}"; do
    for _ in $(seq 30); do [ "$(squeue -h -j "$j" -o %T)" = RUNNING ] && break; sleep 0.5; done
    expect_eq "state of holding job $j" RUNNING "$(squeue -h -j "$j" -o %T)"
done
stuck=$(sbatch --parsable -N3 --ai-locality=hard --time=1 -o /dev/null --wrap='sleep 1')
ok1=$(sbatch --parsable -N2 --time=1 -o /dev/null --wrap='sleep 1')
ok2=$(sbatch --parsable -N1 --gpus=2 --time=1 -o /dev/null --wrap='sleep 1')
wait_job_gone "$ok1" 60
wait_job_gone "$ok2" 60
expect_eq "end state of a 2-node job beside the stuck one" COMPLETED "$(job_end_state "$ok1")"
expect_eq "end state of a GPU job beside the stuck one" COMPLETED "$(job_end_state "$ok2")"
expect_eq "state of the hard-locality job" PENDING "$(squeue -h -j "$stuck" -o %T)"
# The main scheduler tries the job at its next pass; the reason is logged then.
for _ in $(seq 60); do
    grep -q "JobId=$stuck waits: hard locality" "$MINICLUSTER_DIR/log/slurmctld.log" && break
    sleep 0.5
done
grep -q "JobId=$stuck waits: hard locality" "$MINICLUSTER_DIR/log/slurmctld.log" ||
    fail "slurmctld.log does not say why job $stuck waits"
scontrol ping | grep -q UP || fail "slurmctld is not up"
# Once a leaf has room, the job starts there.
scancel "${hold[@]}"
wait_job_gone "$stuck" 60
expect_eq "end state of the hard-locality job once a leaf is free" COMPLETED "$(job_end_state "$stuck")"
pass "job $stuck waited for a leaf while $ok1 and $ok2 ran"
