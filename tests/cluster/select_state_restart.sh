#!/usr/bin/env bash
# The plugin's state (the failure history) survives a slurmctld restart; a corrupt state
# file is reported and the plugin starts clean; records of finished jobs stay readable.
source "$(dirname "$0")/lib.sh"
repo=$(cd "$(dirname "$0")/../.." && pwd)
statefile=$STATE_DIR/ai_select_state.json
trap 'scontrol update NodeName=n8 State=RESUME >/dev/null 2>&1 || true' EXIT

id=$(sbatch --parsable -N2 --ai-comm=allreduce -o /dev/null --wrap='sleep 1')
wait_job_gone "$id"
scontrol update NodeName=n8 State=DOWN Reason=test-failure
# A job test notices the node is down; the next state save writes the history.
id2=$(sbatch --parsable -N1 -o /dev/null --wrap=true)
wait_job_gone "$id2"
# With ReturnToService=2 the node may be back already, at its first answered ping.
scontrol update NodeName=n8 State=RESUME 2>/dev/null || sinfo -h -n n8 -o %t | grep -qv down ||
    fail "n8 stays down after RESUME"
"$repo/tools/minicluster" restart-ctld --dir "$MINICLUSTER_DIR" >"$WORK/restart.log" 2>&1 ||
    fail "slurmctld did not come back: $(tail -n 20 "$WORK/restart.log")"
[ -f "$statefile" ] || fail "no state file $statefile after the restart"
# Version 2 keeps decayed counts; a failure minutes old still weighs almost 1 in the day's.
count=$(json_get "$statefile" failures.n8.day)
[ "$(awk -v c="$count" 'BEGIN { print (c >= 0.5) }')" = 1 ] || fail "n8's failure is not in the restored history: $(cat "$statefile")"
"$SLURM_AI_BIN_DIR/ai-explain" "$id" | grep -q "placed by the suite's engine policy" ||
    fail "ai-explain lost job $id's record across the restart"

# A corrupt state file: reported, and slurmctld starts with a clean history.
mark=$(wc -l <"$MINICLUSTER_DIR/log/slurmctld.log")
# Stop slurmctld (it saves its state on the way out), corrupt the file, start it again.
stop_ctld
echo '{"version": 1, "failures": {' >"$statefile"
"$repo/tools/minicluster" restart-ctld --dir "$MINICLUSTER_DIR" >"$WORK/restart2.log" 2>&1 ||
    fail "slurmctld did not start: $(tail -n 20 "$WORK/restart2.log")"
scontrol ping | grep -q UP || fail "slurmctld did not start with a corrupt state file"
for _ in $(seq 40); do
    tail -n +"$mark" "$MINICLUSTER_DIR/log/slurmctld.log" | grep -c 'ai_select_state.json: json=.*corrupt: starting clean' >/dev/null && break
    sleep 0.5
done
tail -n +"$mark" "$MINICLUSTER_DIR/log/slurmctld.log" | grep -c 'ai_select_state.json: json=.*corrupt: starting clean' >/dev/null ||
    fail "the corrupt state file was not reported: $(grep -c . "$statefile") line(s) now in it"

id3=$(sbatch --parsable -N2 -o /dev/null --wrap=true)
wait_job_gone "$id3"
expect_eq "a job after the clean start" COMPLETED "$(job_end_state "$id3")"
pass "failure history of n8 kept across a restart (day-weighted count $count); corrupt file reported"
