#!/usr/bin/env bash
# A job whose hint cannot be met (hard locality while no leaf has room) waits with its
# reason logged, and every other job keeps being scheduled normally around it.
source "$(dirname "$0")/lib.sh"

hold=()
for n in n1 n2 n5 n6; do
    hold+=("$(sbatch --parsable -w "$n" --exclusive -o /dev/null --wrap='sleep 120')")
done
trap 'scancel "${hold[@]}" "${stuck:-}" 2>/dev/null || true' EXIT
stuck=$(sbatch --parsable -N3 --ai-locality=hard -o /dev/null --wrap='sleep 1')
ok1=$(sbatch --parsable -N2 -o /dev/null --wrap='sleep 1')
ok2=$(sbatch --parsable -N1 --gpus=2 -o /dev/null --wrap='sleep 1')
wait_job_gone "$ok1" 60
wait_job_gone "$ok2" 60
expect_eq "end state of a 2-node job beside the stuck one" COMPLETED "$(job_end_state "$ok1")"
expect_eq "end state of a GPU job beside the stuck one" COMPLETED "$(job_end_state "$ok2")"
expect_eq "state of the hard-locality job" PENDING "$(squeue -h -j "$stuck" -o %T)"
grep -q "JobId=$stuck waits: hard locality" "$MINICLUSTER_DIR/log/slurmctld.log" ||
    fail "slurmctld.log does not say why job $stuck waits"
scontrol ping | grep -q UP || fail "slurmctld is not up"
# Once a leaf has room, the job starts there.
scancel "${hold[@]}"
wait_job_gone "$stuck" 60
expect_eq "end state of the hard-locality job once a leaf is free" COMPLETED "$(job_end_state "$stuck")"
pass "job $stuck waited for a leaf while $ok1 and $ok2 ran"
