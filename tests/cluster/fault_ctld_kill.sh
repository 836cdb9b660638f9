#!/usr/bin/env bash
# slurmctld is killed with SIGKILL (no chance to save anything on the way out) and started
# again while jobs with --ai-* hints are running and pending. Afterwards: every job still
# exists; running jobs keep their nodes, GPUs, SystemComment and the plugin's per-job
# record, byte for byte; pending jobs start after the restart with the hints they were
# submitted with (their records, written from slurmctld's recovered job state, say so); no
# CPU or GPU of a node is ever held by two jobs at once; a node failure noted just before
# the kill is still in the plugin's failure history.
#
# Each kind of job is a case: setup_<case> submits before the kill, check_<case> verifies
# after the restart: running, grown by ai-resize, pending, in a gang waiting at its
# barrier, and a node failure noted just before the kill.
source "$(dirname "$0")/lib.sh"
repo=$(cd "$(dirname "$0")/../.." && pwd)
ctld_log=$MINICLUSTER_DIR/log/slurmctld.log
records=$STATE_DIR/ai_select/jobs
statefile=$STATE_DIR/ai_select_state.json

JOBS=()        # every job this test submitted
DOWN_NODE=""   # the node case failure_history took down
cleanup() {
    [ ${#JOBS[@]} -eq 0 ] || scancel "${JOBS[@]}" 2>/dev/null || true
    [ -z "$DOWN_NODE" ] || scontrol update NodeName="$DOWN_NODE" State=RESUME >/dev/null 2>&1 || true
}
trap cleanup EXIT

submit() {  # submit VAR ARGS...: sets VAR to the job's id
    local _var=$1 _id
    shift
    _id=$(sbatch --parsable -o /dev/null "$@") || fail "sbatch $* was refused"
    JOBS+=("$_id")
    printf -v "$_var" %s "$_id"
}

gpu_indexes() { scontrol -d show job "$1" | { grep -o 'IDX:[0-9,-]*' || true; } | tr '\n' ' '; }

wait_state() {  # wait_state JOBID STATE [SECONDS]
    local t=0 s
    while s=$(squeue -h -j "$1" -o %T 2>/dev/null) && [ "$s" != "$2" ]; do
        t=$((t + 1))
        [ $t -lt $((${3:-60} * 2)) ] ||
            fail "job $1 is '${s:-gone}', not $2, after ${3:-60}s: $(scontrol show job "$1" | grep -E 'Reason|NodeList' | tr -s ' ' | tr '\n' ' ')"
        sleep 0.5
    done
}

system_comment() { scontrol show job "$1" | sed -n 's/^ *SystemComment=//p'; }

# After a restart slurmctld knows a node's GPU indexes again only once the node has
# registered: until then GresUsed is a bare count (stock cons_tres shows the same, and
# such a node takes no new job: ReqNodeNotAvail). Waits for every node to register.
wait_nodes_registered() {
    local t=0
    while scontrol -d -o show node | grep -E 'GresUsed=gpu:[^ (]*:[1-9][0-9]*( |$)' >"$WORK/unregistered"; do
        t=$((t + 1))
        [ $t -lt 60 ] || fail "nodes not registered 30 s after the restart: $(cut -c1-60 "$WORK/unregistered" | tr '\n' ' ')"
        sleep 0.5
    done
}

# The hints in a job's record, as sorted JSON.
record_hints() { json_get "$records/$1.json" hints; }

# --- case: running jobs with hints keep nodes, GPUs, comment and record ----------------
declare -A RUN_NODES=() RUN_GPUS=() RUN_COMMENT=() RUN_RECORD=()
setup_running() {
    local id a b c d
    submit a -N2 --gpus-per-node=4 --ai-comm=allreduce:bytes=1G --wrap='sleep 300'
    submit b -N2 --gpus-per-node=1 --ai-comm=pipeline:stages=2,bytes=64M --wrap='sleep 300'
    submit c -N1 --gpus=2 --ai-locality=soft --wrap='sleep 300'
    submit d -N1 -n4 --wrap='sleep 300'
    RUNNING=("$a" "$b" "$c" "$d")
    for id in "${RUNNING[@]}"; do wait_state "$id" RUNNING; done
    for id in "${RUNNING[@]}"; do
        RUN_NODES[$id]=$(squeue -h -j "$id" -o %N)
        RUN_GPUS[$id]=$(gpu_indexes "$id")
        RUN_COMMENT[$id]=$(system_comment "$id")
        [ -f "$records/$id.json" ] || fail "running job $id has no record in $records"
        RUN_RECORD[$id]=$(cat "$records/$id.json")
    done
    expect_contains "record of the allreduce job ${RUNNING[0]}" "$(record_hints "${RUNNING[0]}")" allreduce
    expect_contains "SystemComment of job ${RUNNING[0]}" "${RUN_COMMENT[${RUNNING[0]}]}" "ai: "
}
check_running() {
    local id
    for id in "${RUNNING[@]}"; do
        expect_eq "state of running job $id after the restart" RUNNING "$(squeue -h -j "$id" -o %T)"
        expect_eq "nodes of running job $id" "${RUN_NODES[$id]}" "$(squeue -h -j "$id" -o %N)"
        expect_eq "GPUs of running job $id" "${RUN_GPUS[$id]}" "$(gpu_indexes "$id")"
        expect_eq "SystemComment of running job $id" "${RUN_COMMENT[$id]}" "$(system_comment "$id")"
        expect_eq "plugin record of running job $id" "${RUN_RECORD[$id]}" "$(cat "$records/$id.json")"
    done
}

# --- case: pending jobs keep their hints and start with them --------------------------
declare -A PEND_HINTS=()
setup_pending() {
    # Held by the user; blocked by a dependency; too big while the running jobs hold GPUs.
    submit HELD -N2 --gpus-per-node=2 --hold --ai-comm=allreduce:bytes=512M,algo=ring \
        --ai-checkpoint=/tmp/ckpt,keep=2 --wrap='sleep 1'
    submit DEP -N2 --gpus-per-node=4 --dependency="afterany:${RUNNING[0]}" \
        --ai-comm=pipeline:stages=2,bytes=128M,microbatches=8 --ai-locality=soft:30 --wrap='sleep 1'
    submit BIG -N8 --gpus-per-node=4 --ai-comm=allreduce:bytes=2G --wrap='sleep 1'
    PEND_HINTS[$HELD]='"algo": "ring", "bytes": 536870912, "pattern": "allreduce"'
    PEND_HINTS[$DEP]='"microbatches": 8, "pattern": "pipeline"'
    PEND_HINTS[$BIG]='"bytes": 2147483648, "pattern": "allreduce"'
    for id in "$HELD" "$DEP" "$BIG"; do wait_state "$id" PENDING 10; done
}
check_pending() {
    local id
    for id in "$HELD" "$DEP" "$BIG"; do
        expect_eq "state of pending job $id after the restart" PENDING "$(squeue -h -j "$id" -o %T)"
    done
    # Let them run: release the held job, end the running ones.
    scontrol release "$HELD"
    scancel "${RUNNING[@]}"
    for id in "$HELD" "$DEP" "$BIG"; do
        wait_job_gone "$id" 90
        expect_eq "end state of job $id submitted before the kill" COMPLETED "$(job_end_state "$id")"
        [ -f "$records/$id.json" ] || fail "job $id ran after the restart but has no record"
        expect_contains "hints of job $id, recorded when it started after the restart" \
            "$(record_hints "$id")" "${PEND_HINTS[$id]}"
        [ "$(json_get "$records/$id.json" decision)" != None ] ||
            fail "job $id was not placed by the engine after the restart: $(cat "$records/$id.json")"
    done
    expect_contains "checkpoint hint of job $HELD" "$(record_hints "$HELD")" '"dir": "/tmp/ckpt"'
    expect_contains "locality hint of job $DEP" "$(record_hints "$DEP")" '"wait_s": 30'
}

# --- case: a node failure noted just before the kill stays in the history -------------
# The plugin saves its history as soon as it notes a failure, not only at slurmctld's full
# state saves (every 5 minutes): SIGKILL right after the failure loses nothing.
setup_failure_history() {
    local used id attempt
    used=" $(for id in "${RUNNING[@]}"; do scontrol show hostnames "${RUN_NODES[$id]}"; done | tr '\n' ' ') "
    # A node the running jobs do not use, and without a failure in the history yet.
    DOWN_NODE=$(sinfo -h -N -o %N | sort -u | while read -r n; do
        [[ $used == *" $n "* ]] || json_get "$statefile" "failures.$n" >/dev/null 2>&1 || echo "$n"
    done | sed -n 1p)
    [ -n "$DOWN_NODE" ] || fail "no free node without a failure history to take down"
    # The plugin looks at node states when slurmctld refreshes its node information (this
    # query) and at job tests (this job). With ReturnToService=2 the node is back at the
    # next ping it answers (every 10 s here): should that come first, it is set DOWN again.
    for attempt in 1 2 3; do
        scontrol update NodeName="$DOWN_NODE" State=DOWN Reason=fault-test
        scontrol show node "$DOWN_NODE" >"$WORK/down-node.txt"
        grep -q 'State=DOWN' "$WORK/down-node.txt" || continue
        submit id -N1 --wrap=true
        wait_job_gone "$id"
        HISTORY_BEFORE=$(json_get "$statefile" "failures.$DOWN_NODE" 2>/dev/null) && break
        fail "$DOWN_NODE went down but the plugin did not save it at once: $(cat "$statefile")"
    done
    [ -n "${HISTORY_BEFORE:-}" ] || fail "$DOWN_NODE was back in service at once, 3 times"
}
check_failure_history() {
    local after
    after=$(json_get "$statefile" "failures.$DOWN_NODE" 2>/dev/null) ||
        fail "$DOWN_NODE's failure is not in the history after the kill: $(cat "$statefile")"
    expect_eq "$DOWN_NODE's failure history across the kill" "$HISTORY_BEFORE" "$after"
    # ReturnToService=2 may have brought it back when its slurmd registered again.
    scontrol update NodeName="$DOWN_NODE" State=RESUME 2>/dev/null || true
    DOWN_NODE=""
}

# --- case: a job grown by ai-resize keeps its merged nodes, GPUs and view --------------
# What ai-resize says of a job: its nodes, world size, view generation and whether the
# view file is current (not when it was asked).
grown_view() {
    "$SLURM_AI_BIN_DIR/ai-resize" status "$1" --json | python3 -c 'import json, sys
v = json.load(sys.stdin)
print(v["state"], v["nodelist"], v["num_nodes"], v["world_size"], v["generation"], v["view_current"])'
}
setup_growing() {
    local id
    submit id -N1 --gpus-per-node=1 --ai-elastic=1:2 --ai-comm=allreduce --wrap='sleep 300'
    wait_state "$id" RUNNING
    "$SLURM_AI_BIN_DIR/ai-resize" grow "$id" --by 1 --timeout 30s >"$WORK/grow.log" 2>&1 ||
        fail "ai-resize grow $id failed: $(cat "$WORK/grow.log")"
    expect_eq "nodes of job $id after the grow" 2 "$(squeue -h -j "$id" -o %D)"
    GROWN=$id
    GROWN_VIEW=$(grown_view "$id")
    # From here on it is a running job like the others: nodes, GPUs, comment and record.
    RUNNING+=("$id")
    RUN_NODES[$id]=$(squeue -h -j "$id" -o %N)
    RUN_GPUS[$id]=$(gpu_indexes "$id")
    RUN_COMMENT[$id]=$(system_comment "$id")
    RUN_RECORD[$id]=$(cat "$records/$id.json")
}
check_growing() {
    expect_eq "view of grown job $GROWN after the restart" "$GROWN_VIEW" "$(grown_view "$GROWN")"
    # Leftover expansion jobs would hold nodes; none may survive the restart.
    expect_eq "expansion jobs left" "" "$(squeue -h -o '%i %j' | grep -F "ai-expand:$GROWN" || true)"
}

# --- case: a gang that does not fit waits at the barrier, whole, across the kill --------
setup_gang() {
    local i id
    GANG=()
    for i in 1 2 3; do
        submit id -J fault-gang -N2 --gpus-per-node=4 --ai-gang=faultgang:3 --wrap='sleep 2'
        GANG+=("$id")
    done
    for id in "${GANG[@]}"; do wait_state "$id" PENDING 10; done
    # The barrier's reason appears at the next scheduling pass, on the members Slurm
    # considers (those behind them wait with Reason=Priority); a pass that ran before the
    # third member was submitted says "2 of 3 members submitted" until the next one.
    for _ in $(seq 60); do
        [[ $(system_comment "${GANG[0]}") == *"gang faultgang: all 3 members pending"* ]] && break
        sleep 0.5
    done
    expect_contains "SystemComment of gang member ${GANG[0]} before the kill" \
        "$(system_comment "${GANG[0]}")" "gang faultgang: all 3 members pending"
}
check_gang() {
    local id
    for id in "${GANG[@]}"; do
        expect_eq "state of gang member $id after the restart" PENDING "$(squeue -h -j "$id" -o %T)"
    done
}
# Runs after check_pending has freed the cluster: the whole gang starts, at once.
check_gang_starts() {
    local id starts
    for id in "${GANG[@]}"; do wait_job_gone "$id" 120; done
    starts=$(for id in "${GANG[@]}"; do
        sed -n "s/^JobId=$id .*StartTime=\([^ ]*\).*/\1/p" "$MINICLUSTER_DIR/log/jobcomp.log" | tail -n1
    done | python3 -c 'import sys, datetime
t = [datetime.datetime.fromisoformat(l.strip()).timestamp() for l in sys.stdin if l.strip()]
print(len(t), int(max(t) - min(t)) if t else -1)')
    expect_eq "gang members that ran, and the seconds between their starts (at most 2)" \
        "3 ok" "$(awk '{print $1, ($2 >= 0 && $2 <= 2) ? "ok" : $2 "s"}' <<<"$starts")"
}

# In this order: pending's BIG job needs the node failure_history takes down back; the
# gang starts once pending's check has ended the running jobs.
CASES=(running growing failure_history gang pending gang_starts)
# No grow where slurmctld dies merging an expansion job (25.11, 26.05: elastic_resize.sh).
! slurm_at_least 25 11 || CASES=(running failure_history gang pending gang_starts)

# --- the kill ---------------------------------------------------------------------------
for c in "${CASES[@]}"; do ! declare -F "setup_$c" >/dev/null || "setup_$c"; done
check_no_double_allocation "before the kill"

# slurmctld saves its job state in the background, up to SAVE_MAX_WAIT (5 s) after a
# change: a job acknowledged in that window is lost by any SIGKILL, with or without the
# suite. Wait for a save made after every case's last change, so that what is tested is
# the suite's own state. (Changing a job's comment schedules a save.)
barrier=$(python3 -c 'import time; print(time.time_ns())')
scontrol update JobId="$HELD" Comment=fault-test-barrier
for _ in $(seq 60); do
    saved=$(python3 -c 'import os,sys; print(os.stat(sys.argv[1]).st_mtime_ns)' "$STATE_DIR/job_state")
    [ "$saved" -gt "$barrier" ] && break
    sleep 0.5
done
[ "$saved" -gt "$barrier" ] || fail "slurmctld did not save its job state within 30 s"

pid=$(cat "$MINICLUSTER_DIR/run/slurmctld.pid")
mark=$(wc -l <"$ctld_log")
kill -KILL "$pid"
for _ in $(seq 100); do
    grep -q '^State:.*Z' "/proc/$pid/status" 2>/dev/null || [ ! -d "/proc/$pid" ] && break
    sleep 0.1
done
"$repo/tools/minicluster" restart-ctld --dir "$MINICLUSTER_DIR" >"$WORK/restart.log" 2>&1 ||
    fail "slurmctld did not come back after SIGKILL: $(tail -n 20 "$WORK/restart.log")"
tail -n +"$mark" "$ctld_log" | grep -c 'Recovered JobId\|Recovered information about' >/dev/null ||
    fail "slurmctld.log shows no job recovery after the restart"

# Every job is still known.
for id in "${JOBS[@]}"; do
    squeue -h -j "$id" -o %i 2>/dev/null | grep -c . >/dev/null ||
        [ -n "$(job_end_state "$id")" ] || fail "job $id is gone after the restart"
done
wait_nodes_registered
check_no_double_allocation "once the nodes registered after the restart"
for c in "${CASES[@]}"; do "check_$c"; check_no_double_allocation "after case $c"; done
pass "${#JOBS[@]} jobs across a SIGKILL of slurmctld: running and grown ones kept nodes, GPUs and records; pending ones ran with their hints; a waiting gang stayed whole and started together; no double allocation; failure history kept"
