#!/usr/bin/env bash
# Scheduling throughput of the suite's select plugin against stock select/cons_tres,
# measured in one run: two mini-clusters of the same shape side by side, the same burst
# of held jobs released at once on each, and the time until every job has been placed
# (started). Prints jobs placed per second for both and their ratio. A benchmark, not a
# test: it takes minutes and prints figures.
#
#   bench/ai-bench/throughput.sh [NODES (default 64)] [JOBS (default 1000)]
#
# Needs a build (tools/build.sh). The jobs are a mix of 1- and 2-GPU single-node jobs and
# 2-node jobs with --ai-comm hints; each runs `true`, so what is measured is slurmctld
# placing them (and slurmd starting them), not the jobs.
set -euo pipefail
cd "$(dirname "$0")/../.."
nodes=${1:-64}
jobs=${2:-1000}
plugins=$(cd "${BUILD_DIR:-build}" && pwd)/plugins
[ -f "$plugins/select_ai_cons_tres.so" ] || { echo "throughput: build first (tools/build.sh)" >&2; exit 1; }
base=$(mktemp -d /tmp/slurm-ai-bench.XXXXXX)
chmod 755 "$base"   # munged wants every directory above its socket traversable
trap 'tools/minicluster down --dir "$base/suite" >/dev/null 2>&1 || true
      tools/minicluster down --dir "$base/stock" >/dev/null 2>&1 || true
      rm -rf "$base"' EXIT

common=(--nodes "$nodes" --gpus 4 --timeout 300 --extra-conf MaxJobCount=100000
        --extra-conf SchedulerParameters=default_queue_depth=1000,sched_min_interval=0)
tools/minicluster up --dir "$base/suite" "${common[@]}" --plugin-dir "$plugins" \
    --select select/ai_cons_tres --spank "$plugins/spank_ai.so" \
    --ai-conf NodeTopology="$PWD/tests/inputs/minicluster-node.xml" >/dev/null
tools/minicluster up --dir "$base/stock" "${common[@]}" --select select/cons_tres \
    --spank "$plugins/spank_ai.so" >/dev/null

run() {  # run NAME: submits the burst held, releases it, prints seconds until all started
    local conf=$base/$1/etc/slurm.conf i started t0 t1
    export SLURM_CONF=$conf
    for ((i = 0; i < jobs; i++)); do
        case $((i % 4)) in
            0) sbatch -Q --hold -o /dev/null --gpus=1 --wrap=true ;;
            1) sbatch -Q --hold -o /dev/null --gpus=2 --wrap=true ;;
            2) sbatch -Q --hold -o /dev/null -N2 --gpus-per-node=2 --ai-comm=allreduce:bytes=1G --wrap=true ;;
            3) sbatch -Q --hold -o /dev/null -N2 --ai-comm=pipeline:stages=2 --wrap=true ;;
        esac
    done >/dev/null
    t0=$(date +%s.%N)
    scontrol release "$(squeue -h -t PD -o %i | paste -sd,)"
    while :; do
        started=$( (grep -c . "$base/$1/log/jobcomp.log" 2>/dev/null || true); )
        [ "${started:-0}" -ge "$jobs" ] && break
        sleep 0.5
    done
    t1=$(date +%s.%N)
    echo "$t0 $t1" | awk '{printf "%.2f", $2 - $1}'
}

suite_s=$(run suite)
stock_s=$(run stock)
awk -v n="$nodes" -v j="$jobs" -v a="$suite_s" -v b="$stock_s" 'BEGIN {
    printf "%-22s %8s %10s %12s\n", "select plugin", "jobs", "seconds", "jobs/s"
    printf "%-22s %8d %10.2f %12.1f\n", "select/ai_cons_tres", j, a, j / a
    printf "%-22s %8d %10.2f %12.1f\n", "select/cons_tres", j, b, j / b
    printf "%d nodes; suite time / stock time = %.2fx (target: within 1.2x)\n", n, a / b
}'
