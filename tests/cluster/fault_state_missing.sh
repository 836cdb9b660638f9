#!/usr/bin/env bash
# The plugin's state file (ai_select_state.json) is gone when slurmctld starts, beside
# slurmctld's own state: the loss is reported in slurmctld.log, the plugin starts with an
# empty failure history, writes the file again at once, and places jobs as before.
source "$(dirname "$0")/lib.sh"
repo=$(cd "$(dirname "$0")/../.." && pwd)
statefile=$STATE_DIR/ai_select_state.json
ctld_log=$MINICLUSTER_DIR/log/slurmctld.log
[ -f "$statefile" ] || fail "no $statefile before the test: the plugin writes it at every start"

mark=$(wc -l <"$ctld_log")
stop_ctld
rm -f "$statefile"
"$repo/tools/minicluster" restart-ctld --dir "$MINICLUSTER_DIR" >"$WORK/restart.log" 2>&1 ||
    fail "slurmctld did not start without the state file: $(tail -n 20 "$WORK/restart.log")"
tail -n +"$((mark + 1))" "$ctld_log" | grep -c "ai_select_state.json: file='missing'.*starting with an empty failure history" >/dev/null ||
    fail "the missing state file was not reported: $(tail -n +"$((mark + 1))" "$ctld_log" | grep ai_cons_tres | head -n 5)"
[ -f "$statefile" ] || fail "the plugin did not write $statefile again at start-up"
expect_eq "failure history after the clean start" '{}' "$(json_get "$statefile" failures)"

id=$(sbatch --parsable -N2 --ai-comm=allreduce -o /dev/null --wrap=true)
wait_job_gone "$id"
expect_eq "end state of a job after the clean start" COMPLETED "$(job_end_state "$id")"
expect_eq "policy that placed it" engine "$(json_get "$STATE_DIR/ai_select/jobs/$id.json" decision.policy)"
pass "missing state file reported, rewritten, job $id placed by the engine"
