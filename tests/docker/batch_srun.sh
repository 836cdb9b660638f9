#!/usr/bin/env bash
# A batch job whose script runs a multi-node GPU srun, on separate hosts: the two tasks
# run in two compute containers with their own names and addresses, each sees the 2 GPUs
# it asked for, and the suite's environment names rank 0's host as the rendezvous.
# slurmctld records the job as completed and the select plugin's record names the same
# nodes.
source "$(dirname "$0")/lib.sh"

cat >"$HOST_DIR/job.sh" <<'JOB'
#!/bin/bash
srun -N2 --ntasks-per-node=1 --gpus-per-node=2 bash -c 'echo "task=$SLURM_PROCID host=$(hostname) addr=$(hostname -i) gpus=$CUDA_VISIBLE_DEVICES rank=$RANK world=$WORLD_SIZE master=$MASTER_ADDR"'
JOB
job=$(ctl sbatch --parsable -N2 --gpus-per-node=2 --ai-comm=allreduce:bytes=1G \
    -o "$WORK/out" "$WORK/job.sh") || fail "sbatch refused the job"
wait_until 90 "job $job ends" job_gone "$job"
out=$HOST_DIR/out
[ -f "$out" ] || fail "no output $out"
[ "$(grep -c '^task=' "$out")" = 2 ] || fail "expected 2 task lines: $(cat "$out")"

field() { sed -n "s/.*task=$1 .*$2=\([^ ]*\).*/\1/p" "$out"; }
h0=$(field 0 host) h1=$(field 1 host) a0=$(field 0 addr) a1=$(field 1 addr)
[[ $h0 =~ ^c[1-4]$ && $h1 =~ ^c[1-4]$ ]] || fail "tasks ran on '$h0' and '$h1', not compute containers"
[ "$h0" != "$h1" ] || fail "both tasks ran on $h0"
[[ $a0 != 127.* && $a0 != "$a1" ]] || fail "the hosts' addresses are '$a0' and '$a1': expected two private ones"
for t in 0 1; do
    gpus=$(field $t gpus)
    [[ $gpus =~ ^[0-3],[0-3]$ ]] || fail "task $t sees GPUs '$gpus', expected two of 0-3"
    [ "$(field $t rank)" = $t ] || fail "task $t has RANK=$(field $t rank)"
    [ "$(field $t world)" = 2 ] || fail "task $t has WORLD_SIZE=$(field $t world)"
    [ "$(field $t master)" = "$h0" ] || fail "task $t has MASTER_ADDR=$(field $t master), rank 0 runs on $h0"
done

ctl grep -E "JobId=$job .*JobState=COMPLETED" /var/log/slurm/jobcomp.log >/dev/null ||
    fail "jobcomp.log does not record job $job as COMPLETED"
nodes=$(ctl ai-explain "$job" --json | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["nodes"])') ||
    fail "ai-explain has no record of job $job"
nodes=$(ctl scontrol show hostnames "$nodes" | sort | xargs)
[ "$nodes" = "$(printf '%s\n' "$h0" "$h1" | sort | xargs)" ] ||
    fail "ai-explain says nodes '$nodes', the tasks ran on $h0 $h1"
echo "job $job: tasks on $h0 ($a0) and $h1 ($a1), GPUs $(field 0 gpus) and $(field 1 gpus)"
