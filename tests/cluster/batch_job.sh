#!/usr/bin/env bash
# A batch job with GPUs runs to completion and writes what its script printed.
source "$(dirname "$0")/lib.sh"

cat >"$WORK/job.sh" <<'JOB'
#!/bin/bash
echo "node=$SLURMD_NODENAME"
echo "gpus=$CUDA_VISIBLE_DEVICES"
echo "sum=$((6 * 7))"
JOB
id=$(sbatch --parsable --wait -N1 --gpus=2 -o "$WORK/out.%j" "$WORK/job.sh")
out=$(cat "$WORK/out.$id")
expect_contains "job output" "$out" "sum=42"
expect_contains "job output" "$out" "node=n"
gpus=$(sed -n 's/^gpus=//p' <<<"$out")
expect_eq "number of GPUs in CUDA_VISIBLE_DEVICES ($gpus)" 2 "$(tr ',' '\n' <<<"$gpus" | grep -c .)"
expect_eq "end state of job $id" COMPLETED "$(job_end_state "$id")"
pass "job $id: $(tr '\n' ' ' <<<"$out")"
