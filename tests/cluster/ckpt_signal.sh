#!/usr/bin/env bash
# Checkpoint requests and resumption, on the shared test cluster with `ai-recover watch`
# running beside it: a toy trainer job with --time=1 and
# --ai-checkpoint=DIR,signal=USR1@45,keep=2 (no periodic checkpoints of its own) gets
#   - a checkpoint request on demand (`ai-recover checkpoint JOBID`), and
#   - one 45 s before its time limit, i.e. 15 s after its start;
# keep=2 leaves the two newest complete checkpoints. After torn checkpoints with higher
# step numbers are planted (a directory without its COMPLETE marker, a file without its
# .complete marker) the job is requeued: it resumes from the newest complete checkpoint,
# never a torn one, and ends at the right count. ai-explain lists both requests.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/../trainer/cluster_helpers.bash"
t_begin=$SECONDS
CKPT_STATE=$STATE_DIR
watch_pid=""
cleanup() {
    [ -z "$watch_pid" ] || kill "$watch_pid" 2>/dev/null || true
    [ -z "${id:-}" ] || scancel "$id" 2>/dev/null || true
}
trap cleanup EXIT
"$RECOVER" --conf "$SLURM_CONF" --log "$WORK/ai-recover.log" watch --interval 1 \
    >/dev/null 2>&1 &
watch_pid=$!

# The command line: bad input named, exit 1; bad usage, exit 2.
rc=0
msg=$("$RECOVER" resume-path /etc/passwd 2>&1) || rc=$?
expect_eq "resume-path of a file: exit status" 1 "$rc"
expect_contains "resume-path of a file" "$msg" "DIR='/etc/passwd': expected a directory"
mkdir -p "$WORK/torn/step-5"
rc=0
msg=$("$RECOVER" resume-path "$WORK/torn" 2>&1) || rc=$?
expect_eq "resume-path with only a torn checkpoint: exit status" 1 "$rc"
expect_contains "resume-path with only a torn checkpoint" "$msg" "no complete checkpoint in $WORK/torn"
rc=0
msg=$("$RECOVER" prune "$WORK/torn" --keep 0 2>&1) || rc=$?
expect_eq "prune --keep 0: exit status" 2 "$rc"
expect_contains "prune --keep 0" "$msg" "--keep"

ck=$WORK/ckpt
out=$WORK/a.out
steps=400
id=$(submit_trainer "$out" "$ck" -N2 --no-kill --time=1 \
    --ai-checkpoint="$ck,signal=USR1@45,keep=2" -- --steps $steps --step-ms 100 --every 100000)
wait_until 60 "job $id running" output_has "$out" "step=10$"
start=$(date -d "$(job_field "$id" StartTime)" +%s)

"$RECOVER" --conf "$SLURM_CONF" --log "$WORK/ai-recover.log" checkpoint "$id" ||
    fail "ai-recover checkpoint $id failed: $(tail -n 3 "$WORK/ai-recover.log")"
t_demand=$(date +%s)
wait_until 10 "a checkpoint on demand" output_has "$out" "why=signal"
[ $((t_demand - start)) -lt 12 ] || fail "the on-demand request came too late to tell it from the time-limit one"
limit_checkpoint() {  # a checkpoint written on a signal 13 s or more after the start
    awk -v t=$((start + 13)) '$1 >= t && / why=signal/ { n++ } END { exit !n }' "$out"
}
wait_until 30 "a checkpoint before the time limit" limit_checkpoint
grep -cF 'time limit in' "$WORK/ai-recover.log" >/dev/null ||
    fail "a checkpoint 13 s after the start, but no time-limit request in $(cat "$WORK/ai-recover.log")"
# keep=2: the watch loop prunes within a look or two.
complete() { find "$ck" -maxdepth 2 -name COMPLETE -path '*/step-*' | sed 's|/COMPLETE$||' | sort; }
at_most_two() { [ "$(complete | wc -l)" -le 2 ]; }
newest=$(complete | tail -n1)
wait_until 10 "keep=2 leaving two complete checkpoints" at_most_two
expect_eq "newest complete checkpoint kept" "$newest" "$(complete | tail -n1)"

# Torn checkpoints, newer by step number than anything complete.
mkdir -p "$ck/step-99999990"
echo '{"step": 99999990, "digest": "torn"}' >"$ck/step-99999990/state.json"
echo torn >"$ck/step-99999991.pt"
scontrol requeue "$id"
t_requeue=$(date +%s.%N)
job_pending() { [ "$(job_field "$id" JobState)" = PENDING ]; }
wait_until 30 "job $id pending again" job_pending
# Slurm delays a requeued job by the credential lifetime (120 s); not what this tests.
scontrol update JobId="$id" StartTime=now+2
wait_until 60 "job $id running again" job_running_with_restarts "$id" 1 "$t_requeue"
wait_until 90 "job $id finished" job_gone "$id"

j=$(analyse "$out" "$t_requeue")
expect_trainer_finished "$j" "$steps"
expect_eq "runs" 2 "$(py "$j" 'len(d["runs"])')"
expect_eq "resumed from the newest complete checkpoint" \
    "$ck/step-$(printf %08d "$(py "$j" 'd["failures"][0]["newest_checkpoint_before"]')")" \
    "$(py "$j" 'd["runs"][1]["resume_from"]')"
expect_eq "torn checkpoints still there, never used" "2" \
    "$(ls -d "$ck/step-99999990" "$ck/step-99999991.pt" | wc -l)"

r=$(records "$id")
reasons=$(py "$r" '" | ".join(x["reason"] for x in d["restarts"] if x["event"] == "checkpoint_request")')
expect_contains "checkpoint requests" "$reasons" "on demand (signal 10)"
expect_contains "checkpoint requests" "$reasons" "time limit in"
left=$(py "$r" '[int(x["reason"].split()[3]) for x in d["restarts"] if "time limit" in x["reason"]][0]')
at=$(py "$r" '[x["at"] for x in d["restarts"] if "time limit" in x["reason"]][0]')
after=$(python3 -c "print(round($at - $start))")
[ "$left" -ge 40 ] && [ "$left" -le 46 ] && [ "$after" -ge 13 ] && [ "$after" -le 19 ] ||
    fail "time-limit request ${after}s after the start with ${left}s left; expected 15s and 45s"
text=$("$EXPLAIN" "$id" --state-dir "$STATE_DIR")
expect_contains "ai-explain" "$text" "checkpoint requested: on demand"
expect_contains "ai-explain" "$text" "checkpoint requested: time limit in $left s"

pass "on-demand request at +$((t_demand - start))s and time-limit request at +${after}s (${left}s left) checkpointed; keep=2 kept 2; requeued past 2 torn checkpoints to step $(py "$j" 'd["runs"][1]["resume_step"]'); final $steps verified ($((SECONDS - t_begin))s)"
