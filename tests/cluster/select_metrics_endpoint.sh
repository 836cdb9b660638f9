#!/usr/bin/env bash
# Slurm 25.11+'s OpenMetrics endpoint (MetricsType=metrics/openmetrics, HTTP GET on
# slurmctld's own port) answers while the suite's select plugin runs, and counts what the
# plugin placed: on a 4-node cluster of its own, with a hinted 2-node job running that the
# engine placed, /metrics lists the endpoints, /metrics/jobs has it running, and
# 2 nodes allocated to jobs, and /metrics/nodes has the 4 nodes. Skipped (77) before 25.11.
source "$(dirname "$0")/lib.sh"

repo=$(cd "$(dirname "$0")/../.." && pwd)
skip_before 25 11 'metrics/openmetrics'
command -v curl >/dev/null || fail "curl not found (tools/setup.sh installs it)"
t0=$SECONDS
dir=$(mktemp -d /tmp/slurm-ai-metrics.XXXXXX)
rmdir "$dir"
trap '"$repo/tools/minicluster" down --dir "$dir" >/dev/null 2>&1 || true' EXIT
"$repo/tools/minicluster" up --dir "$dir" --nodes 4 --plugin-dir "$SLURM_AI_PLUGIN_DIR" \
    --select select/ai_cons_tres --spank "$SLURM_AI_PLUGIN_DIR/spank_ai.so" \
    --extra-conf DebugFlags=SelectType --extra-conf MetricsType=metrics/openmetrics \
    --ai-conf "NodeTopology=$repo/tests/inputs/minicluster-node.xml" >"$WORK/up.log" 2>&1 ||
    fail "the metrics cluster did not come up: $(tail -n 20 "$WORK/up.log")"
export SLURM_CONF=$dir/etc/slurm.conf
port=$(sed -n 's/^port_base=//p' "$dir/cluster.info")
url=http://127.0.0.1:$port

id=$(sbatch --parsable -N2 --gpus-per-node=2 --ai-comm=allreduce:bytes=1G -o /dev/null \
    --wrap='sleep 60')
for _ in $(seq 30); do [ "$(squeue -h -j "$id" -o %T)" = RUNNING ] && break; sleep 1; done
expect_eq "job $id" RUNNING "$(squeue -h -j "$id" -o %T)"
grep -c "JobId=$id.* ai: engine placed" "$dir/log/slurmctld.log" >/dev/null ||
    fail "the engine did not place job $id (slurmctld.log)"

get() {  # get PATH: the endpoint's body; fails on an HTTP error
    curl -fsS --max-time 10 "$url$1" 2>"$WORK/curl.err" ||
        fail "GET $url$1 failed: $(cat "$WORK/curl.err")"
}
value() { awk -v k="$1" '$1 == k {print $2}' <<<"$2"; }
expect_contains "GET /metrics" "$(get /metrics)" "/metrics/jobs"
jobs=$(get /metrics/jobs)
expect_eq "slurm_jobs_running" 1 "$(value slurm_jobs_running "$jobs")"
expect_eq "slurm_jobs_nodes_alloc" 2 "$(value slurm_jobs_nodes_alloc "$jobs")"
nodes=$(get /metrics/nodes)
expect_eq "slurm_nodes" 4 "$(value slurm_nodes "$nodes")"
scheduler=$(get /metrics/scheduler)
[ -n "$scheduler" ] || fail "GET /metrics/scheduler answered nothing"
scancel "$id"
pass "slurmctld $SLURM_SERIES's /metrics answered beside the suite's plugin: job $id running, 2 nodes allocated, 4 in all ($((SECONDS - t0))s)"
