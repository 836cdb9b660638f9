#!/usr/bin/env bash
# Recovery from a node failure, the suite against stock Slurm, measured in one run: two
# mini-clusters side by side run the same 2-node toy trainer (tests/trainer/toy_trainer.py:
# 100 ms per step, a checkpoint every 50 steps) and lose the same node of it, N rounds
# each, the failure landing at a different point between two checkpoints each round.
#   suite: select/ai_cons_tres + spank_ai.so + ai-recover (PERM node-down trigger and
#          watch, which takes the nodes' leases) + an ai-lease agent per node; the job
#          runs with --no-kill --ai-checkpoint=DIR
#   stock: select/cons_tres, JobRequeue=1; the job is requeued by Slurm and resumes from
#          its own newest checkpoint
# Both clusters run Slurm's default failure detection (SlurmdTimeout=300, MessageTimeout=10;
# SLURMD_TIMEOUT=S sets another): stock Slurm waits for it, the suite's lease finds the
# failure in seconds (docs/checkpoint.md, "Leases"). The node dies with its lease agent
# (slurmd, its tasks and the agent killed). For each round it prints the seconds from the
# failure to the node marked DOWN, to the job RUNNING again, and to the trainer resuming,
# and the committed steps lost; then the means and their ratio, and last one line:
#   recovery: suite S s, stock T s, steps lost L vs M (SlurmdTimeout=300, N rounds)
# with the mean seconds from the failure to the job running again and the committed steps
# lost in all rounds. A benchmark, not a test: at the default timeout a stock round takes
# five minutes and more, so 5 rounds take about half an hour (the clusters run side by
# side).
#
#   bench/ai-bench/recovery.sh [ROUNDS (default 5)]
#
# Needs a build (tools/build.sh; BUILD_DIR picks another build directory).
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-5}
slurmd_timeout=${SLURMD_TIMEOUT:-300}
[[ $slurmd_timeout =~ ^[1-9][0-9]*$ ]] ||
    { echo "recovery: SLURMD_TIMEOUT must be a positive integer" >&2; exit 2; }
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "recovery: ROUNDS must be a positive integer" >&2; exit 2; }
build=$(cd "${BUILD_DIR:-build}" && pwd)
plugins=$build/plugins
recover=$build/bin/ai-recover
lease=$build/bin/ai-lease
[ -f "$plugins/select_ai_cons_tres.so" ] && [ -x "$recover" ] && [ -x "$lease" ] ||
    { echo "recovery: build first (tools/build.sh)" >&2; exit 1; }
trainer=$PWD/tests/trainer/toy_trainer.py
base=$(mktemp -d /tmp/slurm-ai-bench-rec.XXXXXX)
chmod 755 "$base"
trap 'for c in suite stock; do
          for n in $(seq 1 8); do tools/minicluster kill-node n$n --dir "$base/$c" >/dev/null 2>&1 || true; done
          tools/minicluster down --dir "$base/$c" >/dev/null 2>&1 || true
      done
      rm -rf "$base"' EXIT

detection=(--nodes 8 --extra-conf "SlurmdTimeout=$slurmd_timeout" --extra-conf MessageTimeout=10)
up() {  # up NAME OPTIONS...: quiet unless it fails
    local name=$1
    shift
    tools/minicluster up --dir "$base/$name" "${detection[@]}" "$@" >"$base/$name.up" 2>&1 ||
        { cat "$base/$name.up" >&2; exit 1; }
}
up suite --plugin-dir "$plugins" --select select/ai_cons_tres --spank "$plugins/spank_ai.so" \
    --ai-conf NodeTopology="$PWD/tests/inputs/minicluster-node.xml" \
    --recover "$recover" --recover-arg --grace --recover-arg 10 --lease "$lease"
up stock --select select/cons_tres

# running_again ID SINCE: restart 1 of the job runs, started at or after SINCE (one look at
# all three fields: Slurm counts the restart while the old run still reads RUNNING).
running_again() {
    local line
    line=$(scontrol -o show job "$1" | tr ' ' '\n')
    [ "$(sed -n 's/^JobState=//p' <<<"$line")" = RUNNING ] &&
        [ "$(sed -n 's/^Restarts=//p' <<<"$line")" = 1 ] &&
        [ "$(date -d "$(sed -n 's/^StartTime=//p' <<<"$line")" +%s)" -ge "$2" ]
}

# round CLUSTER N: one job, one failure; appends "detect running resumed lost" to CLUSTER.txt
round() {
    local c=$1 k=$2 dir out id a2 batch n t_fail t_run stamp t_down resumed lost
    local -a extra=()
    export SLURM_CONF=$base/$c/etc/slurm.conf
    dir=$base/$c/ckpt-$k
    out=$base/$c/out-$k
    [ "$c" = suite ] && extra=(--no-kill --ai-checkpoint="$dir")
    id=$(sbatch --parsable --exclusive -N2 --open-mode=append -o "$out" "${extra[@]}" \
        tests/trainer/toy_job.sh "$trainer" --steps 100000 --step-ms 100 --every 50 \
        --dir "$dir" --resolver "$recover resume-path")
    until grep -c "checkpoint step=50 " "$out" >/dev/null 2>&1; do sleep 0.2; done
    # Rounds fail the node 1.5 s, 2.5 s, ... after that checkpoint (of a 5 s interval).
    sleep "$(awk -v k="$k" 'BEGIN { print 1.5 + (k - 1) % 4 }')"
    batch=$(squeue -h -j "$id" -o %B)
    for n in $(scontrol show hostnames "$(squeue -h -j "$id" -o %N)"); do
        [ "$n" = "$batch" ] || a2=$n
    done
    t_fail=$(date +%s.%N)
    tools/minicluster kill-node "$a2" --dir "$base/$c" >/dev/null 2>&1
    until running_again "$id" "${t_fail%.*}"; do sleep 0.2; done
    t_run=$(date +%s.%N)
    stamp=$(scontrol -o show node "$a2" | sed -n 's/.*Reason=.*@\([0-9T:-]*\)\].*/\1/p')
    t_down=$(date -d "$stamp" +%s)
    until [ "$(grep -c ' resume ' "$out")" -ge 4 ]; do sleep 0.2; done
    scancel "$id"
    python3 tests/trainer/trainer_log.py "$out" >"$out.json"
    resumed=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["runs"][1]["start"])' "$out.json")
    lost=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["runs"][1]["lost"])' "$out.json")
    awk -v f="$t_fail" -v d="$t_down" -v r="$t_run" -v s="$resumed" -v l="$lost" \
        'BEGIN { printf "%.1f %.1f %.1f %d\n", d - f, r - f, s - f, l }' >>"$base/$c.txt"
    # The node comes back for the next round.
    tools/minicluster start-node "$a2" --dir "$base/$c" >/dev/null 2>&1
    until [ "$(sinfo -h -n "$a2" -o %t)" = idle ]; do
        scontrol update NodeName="$a2" State=RESUME >/dev/null 2>&1 || true  # set DOWN by hand
        sleep 0.5
    done
    while [ -n "$(squeue -h -j "$id" -o %i 2>/dev/null)" ]; do sleep 0.5; done
}

for c in suite stock; do
    (for ((k = 1; k <= rounds; k++)); do round "$c" "$k"; done) &
done
wait

printf 'recovery from a node failure: 2-node toy trainer, 100 ms/step, checkpoint every 50 steps\n'
printf '%-34s %5s %9s %14s %14s %11s\n' setup round "DOWN_s" "RUNNING_s" "resumed_s" "steps_lost"
for c in suite stock; do
    label="suite (ai-recover, --no-kill)"
    [ "$c" = stock ] && label="stock Slurm (JobRequeue=1)"
    awk -v l="$label" '{ printf "%-34s %5d %9.1f %14.1f %14.1f %11d\n", l, NR, $1, $2, $3, $4 }' "$base/$c.txt"
done
paste "$base/suite.txt" "$base/stock.txt" | awk -v t="$slurmd_timeout" '
    { d1 += $1; r1 += $2; s1 += $3; l1 += $4; d2 += $5; r2 += $6; s2 += $7; l2 += $8; n++ }
    END {
        printf "mean over %d rounds: failure -> running again: suite %.1f s, stock %.1f s (%.2fx); ", n, r1 / n, r2 / n, r1 / r2
        printf "-> trainer resumed: suite %.1f s, stock %.1f s (%.2fx)\n", s1 / n, s2 / n, s1 / s2
        printf "steps lost per failure: suite %.1f, stock %.1f; failure -> DOWN: suite %.1f s (its lease), stock %.1f s (SlurmdTimeout)\n", l1 / n, l2 / n, d1 / n, d2 / n
        printf "recovery: suite %.1f s, stock %.1f s, steps lost %d vs %d (SlurmdTimeout=%d, %d rounds)\n", r1 / n, r2 / n, l1, l2, t, n
    }'
