#!/usr/bin/env bash
# slurmctld restarts in the middle of a grow and the job stays consistent: its node list,
# its GPUs (a step gets 4 on every node; the nodes book exactly its GPUs) and its view
# agree, and no expansion job is left behind.
#   A  ai-resize grow waits for busy nodes; slurmctld restarts; the nodes free up: the
#      same ai-resize completes the grow (slurmctld forgets an expansion job's link across
#      a restart; the select plugin restores it).
#   B  an expansion job runs but its submitter died before the merge; slurmctld restarts;
#      ai-elasticd finds it past its deadline and merges it.
#   C  an expansion job that still waits past its deadline is cancelled by ai-elasticd.
source "$(dirname "$0")/lib.sh"
repo=$(cd "$(dirname "$0")/../.." && pwd)
bin=$SLURM_AI_BIN_DIR
trap 'cancel_named restart-grow restart-blocker' EXIT

restart_ctld() {
    "$repo/tools/minicluster" restart-ctld --dir "$MINICLUSTER_DIR" >"$WORK/restart.log" 2>&1 ||
        fail "slurmctld did not come back: $(tail -n 20 "$WORK/restart.log")"
}
wait_running() {
    for _ in $(seq 60); do [ "$(squeue -h -j "$1" -o %T)" = RUNNING ] && return 0; sleep 0.5; done
    fail "job $1 is $(squeue -h -j "$1" -o %T), not running"
}
gpus_used() { scontrol show node -d "$1" | sed -n 's/.*GresUsed=gpu:v100:\([0-9]*\).*/\1/p'; }
# The job's nodes, what the nodes book and (with "step") a step's GPUs on each must agree.
# Right after a restart slurmctld lets steps wait until every node has registered again
# (up to a minute here), so B and C look at the bookings only.
consistent() {  # JOB NODES-EXPECTED WHAT [step]
    local nodes n
    nodes=$(squeue -h -j "$1" -o %N)
    expect_eq "$3: nodes" "$2" "$nodes"
    if [ "${4:-}" = step ]; then
        srun --jobid="$1" --overlap -N"$(scontrol show hostnames "$nodes" | grep -c .)" \
            --ntasks-per-node=1 bash -c 'echo "$CUDA_VISIBLE_DEVICES"' 2>/dev/null |
            sort -u >"$WORK/gpus"
        expect_eq "$3: GPUs a step gets on each node" "0,1,2,3" "$(cat "$WORK/gpus")"
    fi
    # Until its nodes register again, a restarted slurmctld books a multi-node job's
    # whole GPU count on each node (stock Slurm does it too): wait for that to settle.
    for n in $(scontrol show hostnames "$nodes"); do
        for _ in $(seq 60); do [ "$(gpus_used "$n")" = 4 ] && break; sleep 0.5; done
        expect_eq "$3: GPUs booked on $n" 4 "$(gpus_used "$n")"
    done
    expect_eq "$3: expansion jobs left" "" "$(squeue -h -n "ai-expand:$1" -o %i)"
}

# A: the expansion job waits for n[3-4] across the restart.
job=$(sbatch --parsable -J restart-grow -N2 -w n[1-2] --gpus-per-node=4 -o /dev/null --wrap='sleep 300')
blocker=$(sbatch --parsable -J restart-blocker -N6 -w n[3-8] --gpus-per-node=4 -o /dev/null --wrap='sleep 300')
wait_running "$job"
wait_running "$blocker"
"$bin/ai-resize" grow "$job" --by 2 --timeout 120 --json >"$WORK/grow.json" 2>"$WORK/grow.err" &
resizer=$!
for _ in $(seq 20); do [ -n "$(squeue -h -n "ai-expand:$job" -o %i)" ] && break; sleep 0.5; done
[ -n "$(squeue -h -n "ai-expand:$job" -o %i)" ] || fail "no expansion job: $(cat "$WORK/grow.err")"
restart_ctld
expect_eq "job size just after the restart" 2 "$(squeue -h -j "$job" -o %D)"
scancel "$blocker"
wait "$resizer" || fail "ai-resize grow failed across the restart: $(cat "$WORK/grow.err")"
consistent "$job" "n[1-4]" "A" step

# B: an expansion job that runs, unmerged, when slurmctld restarts; its deadline passed.
past="ai-expand deadline=$(($(date +%s) - 60))"
salloc --no-shell -N1 -w n5 --gpus-per-node=4 --dependency="expand:$job" -J "ai-expand:$job" \
    --comment="$past" >"$WORK/salloc.out" 2>&1 || fail "expansion allocation: $(cat "$WORK/salloc.out")"
orphan=$(sed -n 's/.*Granted job allocation \([0-9]*\).*/\1/p' "$WORK/salloc.out")
restart_ctld
expect_eq "the orphan after the restart" RUNNING "$(squeue -h -j "$orphan" -o %T)"
"$bin/ai-elasticd" --slurm-conf "$SLURM_CONF" --state "$WORK/elasticd.json" --interval 1 --once \
    >"$WORK/elasticd.log" 2>&1 || fail "ai-elasticd --once: $(cat "$WORK/elasticd.log")"
grep -c "expansion job $orphan merged" "$WORK/elasticd.log" >/dev/null ||
    fail "ai-elasticd did not merge $orphan: $(cat "$WORK/elasticd.log")"
consistent "$job" "n[1-5]" "B"
view=$(json_get <("$bin/ai-resize" status "$job" --json) view_file)
expect_eq "B: the view ai-elasticd wrote" "n[1-5]" "$(json_get "$view" nodelist)"

# C: an expansion job that cannot start before its deadline is cancelled, nothing merged.
blocker=$(sbatch --parsable -J restart-blocker -N3 -w n[6-8] --gpus-per-node=4 -o /dev/null --wrap='sleep 300')
wait_running "$blocker"
stuck=$(sbatch --parsable -N1 --gpus-per-node=4 --dependency="expand:$job" -J "ai-expand:$job" \
    --comment="$past" -o /dev/null --wrap=true)
"$bin/ai-elasticd" --slurm-conf "$SLURM_CONF" --state "$WORK/elasticd.json" --interval 1 --once \
    >>"$WORK/elasticd.log" 2>&1 || fail "ai-elasticd --once: $(tail -n 5 "$WORK/elasticd.log")"
for _ in $(seq 20); do [ -z "$(squeue -h -j "$stuck" -t PD,R -o %i)" ] && break; sleep 0.5; done
expect_eq "the expansion job past its deadline" "" "$(squeue -h -j "$stuck" -t PD,R -o %i)"
consistent "$job" "n[1-5]" "C"

scancel "$job" "$blocker"
wait_job_gone "$job"
for n in n1 n2 n3 n4 n5; do
    for _ in $(seq 20); do [ "$(gpus_used "$n")" = 0 ] && break; sleep 0.5; done
    expect_eq "GPUs booked on $n after the job" 0 "$(gpus_used "$n")"
done
pass "grew across a restart (A), merged an orphan after one (B), cancelled a late one (C)"
