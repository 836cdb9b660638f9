#!/usr/bin/env bash
# The suite's figures reach a real Prometheus in the rig: the controller runs ai-metrics
# and Debian's Prometheus scraping it (docker/entrypoint.sh). With a 2-node job the engine
# placed running on two compute containers, Prometheus' query API returns the scrape as up,
# the job among those the engine started, one running job with a placement efficiency,
# spanning one or more leaves, and the free GPUs of the rig's leaf.
source "$(dirname "$0")/lib.sh"

# query PROMQL: the first result's value, "" while Prometheus has none.
query() {
    ctl python3 - "$1" <<'PY' 2>/dev/null || true
import json, sys, urllib.parse, urllib.request
url = "http://localhost:9090/api/v1/query?" + urllib.parse.urlencode({"query": sys.argv[1]})
result = json.load(urllib.request.urlopen(url, timeout=5))["data"]["result"]
print(result[0]["value"][1] if result else "")
PY
}
has_value() { [ -n "$(query "$1")" ]; }

wait_until 60 "Prometheus scraping ai-metrics" has_value 'up{job="slurm_ai"} == 1'
before=$(query 'slurm_ai_jobs_started_total{placed_by="engine"}')
job=$(ctl sbatch --parsable -N2 --gpus-per-node=2 --ai-comm=allreduce:bytes=1G -o /dev/null \
    --wrap='sleep 120') || fail "sbatch refused the job"
on_exit "ctl scancel $job"
wait_until 60 "job $job runs" job_running "$job"
wait_until 30 "Prometheus sees job $job running" has_value \
    'slurm_ai_placement_efficiency_ratio_count == 1'
after=$(query 'slurm_ai_jobs_started_total{placed_by="engine"}')
[ "${after%.*}" -ge $((${before%.*} + 1)) ] ||
    fail "engine-started jobs went from '$before' to '$after' with job $job"
eff=$(query slurm_ai_cluster_placement_efficiency_ratio)
python3 -c "import sys; sys.exit(0 if 0 < float('$eff') <= 1 else 1)" ||
    fail "cluster placement efficiency '$eff'"
expect_eq "jobs by leaf span" 1 "$(query 'slurm_ai_job_leaf_switches_count')"
free=$(query 'sum(slurm_ai_leaf_free_gpus)')
# 4 compute containers of 4 GPUs (c5, the spare, may have joined: 4 more), 4 held.
[[ ${free%.*} == 12 || ${free%.*} == 16 ]] || fail "free GPUs in the leaves: '$free'"
expect_eq "slurmctld answering ai-metrics" 1 "$(query slurm_ai_slurmctld_up)"
echo "job $job: Prometheus read $after engine-placed jobs, efficiency $eff, $free GPUs free"
