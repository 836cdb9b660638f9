#!/usr/bin/env bash
# Manual resize of a running GPU job with ai-resize. The job grows itself from inside
# (its script calls `ai-resize grow --by 2`): the new nodes are its leaf neighbours, the
# GPUs of the expansion job are the job's (a step runs on every node, another job cannot
# take them), and the job's own view follows, told by the signal it chose. Its owner then
# shrinks it from outside, by name and by count, and the view follows again; releasing
# the batch host or going below MIN is refused with a reason.
source "$(dirname "$0")/lib.sh"
resize=$SLURM_AI_BIN_DIR/ai-resize
trap 'cancel_named elastic-resize elastic-blocker' EXIT

# Where the suite does not grow jobs (slurm_grows_jobs): a grow is refused before anything
# is submitted, the controller stays up, and shrinking works.
if ! slurm_grows_jobs; then
    id=$(sbatch --parsable -J elastic-resize -N2 -w n[5-6] --gpus-per-node=4 \
        --ai-elastic=1:4 -o /dev/null --wrap='sleep 300')
    for _ in $(seq 40); do [ "$(squeue -h -j "$id" -o %T)" = RUNNING ] && break; sleep 0.25; done
    out=$("$resize" grow "$id" --by 2 2>&1) && fail "a grow on Slurm $SLURM_SERIES was accepted: $out"
    expect_contains "refusal" "$out" "cannot grow here: slurmctld 25.11 and 26.05 crash"
    expect_eq "expansion jobs submitted" "" "$(squeue -h -o %j | grep '^ai-expand:' || true)"
    scontrol ping | grep -c 'is UP' >/dev/null || fail "slurmctld is not up after the refused grow"
    "$resize" shrink "$id" --by 1 >/dev/null || fail "shrink --by 1 failed"
    expect_eq "nodes after shrinking by one" 1 "$(squeue -h -j "$id" -o %D)"
    cancel_named elastic-resize
    pass "Slurm $SLURM_SERIES: grow refused before any expansion job (slurmctld up), shrink works"
    exit 0
fi

# The job writes "<generation> <nodes> <world size>" for every resize signal it gets. Its
# body is one function, read whole before it runs (bash reads a script as it goes), and
# runs no $(...) once the trap is set: a signal that comes as bash starts one can be lost
# (docs/elastic.md; a `for i in $(seq 300)` here lost the grow's in 2 of 6 runs).
cat >"$WORK/job.sh" <<EOF
#!/bin/bash
report() {
    python3 -c 'import json,sys; v=json.load(open(sys.argv[1])); print(v["generation"], v["nodelist"], v["world_size"])' "\$view" >>"$WORK/seen"
}
main() {
    view=\$($resize status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["view_file"])')
    echo "\$view" >"$WORK/view_path"
    trap report USR2
    $resize grow --by 2 >"$WORK/grow.out" 2>&1 || echo "grow failed: \$?" >>"$WORK/grow.out"
    for ((i = 0; i < 300; i++)); do sleep 1; done
}
main
EOF
chmod +x "$WORK/job.sh"

# Leaves: n1-n4 and n5-n8. The job runs on n5 and n6; n3 and n4 are busy. Free are n1,
# n2 (the other leaf, first in Slurm's order) and n7, n8 (the job's leaf): a grow by two
# must take n7 and n8.
blocker=$(sbatch --parsable -J elastic-blocker -w n[3-4] -N2 --gpus-per-node=4 -o /dev/null --wrap='sleep 300')
id=$(sbatch --parsable -J elastic-resize -N2 -w n[5-6] --gpus-per-node=4 \
    --ai-elastic=2:5:signal=USR2 -o "$WORK/job.out" "$WORK/job.sh")
for _ in $(seq 60); do
    [ "$(squeue -h -j "$id" -o %D 2>/dev/null)" = 4 ] && break
    sleep 1
done
nodes=$(squeue -h -j "$id" -o %N)
expect_eq "nodes after the job grew itself ($(cat "$WORK/grow.out" 2>/dev/null))" "n[5-8]" "$nodes"
expect_contains "ai-resize's report" "$(cat "$WORK/grow.out")" "added n[7-8]"

# The merged job owns the new nodes' GPUs: a step runs with 4 GPUs on each of 4 nodes.
srun --jobid="$id" --overlap -N4 --ntasks-per-node=1 \
    bash -c 'echo "$SLURMD_NODENAME $CUDA_VISIBLE_DEVICES"' 2>/dev/null | sort >"$WORK/gpus"
expect_eq "GPUs of the grown job" "n5 0,1,2,3 n6 0,1,2,3 n7 0,1,2,3 n8 0,1,2,3" \
    "$(tr '\n' ' ' <"$WORK/gpus" | sed 's/ $//')"
scontrol show node -d n7 | grep -c 'GresUsed=gpu:v100:4' >/dev/null ||
    fail "n7's GPUs are not booked after the merge: $(scontrol show node -d n7 | grep GresUsed)"
# Its CPUs are booked on every node, the added ones included (cons_tres's merge alone
# lists them all on the first node and leaves the added nodes' CPUs free).
check_no_double_allocation "after the grow"
thief=$(sbatch --parsable -J elastic-blocker -w n7 -N1 --gpus-per-node=1 -o /dev/null --wrap=true)
sleep 3
expect_eq "a job asking for a GPU of n7" PENDING "$(squeue -h -j "$thief" -o %T)"
scancel "$thief"

# The job saw its view change with its signal.
for _ in $(seq 20); do grep -c 'n\[5-8\] 16' "$WORK/seen" >/dev/null 2>&1 && break; sleep 0.5; done
expect_eq "what the job read after its grow (its output: $(cat "$WORK/job.out" 2>/dev/null))" \
    "n[5-8] 16" "$(tail -n1 "$WORK/seen" 2>/dev/null | cut -d' ' -f2-)"

# Its owner shrinks it from outside: a named node, then one more chosen by the engine.
"$resize" shrink "$id" --nodes n7 --json >"$WORK/shrink1.json" || fail "shrink --nodes n7 failed"
expect_eq "nodes after releasing n7" "n[5-6,8]" "$(squeue -h -j "$id" -o %N)"
"$resize" shrink "$id" --by 1 --json >"$WORK/shrink2.json" || fail "shrink --by 1 failed"
expect_eq "nodes the job keeps" "$(json_get "$WORK/shrink2.json" nodes)" "$(squeue -h -j "$id" -o %N)"
expect_eq "nodes after shrinking by one" 2 "$(squeue -h -j "$id" -o %D)"
view=$(cat "$WORK/view_path")
gen=$(json_get "$view" generation)
[ "$gen" -ge 2 ] || fail "view generation after a grow and two shrinks: $gen"
expect_eq "world size after two shrinks" 8 "$(json_get "$view" world_size)"
expect_eq "host file after two shrinks" 2 "$(grep -c 'slots=4' "$(dirname "$view")/hostfile")"
for _ in $(seq 20); do [ "$(tail -n1 "$WORK/seen" | cut -d' ' -f1)" = "$gen" ] && break; sleep 0.5; done
expect_eq "generation the job read last" "$gen" "$(tail -n1 "$WORK/seen" | cut -d' ' -f1)"

# Refused, with the reason: the batch host, and going below MIN without --force.
out=$("$resize" shrink "$id" --nodes n5 2>&1) && fail "releasing the batch host was accepted"
expect_contains "refusal" "$out" "runs the batch script"
out=$("$resize" shrink "$id" --by 1 2>&1) && fail "shrinking below MIN was accepted"
expect_contains "refusal" "$out" "below its --ai-elastic MIN of 2"
out=$("$resize" shrink "$id" --by 1 --force 2>&1) || fail "shrink --force was refused: $out"
out=$("$resize" shrink "$id" --by 1 --force 2>&1) && fail "shrinking to zero nodes was accepted"
expect_contains "refusal" "$out" "cannot release 1"
expect_eq "nodes left" n5 "$(squeue -h -j "$id" -o %N)"
scancel "$id" "$blocker"
wait_job_gone "$id"

# A job without GPUs grows too (cons_tres's merge, without the GRES part): its CPUs are
# booked on the added node, and a second grown job's are not handed out twice.
for k in 1 2; do
    cpu_id=$(sbatch --parsable -J elastic-resize -N1 -n2 --ai-elastic=1:2 -o /dev/null --wrap='sleep 120')
    for _ in $(seq 40); do [ "$(squeue -h -j "$cpu_id" -o %T)" = RUNNING ] && break; sleep 0.25; done
    "$resize" grow "$cpu_id" --by 1 --timeout 30s >"$WORK/grow-cpu$k.out" 2>&1 ||
        fail "grow of CPU job $cpu_id failed: $(cat "$WORK/grow-cpu$k.out")"
    expect_eq "nodes of CPU job $cpu_id after its grow" 2 "$(squeue -h -j "$cpu_id" -o %D)"
done
check_no_double_allocation "after two jobs without GPUs grew"
cancel_named elastic-resize
pass "grew n[5-6] -> n[5-8] from inside (not n[1-2]), shrank to n5 from outside; the job followed; CPUs of grown jobs booked on every node"
