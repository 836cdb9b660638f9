#!/usr/bin/env bash
# No false alarms from the suite's leases (docs/checkpoint.md, "Leases"): a mini-cluster
# with an ai-lease agent per node and Slurm's default SlurmdTimeout=300 runs two 2-node
# toy trainers (--no-kill, --ai-checkpoint, a checkpoint every 5 s) for MINUTES under
# everything that slows a node down without killing it, all at once and for the whole
# window:
#   CPU         two busy loops per core
#   memory      60% of the memory available, its pages rewritten without pause
#   file system a writer of 256 MiB files, each fsync'ed, in the checkpoints' folder, so
#               that every checkpoint waits behind it (a slow shared file system)
# and, every 2.5 minutes in turn, slurmctld restarted (its state kept) and ai-recover's
# watch restarted. Every 10 s it looks at the nodes and jobs. A benchmark, not a test:
# it takes MINUTES plus one. Expected: 0 recoveries started, 0 nodes set DOWN, 0 jobs
# disturbed (restarted, or not running at the end), the trainers still advancing. Lease
# lapses may happen under such load; each must end with slurmd answering ai-recover's
# probe ("no action"). The last line:
#   lease-quiet: M min, lapses L (slurmd answered each: A), recoveries R, nodes DOWN K, jobs disturbed D
#
#   bench/ai-bench/lease-quiet.sh [MINUTES (default 10)]
#
# Needs a build (tools/build.sh; BUILD_DIR picks another build directory); as root.
set -euo pipefail
cd "$(dirname "$0")/../.."
minutes=${1:-10}
[[ $minutes =~ ^[1-9][0-9]*$ ]] || { echo "lease-quiet: MINUTES must be a positive integer" >&2; exit 2; }
build=$(cd "${BUILD_DIR:-build}" && pwd)
plugins=$build/plugins
recover=$build/bin/ai-recover
lease=$build/bin/ai-lease
[ -f "$plugins/select_ai_cons_tres.so" ] && [ -x "$recover" ] && [ -x "$lease" ] ||
    { echo "lease-quiet: build first (tools/build.sh)" >&2; exit 1; }
base=$(mktemp -d /tmp/slurm-ai-bench-quiet.XXXXXX)
chmod 755 "$base"
loads=()
trap 'kill "${loads[@]}" 2>/dev/null || true
      tools/minicluster down --dir "$base/c" >/dev/null 2>&1 || true
      rm -rf "$base"' EXIT

tools/minicluster up --dir "$base/c" --nodes 4 --plugin-dir "$plugins" \
    --select select/ai_cons_tres --spank "$plugins/spank_ai.so" \
    --spank-arg "lease_program=$lease" \
    --ai-conf NodeTopology="$PWD/tests/inputs/minicluster-node.xml" \
    --recover "$recover" --recover-arg --grace --recover-arg 10 --lease "$lease" \
    --extra-conf SlurmdTimeout=300 >"$base/up.log" 2>&1 || { cat "$base/up.log" >&2; exit 1; }
export SLURM_CONF=$base/c/etc/slurm.conf
log=$base/c/state/ai_recover/ai-recover.log
ids=()
for k in 1 2; do
    ids+=("$(sbatch --parsable --exclusive -N2 --no-kill --ai-checkpoint="$base/ckpt-$k" \
        -o "$base/out-$k" tests/trainer/toy_job.sh "$PWD/tests/trainer/toy_trainer.py" \
        --steps 10000000 --step-ms 100 --every 50 --dir "$base/ckpt-$k" \
        --resolver "$recover resume-path")")
done
for k in 1 2; do
    until grep -c "checkpoint step=50 " "$base/out-$k" >/dev/null 2>&1; do sleep 0.5; done
done
echo "lease-quiet: jobs ${ids[*]} running on 4 nodes; loads on for $minutes min"

for _ in $(seq $(($(nproc) * 2))); do
    sh -c 'while :; do :; done' &
    loads+=($!)
done
avail_kb=$(sed -n 's/^MemAvailable: *\([0-9]*\) kB/\1/p' /proc/meminfo)
python3 -c '
import sys
n = int(sys.argv[1]) * 1024 * 6 // 10
b = bytearray(n)
while True:
    for i in range(0, n, 4096):
        b[i] = (b[i] + 1) & 255
' "$avail_kb" &
loads+=($!)
sh -c 'while :; do dd if=/dev/zero of="$0/io-load" bs=1M count=256 conv=fsync 2>/dev/null; done' "$base" &
loads+=($!)

restart_recover() {
    kill -TERM "$(cat "$base/c/run/ai-recover.pid")"
    sleep 2
    setsid "$recover" --conf "$SLURM_CONF" --grace 10 watch --interval 2 </dev/null \
        >>"$base/c/log/ai-recover.out" 2>&1 &
    echo $! >"$base/c/run/ai-recover.pid"
}
start=$SECONDS
next_event=150
event=0
printf '%6s %10s %14s %8s %10s\n' minute nodes_down lapses restarts steps
while [ $((SECONDS - start)) -lt $((minutes * 60)) ]; do
    sleep 10
    if [ $((SECONDS - start)) -ge $next_event ]; then
        event=$((event + 1))
        if [ $((event % 2)) = 1 ]; then
            tools/minicluster restart-ctld --dir "$base/c" >/dev/null 2>&1
            echo "  $(((SECONDS - start) / 60)) min: slurmctld restarted"
        else
            restart_recover
            echo "  $(((SECONDS - start) / 60)) min: ai-recover's watch restarted"
        fi
        next_event=$((next_event + 150))
    fi
    restarts=0
    for id in "${ids[@]}"; do
        r=$(scontrol -o show job "$id" 2>/dev/null | tr ' ' '\n' | sed -n 's/^Restarts=//p')
        restarts=$((restarts + ${r:-0}))
    done
    steps=$(cat "$base"/out-* | grep -oE ' step=[0-9]+$' | tail -n 1 | cut -d= -f2)
    printf '%6.1f %10s %14s %8s %10s\n' "$(awk -v s=$((SECONDS - start)) 'BEGIN { print s / 60 }')" \
        "$(sinfo -h -N -t down -o %N | sort -u | wc -l)" "$(grep -c "lease lapsed" "$log" || true)" \
        "$restarts" "${steps:-?}"
done
kill "${loads[@]}" 2>/dev/null || true
loads=()

lapses=$(grep -c "'s lease lapsed" "$log" || true)
answered=$(grep -c "its slurmd answers: no action" "$log" || true)
recoveries=$(grep -c "set DOWN\|: requeue: \|: shrink: " "$log" || true)
down=$(sinfo -h -N -t down -o %N | sort -u | wc -l)
disturbed=0
for id in "${ids[@]}"; do
    line=$(scontrol -o show job "$id" | tr ' ' '\n')
    [ "$(sed -n 's/^JobState=//p' <<<"$line")" = RUNNING ] &&
        [ "$(sed -n 's/^Restarts=//p' <<<"$line")" = 0 ] || disturbed=$((disturbed + 1))
done
echo "lease-quiet: $minutes min, lapses $lapses (slurmd answered each: $answered), recoveries $recoveries, nodes DOWN $down, jobs disturbed $disturbed"
