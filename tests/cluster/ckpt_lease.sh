#!/usr/bin/env bash
# The suite's own failure signal (docs/checkpoint.md, "Leases") at Slurm's default
# SlurmdTimeout=300, on a cluster of its own with an ai-lease agent per node. Each signal
# brings a 2-node toy trainer (--no-kill, --ai-checkpoint) back within seconds, with no
# committed step lost, where Slurm alone would wait five minutes:
#   lapse      the node dies with its agent (kill-node): its lease lapses, slurmd's port
#              confirms it, ai-recover sets it DOWN naming the lease and requeues the job
#   peer_lost  slurmd and the tasks die but the host lives (its agent renews on): a task
#              of the job reports the lost peer with $AI_REPORT_FAILURE; nothing else
#              would find the node before SlurmdTimeout
#   health     a fatal Xid line lands in the node's HealthEventFile: the node is set DOWN
#              and drained although it answers, and the job moves
# And no false alarm first, each with a job running: ai-recover restarted, slurmctld
# restarted, an agent frozen for 5 s (its lease lapses, slurmd answers: no action), and
# every CPU busy for 30 s. No node goes DOWN, no job restarts. Nor does a node-down
# trigger that runs after its node is back in service and serving a new job.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/../trainer/cluster_helpers.bash"
t_begin=$SECONDS
LEASE=${SLURM_AI_BIN_DIR:?}/ai-lease
trap 'rc=$?; kill ${LOAD_PIDS[*]:-} 2>/dev/null || true; ckpt_cluster_down "$rc"' EXIT
LOAD_PIDS=()
dir=$(mktemp -u /tmp/slurm-ai-ckpt-lease.XXXXXX)
ckpt_cluster_up "$dir" --lease "$LEASE" --spank-arg "lease_program=$LEASE" \
    --extra-conf SlurmdTimeout=300 --ai-conf "HealthEventFile=$dir/xid-%n.log"
LOG=$CKPT_STATE/ai_recover/ai-recover.log
wait_until 20 "ai-recover taking leases" grep -q "leases: taking renewals" "$LOG"

# start_trainer NAME: a 2-node trainer with a first checkpoint; sets ID, OUT, A1 (batch
# host), A2 (the other node).
start_trainer() {
    OUT=$WORK/$1.out
    CKPT_SHOW_ON_FAILURE=("$OUT")
    ID=$(submit_trainer "$OUT" "$WORK/$1.ckpt" -J "$1" -N2 --exclusive --no-kill \
        --ai-checkpoint="$WORK/$1.ckpt" -- --steps 100000 --step-ms 100 --every 50)
    wait_until 60 "job $ID ($1) running with a checkpoint" output_has "$OUT" "checkpoint step=50 "
    A1=$(job_field "$ID" BatchHost)
    A2=""
    for n in $(scontrol show hostnames "$(job_field "$ID" NodeList)"); do
        [ "$n" = "$A1" ] || A2=$n
    done
    [ -n "$A2" ] || fail "job $ID has one node"
}
down_reason() { scontrol -o show node "$1" | sed -n 's/.* Reason=\(.*\) \[.*/\1/p'; }
node_is_out() { sinfo -h -N -n "$1" -o %t | grep -qE 'down|drain|drng'; }
# recovered NAME SIGNAL REASON_TEXT: job $ID runs again (restart 1) after $A2 failed at
# T_FAIL, with $A2 DOWN for REASON_TEXT; prints the seconds it took and checks nothing
# committed was lost.
recovered() {
    wait_until 40 "job $ID ($1) running again after $A2 failed ($2)" \
        job_running_with_restarts "$ID" 1 "$T_FAIL"
    local took; took=$(awk -v f="$T_FAIL" -v n="$(date +%s.%N)" 'BEGIN { printf "%.1f", n - f }')
    node_is_out "$A2" || fail "$A2 is not DOWN or drained after $2: $(sinfo -h -N -n "$A2" -o '%t %E')"
    expect_contains "$A2's reason" "$(down_reason "$A2")" "$3"
    until [ "$(grep -c ' resume ' "$OUT")" -ge 4 ]; do sleep 0.2; done
    scancel "$ID"
    wait_job_gone "$ID" 60
    local j; j=$(analyse "$OUT" "$T_FAIL")
    expect_eq "$1: committed steps lost" 0 "$(py "$j" 'd["runs"][1]["lost"]')"
    echo "$1: $A2 failed ($2) -> running again in ${took} s; reason: $(down_reason "$A2")"
    TOOK+=("$1 ${took}s")
}
back_in_service() {  # back_in_service NODE: slurmd and agent again, the node idle
    tools_mc start-node "$1" >/dev/null 2>&1 || true
    scontrol update NodeName="$1" State=RESUME >/dev/null 2>&1 || true
    wait_until 60 "$1 idle again" node_idle "$1"
}
tools_mc() { "$CKPT_REPO/tools/minicluster" "$@" --dir "$CKPT_DIR"; }
node_idle() { [ "$(sinfo -h -N -n "$1" -o %t)" = idle ]; }
TOOK=()

# ai-metrics' figure NAME (no labels), from ai-recover's saved lease book.
metric() {
    "$SLURM_AI_BIN_DIR/ai-metrics" --slurm-conf "$SLURM_CONF" --once 2>/dev/null |
        awk -v name="$1" '$1 == name { print $2 }'
}
metric_is() { [ "$(metric "$1")" = "$2" ]; }

# --- no false alarms -------------------------------------------------------------------
start_trainer calm
calm=$ID
wait_until 15 "ai-metrics showing 2 nodes with leases" metric_is slurm_ai_lease_nodes 2
restart_recover() {  # ai-recover's watch again; its new log lines start at line $LOG_FROM
    stop_daemon "$CKPT_DIR/run/ai-recover.pid" "ai-recover's watch loop" 60
    "$@"
    LOG_FROM=$(($(wc -l <"$LOG") + 1))
    setsid "$RECOVER" --conf "$SLURM_CONF" --grace 10 watch --interval 2 </dev/null \
        >>"$CKPT_DIR/log/ai-recover.out" 2>&1 &
    echo $! >"$CKPT_DIR/run/ai-recover.pid"
}
log_since_restart() { tail -n +"$LOG_FROM" "$LOG"; }
restart_recover
sleep 8
tools_mc restart-ctld >/dev/null 2>&1 || fail "slurmctld did not restart"
sleep 8
agent=$(cat "$CKPT_DIR/run/ai-lease-$A2.pid")
kill -STOP "$agent"
sleep 5
kill -CONT "$agent"
wait_until 20 "ai-recover probing $A2 and finding slurmd up" \
    grep -q "lease-down: $A2: lease lapsed.*its slurmd answers" "$LOG"
for _ in $(seq $(($(nproc) * 2))); do
    (exec nice -n 0 sh -c 'while :; do :; done') &
    LOAD_PIDS+=($!)
done
sleep 30
kill "${LOAD_PIDS[@]}"
LOAD_PIDS=()
sleep 4
expect_eq "nodes DOWN after the restarts, a frozen agent and CPU load" "" \
    "$(sinfo -h -N -t down -o %N)"
expect_eq "restarts of job $calm" 0 "$(job_field "$calm" Restarts)"
expect_eq "state of job $calm" RUNNING "$(job_field "$calm" JobState)"
[ "$(grep -c "set DOWN" "$LOG")" = 0 ] || fail "ai-recover set a node DOWN: $(grep "set DOWN" "$LOG")"
scancel "$calm"
wait_job_gone "$calm" 60

# --- the lease lapses: the node died with its agent, while ai-recover restarted --------
# ai-recover keeps its lease book in its state (ai_recover/leases): the restarted one
# knows that $A2 ran the job, and counts its lease lapsed when it never renews.
start_trainer lapse
book=$CKPT_STATE/ai_recover/leases
kept() {
    grep -q "^slurm-ai-lease/1 hold node=$A2 boot=[0-9]* seq=[0-9]* jobs=$ID revoked=\$" "$book"
}
wait_until 10 "$A2's lease with job $ID in $book" kept
kill_a2() {
    T_FAIL=$(date +%s.%N)
    tools_mc kill-node "$A2" >/dev/null 2>&1 || fail "could not kill $A2"
}
restart_recover kill_a2
restored() {
    log_since_restart | grep -q "leases: restored from $book: [1-9][0-9]* nodes with checkpointing"
}
wait_until 20 "the restarted ai-recover restoring its lease book" restored
recovered lapse "kill-node while ai-recover restarted" "ai-lease: lease lapsed"
wait_until 15 "ai-metrics showing job $ID revoked on the dead $A2" \
    metric_is slurm_ai_lease_revoked_jobs 1
back_in_service "$A2"
# Its agent runs again and renews without the job's tasks: nothing is revoked any more.
wait_until 15 "ai-metrics showing no job revoked" metric_is slurm_ai_lease_revoked_jobs 0

# --- a task reports the lost peer: slurmd died, the host lives --------------------------
start_trainer peer
T_FAIL=$(date +%s.%N)
tools_mc kill-node "$A2" --host-lives >/dev/null 2>&1 || fail "could not kill $A2's slurmd"
# What a trainer's error handler does (tests/trainer/ddp_trainer.py does it on a gloo
# error): the command its task's environment names, run with that environment, as the
# job's user, on the batch host.
task=""
for pid in $(pgrep -f toy_trainer.py); do
    env_of=$(tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null || true)
    grep -qx "SLURM_JOB_ID=$ID" <<<"$env_of" && grep -qx "SLURMD_NODENAME=$A1" <<<"$env_of" &&
        task=$pid
done
[ -n "$task" ] || fail "no trainer task of job $ID on $A1"
python3 - "$task" "$A2" >"$WORK/report.out" 2>&1 <<'PY' || fail "the report failed: $(cat "$WORK/report.out")"
import os, shlex, subprocess, sys
env = dict(e.split("=", 1) for e in open(f"/proc/{sys.argv[1]}/environ").read().split("\0") if "=" in e)
print("AI_REPORT_FAILURE=" + env.get("AI_REPORT_FAILURE", ""), flush=True)
st = os.stat(f"/proc/{sys.argv[1]}")
def as_task():
    os.setgid(st.st_gid)
    os.setuid(st.st_uid)
cmd = shlex.split(env["AI_REPORT_FAILURE"]) + ["--peer", sys.argv[2], "--why", "NCCL error: remote process exited"]
sys.exit(subprocess.run(cmd, env=env, preexec_fn=as_task).returncode)
PY
expect_contains "the task's environment" "$(cat "$WORK/report.out")" "AI_REPORT_FAILURE=$LEASE report"
recovered peer "kill-node --host-lives, reported" "lost a peer (NCCL_error:_remote_process_exited)"
grep -q "lease-down: $A2 set DOWN.*slurmd refuses" "$LOG" ||
    fail "the report was not confirmed by slurmd's port: $(grep lease-down "$LOG" | tail -n 3)"
back_in_service "$A2"

# --- a fatal GPU event on a node that still answers -------------------------------------
start_trainer health
# First a node-down trigger that runs late, when the node it names is back in service and
# serves this job (the peer's node resumed above, then given to a new job): no false alarm.
from=$(($(wc -l <"$LOG") + 1))
"$RECOVER" --conf "$SLURM_CONF" node-down "$A2" >/dev/null 2>&1 ||
    fail "ai-recover node-down $A2 failed: $(tail -n +"$from" "$LOG")"
expect_eq "restarts of job $ID after a late trigger for $A2" 0 "$(job_field "$ID" Restarts)"
expect_contains "ai-recover's log of a late trigger" "$(tail -n +"$from" "$LOG")" \
    "nodes down: $A2 DOWN, back in service now"
expect_contains "ai-recover's log of a late trigger" "$(tail -n +"$from" "$LOG")" \
    "no checkpointing job to recover from $A2"
T_FAIL=$(date +%s.%N)
echo "$(date '+%b %d %T') $A2 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has fallen off the bus." \
    >>"$dir/xid-$A2.log"
recovered health "Xid 79 in $dir/xid-$A2.log" "health event on $A2: Xid_79_on_PCI:0000:3b:00"
# The agent sent the report three times (with its next renewals); ai-recover acted once.
expect_eq "health events acted on" 1 "$(grep -c "leases: $A2 reports a health event" "$LOG")"
back_in_service "$A2"

pass "no false alarm (ai-recover and slurmctld restarted, an agent frozen 5 s, CPUs busy 30 s); at SlurmdTimeout=300: ${TOOK[*]} ($((SECONDS - t_begin))s)"
