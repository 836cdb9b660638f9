#!/usr/bin/env bash
# What ai-elasticd does for gangs: members still pending when the gang's TIMEOUT passes
# are released (cancelled, the reason in their AdminComment); when a member fails, a gang
# with onfail=kill (the default) ends its other members, one with onfail=keep leaves them
# running.
source "$(dirname "$0")/lib.sh"
"$SLURM_AI_BIN_DIR/ai-elasticd" --slurm-conf "$SLURM_CONF" --state "$WORK/elasticd.json" \
    --interval 1 >"$WORK/elasticd.log" 2>&1 &
daemon=$!
cleanup() {
    kill "$daemon" 2>/dev/null || true
    wait "$daemon" 2>/dev/null || true
    cancel_named gang-late gang-kill gang-keep
}
trap cleanup EXIT

admin_comment() { scontrol show job "$1" | sed -n 's/.*AdminComment=\(.*\)/\1/p'; }
state_of() { scontrol show job "$1" | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p'; }
wait_state() {  # JOB STATE SECONDS
    for _ in $(seq $(($3 * 2))); do [ "$(state_of "$1")" = "$2" ] && return 0; sleep 0.5; done
    return 1
}

# Two of three members, TIMEOUT 6 s: released, with the reason.
late1=$(sbatch --parsable -J gang-late -N1 --ai-gang=late:3:6s -o /dev/null --wrap='sleep 60')
late2=$(sbatch --parsable -J gang-late -N1 --ai-gang=late:3:6s -o /dev/null --wrap='sleep 60')
# onfail=kill and onfail=keep: one member fails after 3 s, the other would run 2 minutes.
kill_bad=$(sbatch --parsable -J gang-kill -N1 --ai-gang=kill:2 -o /dev/null --wrap='sleep 3; exit 3')
kill_ok=$(sbatch --parsable -J gang-kill -N1 --ai-gang=kill:2 -o /dev/null --wrap='sleep 120')
keep_bad=$(sbatch --parsable -J gang-keep -N1 --ai-gang=keep:2:onfail=keep -o /dev/null --wrap='sleep 3; exit 3')
keep_ok=$(sbatch --parsable -J gang-keep -N1 --ai-gang=keep:2:onfail=keep -o /dev/null --wrap='sleep 120')

wait_state "$kill_ok" RUNNING 30 || fail "the kill gang did not start: $(state_of "$kill_ok")"
wait_state "$keep_ok" RUNNING 30 || fail "the keep gang did not start: $(state_of "$keep_ok")"
wait_state "$kill_bad" FAILED 20 || fail "the failing member ended $(state_of "$kill_bad")"
wait_state "$kill_ok" CANCELLED 20 ||
    fail "the other member of an onfail=kill gang is $(state_of "$kill_ok"); daemon log: $(tail -n 5 "$WORK/elasticd.log")"
expect_contains "why it ended" "$(admin_comment "$kill_ok")" "member $kill_bad ended FAILED"

for j in "$late1" "$late2"; do
    wait_state "$j" CANCELLED 30 || fail "member $j of a timed-out gang is $(state_of "$j")"
    expect_contains "reason of $j" "$(admin_comment "$j")" "gang late timed out after 6 s with 2 of 3"
done

wait_state "$keep_bad" FAILED 10 || fail "the failing keep member ended $(state_of "$keep_bad")"
sleep 4
expect_eq "the other member of an onfail=keep gang" RUNNING "$(state_of "$keep_ok")"
grep -c "gang kill" "$WORK/elasticd.log" >/dev/null || fail "nothing about gang kill in the daemon's log"
pass "timeout released 2 pending members; onfail=kill ended $kill_ok; onfail=keep kept $keep_ok"
