#!/usr/bin/env bash
# The controller container restarts (docker restart: slurmctld saves its state on SIGTERM
# into the ctld-state volume) while jobs of every kind are in the queue: a running job, a
# pending one (waiting on a dependency), an elastic job on two nodes and a gang of two.
# After the restart each is still there, in the same state, on the same nodes, the
# elastic job's view is the same, the running jobs' processes never stopped, and the
# restarted controller runs new jobs.
source "$(dirname "$0")/lib.sh"
jobs=()
on_exit '[ ${#jobs[@]} = 0 ] || ctl scancel "${jobs[@]}" >/dev/null 2>&1'

# Each job's script counts seconds into a file of /shared: the count goes on across the
# restart only if the job's processes do.
ticker() { echo "i=0; while :; do i=\$((i+1)); echo \$i >$WORK/\$SLURM_JOB_ID.ticks; sleep 1; done"; }
submit() { ctl sbatch --parsable -o /dev/null "$@" || fail "sbatch $* refused"; }
running=$(submit -J r-running -N1 --gpus=1 --wrap "$(ticker)")
jobs+=("$running")
pending=$(submit -J r-pending -N1 --gpus=1 --dependency=afterok:"$running" --wrap 'true')
jobs+=("$pending")
elastic=$(submit -J r-elastic --ai-elastic=1:2:signal=USR2 --gpus-per-node=1 \
    --wrap "trap '' USR2; $(ticker)")
jobs+=("$elastic")
for m in 1 2; do
    g=$(submit -J r-gang$m -N1 --gpus=1 --ai-gang=restart:2:5m --wrap "$(ticker)")
    jobs+=("$g")
done
gang=("${jobs[@]:3:2}")
for j in "$running" "$elastic" "${gang[@]}"; do
    wait_until 60 "job $j runs" job_running "$j"
done

snapshot() {  # one line per job: id state nodes
    for j in "${jobs[@]}"; do echo "$j $(job_state "$j") $(job_field "$j" NodeList)"; done
}
view() { cat "$SLURM_AI_SHARED_DIR/ai_elastic/views/$elastic/view.json" 2>/dev/null; }
has_view() { [ -n "$(view)" ]; }
wait_until 30 "the elastic job's view" has_view
# ai-elasticd grows the elastic job onto idle nodes (ElasticInterval=1, ElasticGrowCooldown=2s):
# the queue is compared once nothing has changed for 5 s, or a grow that comes late (on a
# loaded host) would read as a change made by the restart.
settled() {
    local a b
    a="$(snapshot) $(view)"; sleep 5; b="$(snapshot) $(view)"
    [ "$a" = "$b" ]
}
wait_until 60 "the queue settles (unchanged for 5 s)" settled
ticks() { cat "$HOST_DIR/$1.ticks" 2>/dev/null || echo 0; }
before=$(snapshot)
view_before=$(/usr/bin/python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["generation"], d["nodes"])' <<<"$(view)")
ticks_before=$(ticks "$running")
grep -q " PENDING " <<<"$(grep "^$pending " <<<"$before")" || fail "job $pending is not pending: $before"

t0=$SECONDS
dc restart controller >/dev/null 2>&1 || fail "docker-compose restart controller failed"
ctld_up() { ctl scontrol ping >/dev/null 2>&1; }
wait_until 90 "the restarted slurmctld answers" ctld_up
echo "controller back in $((SECONDS - t0)) s"

after=$(snapshot)
[ "$after" = "$before" ] || fail "the queue changed across the restart:
before:
$before
after:
$after"
view_after=$(/usr/bin/python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["generation"], d["nodes"])' <<<"$(view)")
[ "$view_after" = "$view_before" ] || fail "the elastic view changed: '$view_before' -> '$view_after'"
ticks_now=$(ticks "$running")
sleep 3
[ "$(ticks "$running")" -gt "$ticks_now" ] && [ "$ticks_now" -gt "$ticks_before" ] ||
    fail "job $running's processes stopped across the restart (ticks $ticks_before, $ticks_now, $(ticks "$running"))"

# The restarted controller schedules: a new job runs; ending the running job releases
# the pending one, which completes.
out=$(ctl srun -N1 --gpus=1 hostname) || fail "srun after the restart failed"
[[ $out =~ ^c[1-4]$ ]] || fail "srun after the restart printed '$out'"
ctl scancel "$running"
never_satisfied() { [ "$(job_field "$pending" Reason)" = DependencyNeverSatisfied ]; }
wait_until 60 "the pending job's dependency is never satisfied" never_satisfied
echo "kept across the restart:"
echo "$before"
