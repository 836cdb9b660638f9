#!/usr/bin/env bash
# A bad --ai-* value stops sbatch with a message naming the option and what was
# expected, and no job is created.
source "$(dirname "$0")/lib.sh"

check_refused() {  # OPTION=VALUE  EXPECTED-SUBSTRING
    local before after err rc=0
    before=$(next_job_id)
    err=$(sbatch "$1" -o /dev/null --wrap=true 2>&1 >/dev/null) || rc=$?
    [ $rc -ne 0 ] || fail "sbatch $1 was accepted"
    expect_contains "sbatch $1 stderr" "$err" "${1%%=*}"
    expect_contains "sbatch $1 stderr" "$err" "$2"
    after=$(next_job_id)
    # The probe job of next_job_id takes one id itself; anything more is a leaked job.
    expect_eq "job ids consumed by a refused sbatch $1" $((before + 1)) "$after"
}

check_refused --ai-comm=allgather "one of allreduce, pipeline, tp, moe, ps, none"
check_refused --ai-comm=allreduce:bytes=12Q "a size such as"
check_refused --ai-comm=tp:stages=4 "size, bytes"
check_refused --ai-elastic=8:2 "MIN <= MAX"
check_refused --ai-gang=g:1 "an integer from 2"
check_refused --ai-checkpoint=relative/dir "an absolute directory path"
check_refused --ai-locality=strict "hard or soft"
check_refused --ai-dag=dag.json "an absolute path"

# srun and salloc refuse too, before asking for an allocation.
for cmd in srun salloc; do
    rc=0
    err=$($cmd -N1 --ai-elastic=x true 2>&1) || rc=$?
    [ $rc -ne 0 ] || fail "$cmd --ai-elastic=x was accepted"
    expect_contains "$cmd stderr" "$err" "--ai-elastic"
done
expect_eq "jobs left in the queue" "" "$(squeue -h -o %i)"
pass "8 bad sbatch values and srun/salloc refused, no job created"
