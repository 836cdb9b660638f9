#!/usr/bin/env bash
# ai-metrics against the shared mini-cluster, checked by the tools sites use: with a
# 2-node job the engine placed running and a job pending behind it,
#   - /metrics passes `promtool check metrics` (Debian's prometheus), in both formats,
#     and counts the job: started by the engine, its placement efficiency, its spans;
#   - a real Prometheus scrapes it and its query API returns those figures;
#   - headless Chromium loads /map from the daemon and the rendered DOM has every node,
#     the job's 4 GPUs marked with its id, and the pending job in the side list; the
#     screenshot is kept in the build tree (test-artifacts/metrics_map.png).
# (build.grafana_dashboard checks the dashboard's queries against the same daemon.)
source "$(dirname "$0")/lib.sh"

repo=$(cd "$(dirname "$0")/../.." && pwd)
for tool in curl promtool prometheus chromium; do
    command -v "$tool" >/dev/null || fail "$tool not found (tools/setup.sh installs it)"
done
t0=$SECONDS
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
port=$(free_port)
url=http://127.0.0.1:$port
"$SLURM_AI_BIN_DIR/ai-metrics" --listen "127.0.0.1:$port" --refresh 0 >"$WORK/metrics.log" 2>&1 &
exporter=$!
prom=
cleanup() {
    kill "$exporter" ${prom:+"$prom"} 2>/dev/null || true
    scancel --name=ai-metrics-test 2>/dev/null || true
}
trap cleanup EXIT
for _ in $(seq 50); do curl -fsS --max-time 2 "$url/healthz" >/dev/null 2>&1 && break; sleep 0.2; done
expect_eq "GET /healthz" ok "$(curl -fsS --max-time 5 "$url/healthz")"
# What is not a scrape gets an HTTP error, and the daemon goes on.
code() { curl -s -o /dev/null -w '%{http_code}' --max-time 10 "$@"; }
expect_eq "GET /nothing" 404 "$(code "$url/nothing")"
expect_eq "POST /metrics" 405 "$(code -X POST "$url/metrics")"
expect_eq "a request that is not HTTP" "HTTP/1.1 400" "$(python3 -c "
import socket; s = socket.create_connection(('127.0.0.1', $port), timeout=10)
s.sendall(b'garbage\r\n\r\n'); print(s.recv(64).decode()[:12])")"
expect_eq "GET /healthz after them" ok "$(curl -fsS --max-time 5 "$url/healthz")"

# --- a job the engine places, and one that waits behind it ---------------------------
nodes=$(sinfo -h -N -o %N | sort -u | wc -l)
id=$(sbatch --parsable -J ai-metrics-test -N2 --gpus-per-node=2 \
    --ai-comm=allreduce:bytes=1G -o /dev/null --wrap='sleep 120')
for _ in $(seq 30); do [ "$(squeue -h -j "$id" -o %T)" = RUNNING ] && break; sleep 1; done
expect_eq "job $id" RUNNING "$(squeue -h -j "$id" -o %T)"
held=$(sbatch --parsable -J ai-metrics-test -N"$nodes" --gpus-per-node=3 -o /dev/null \
    --wrap='sleep 1')
for _ in $(seq 20); do [ "$(squeue -h -j "$held" -o %r)" = Resources ] && break; sleep 0.5; done
expect_eq "job $held pending" PENDING "$(squeue -h -j "$held" -o %T)"

# --- the exposition, checked by promtool ----------------------------------------------
curl -fsS --max-time 10 "$url/metrics" >"$WORK/metrics.txt" || fail "GET /metrics failed"
promtool check metrics <"$WORK/metrics.txt" >"$WORK/promtool.log" 2>&1 ||
    fail "promtool check metrics: $(cat "$WORK/promtool.log")"
curl -fsS --max-time 10 -D "$WORK/om.head" -H 'Accept: application/openmetrics-text' \
    "$url/metrics" >"$WORK/metrics.om" || fail "GET /metrics (OpenMetrics) failed"
expect_contains "OpenMetrics Content-Type" "$(cat "$WORK/om.head")" "application/openmetrics-text"
expect_eq "OpenMetrics ends with" "# EOF" "$(tail -n1 "$WORK/metrics.om")"
value() { awk -v k="$1" '$1 == k {print $2}' "$WORK/metrics.txt"; }
expect_eq "slurm_ai_slurmctld_up" 1 "$(value slurm_ai_slurmctld_up)"
engine=$(value 'slurm_ai_jobs_started_total{placed_by="engine"}')
[ "${engine%.*}" -ge 1 ] 2>/dev/null || fail "jobs started by the engine: '$engine'"
expect_eq "running jobs with an efficiency" 1 "$(value slurm_ai_placement_efficiency_ratio_count)"
expect_eq "running jobs by leaf span" 1 "$(value slurm_ai_job_leaf_switches_count)"
eff=$(value slurm_ai_cluster_placement_efficiency_ratio)
python3 -c "import sys; e=float('$eff'); sys.exit(0 if 0 < e <= 1 else 1)" ||
    fail "cluster placement efficiency '$eff' is not in (0, 1]"
grep -c '^slurm_ai_leaf_free_gpus{leaf=' "$WORK/metrics.txt" >/dev/null ||
    fail "no free GPUs per leaf: $(grep leaf "$WORK/metrics.txt")"

# --- a real Prometheus scrapes it -------------------------------------------------------
pport=$(free_port)
cat >"$WORK/prometheus.yml" <<YAML
global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: slurm_ai
    static_configs: [{targets: ['127.0.0.1:$port']}]
YAML
prometheus --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/prom" \
    --web.listen-address="127.0.0.1:$pport" >"$WORK/prometheus.log" 2>&1 &
prom=$!
query() {  # query PROMQL: the first result's value, or "" while there is none
    curl -fsS --max-time 5 -G "http://127.0.0.1:$pport/api/v1/query" --data-urlencode "query=$1" \
        2>/dev/null | python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "")' 2>/dev/null || true
}
got=
for _ in $(seq 60); do
    got=$(query 'slurm_ai_jobs_started_total{placed_by="engine"}')
    [ -n "$got" ] && break
    sleep 0.5
done
[ -n "$got" ] || fail "Prometheus never had slurm_ai_jobs_started_total: $(tail -n 5 "$WORK/prometheus.log")"
expect_eq "Prometheus: jobs started by the engine" "${engine%.*}" "$got"
expect_eq "Prometheus: up{job=slurm_ai}" 1 "$(query 'up{job="slurm_ai"}')"
expect_eq "Prometheus: running jobs with an efficiency" 1 \
    "$(query 'slurm_ai_placement_efficiency_ratio_count')"

# --- the map, in a real browser ---------------------------------------------------------
browse() {  # browse ARGS...: headless Chromium on /map
    timeout 90 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
        --user-data-dir="$WORK/chromium" "$@" "$url/map" 2>>"$WORK/chromium.log"
}
browse --dump-dom >"$WORK/map.dom" || fail "chromium could not load $url/map: $(tail -n 5 "$WORK/chromium.log")"
dom_count() {  # dom_count CSS: elements of the rendered DOM that match CSS
    python3 - "$WORK/map.dom" "$1" <<'PY'
import sys, html.parser
path, css = sys.argv[1], sys.argv[2]
tag, _, rest = css.partition(".")
cls, _, attr = rest.partition("[")
want = dict(a.split("=", 1) for a in attr.rstrip("]").split("][") if a) if attr else {}
class P(html.parser.HTMLParser):
    n = 0
    def handle_starttag(self, t, attrs):
        a = dict(attrs)
        if t == tag and cls in (a.get("class") or "").split() and all(a.get(k) == v.strip('"') for k, v in want.items()):
            P.n += 1
P().feed(open(path).read())
print(P.n)
PY
}
expect_eq "hosts drawn" "$nodes" "$(dom_count 'g.host')"
expect_eq "GPUs of job $id marked" 4 "$(dom_count "rect.gpu[data-job=\"$id\"]")"
expect_eq "job $held in the pending list" 1 "$(dom_count "li.pending[data-job=\"$held\"]")"
expect_eq "job $id in the running list" 1 "$(dom_count "li.running[data-job=\"$id\"]")"
shots=$SLURM_AI_BIN_DIR/../test-artifacts
mkdir -p "$shots"
browse --window-size=1400,1000 --screenshot="$shots/metrics_map.png" >/dev/null ||
    fail "chromium could not take a screenshot: $(tail -n 5 "$WORK/chromium.log")"
[ -s "$shots/metrics_map.png" ] || fail "no screenshot in $shots/metrics_map.png"

scancel "$id" "$held"
pass "ai-metrics: promtool passes, Prometheus read ${got} engine-placed jobs, Chromium drew $nodes hosts with job $id on 4 GPUs and job $held pending ($((SECONDS - t0))s)"
