#!/usr/bin/env bash
# Automatic elasticity on a cluster of its own, started with `minicluster up --elasticd`,
# with ai-elasticd's priority rule (the goodput rule has cluster.elastic_goodput):
# an --ai-elastic=2:6 job starts with 6 nodes (MAX fits; ElasticStart=max), gives 2 back to let a job of
# higher priority start, grows back to 6 once that job ends, and a grow interrupted by a
# kill -9 of ai-elasticd is finished by the restarted daemon, leaving no expansion job.
source "$(dirname "$0")/lib.sh"
repo=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mktemp -d /tmp/slurm-ai-elastic-auto.XXXXXX)
rmdir "$dir"
trap '"$repo/tools/minicluster" down --dir "$dir" >/dev/null 2>&1 || true' EXIT
"$repo/tools/minicluster" up --dir "$dir" --nodes 8 --gpus 4 \
    --plugin-dir "$SLURM_AI_PLUGIN_DIR" --select select/ai_cons_tres \
    --spank "$SLURM_AI_PLUGIN_DIR/spank_ai.so" \
    --ai-conf "NodeTopology=$repo/tests/inputs/minicluster-node.xml" \
    --ai-conf ElasticInterval=1 --ai-conf ElasticGrowCooldown=2s --ai-conf ElasticGrowTimeout=10s \
    --ai-conf ElasticPolicy=priority --ai-conf ElasticStart=max \
    --elasticd "$SLURM_AI_BIN_DIR/ai-elasticd" >"$WORK/up.log" 2>&1 ||
    fail "cluster with ai-elasticd did not come up: $(tail -n 20 "$WORK/up.log")"
export SLURM_CONF=$dir/etc/slurm.conf
log=$dir/log/elasticd.log
# `status` also asks slurmctld, which may be slow to answer just after `up` on a loaded
# machine: a few tries before calling the daemon dead.
for try in 1 2 3 4 5 6; do
    "$repo/tools/minicluster" status --dir "$dir" 2>&1 | grep -c 'ai-elasticd .* alive' >/dev/null && break
    [ $try -lt 6 ] || fail "ai-elasticd does not run: $("$repo/tools/minicluster" status --dir "$dir" 2>&1 | tail -n 5); $(tail -n 5 "$log")"
    sleep 2
done

size() { squeue -h -j "$1" -t R -o %D; }  # empty unless it runs
wait_size() {  # JOB NODES SECONDS WHAT
    for _ in $(seq $(($3 * 2))); do [ "$(size "$1")" = "$2" ] && return 0; sleep 0.5; done
    fail "$4: job $1 has $(size "$1") node(s), expected $2; ai-elasticd: $(tail -n 5 "$log")"
}

job=$(sbatch --parsable --priority=1000 --gpus-per-node=4 --ai-elastic=2:6:signal=USR2 \
    -o /dev/null --wrap='trap "" USR2; sleep 600')
wait_size "$job" 6 20 "start with MAX when it fits"

# A job of higher priority needs 4 nodes; 2 are idle: the elastic job gives 2.
big=$(sbatch --parsable --priority=100000 -N4 --gpus-per-node=4 -o /dev/null --wrap='sleep 8')
for _ in $(seq 40); do [ "$(squeue -h -j "$big" -o %T)" = RUNNING ] && break; sleep 0.5; done
expect_eq "the job of higher priority" RUNNING "$(squeue -h -j "$big" -o %T)"
expect_eq "nodes the elastic job kept" 4 "$(size "$job")"
grep -c "job $job: released .* for job $big" "$log" >/dev/null ||
    fail "no shrink for $big in the log: $(tail -n 5 "$log")"

if ! slurm_grows_jobs; then  # ai-elasticd only shrinks here: the job keeps its 4 nodes
    wait_job_gone "$big" 30
    sleep 3  # looks of the daemon with 2 nodes idle
    expect_eq "nodes kept after the job of higher priority ended" 4 "$(size "$job")"
    grep -c "shrinks only" "$log" >/dev/null || fail "no 'shrinks only' in the log: $(tail -n 5 "$log")"
    pass "6 -> 4 for job $big (priority 100000); no grow back on Slurm $SLURM_SERIES"
    exit 0
fi
# It ends: the idle nodes go back to the elastic job.
wait_size "$job" 6 40 "grow back after the job of higher priority ended"

# A grow cut short: ai-elasticd dies right after it submitted the expansion job.
grows=$(grep -c "grows by" "$log")
"$SLURM_AI_BIN_DIR/ai-resize" shrink "$job" --by 2 >"$WORK/shrink.out" 2>&1 ||
    fail "manual shrink: $(cat "$WORK/shrink.out")"
for _ in $(seq 100); do [ "$(grep -c "grows by" "$log")" -gt "$grows" ] && break; sleep 0.1; done
[ "$(grep -c "grows by" "$log")" -gt "$grows" ] || fail "no new grow: $(tail -n 5 "$log")"
kill -KILL "$(cat "$dir/run/elasticd.pid")"
"$repo/tools/minicluster" restart-elasticd --dir "$dir" >"$WORK/restart.log" 2>&1 ||
    fail "restart-elasticd: $(cat "$WORK/restart.log")"
wait_size "$job" 6 30 "the grow finished by the restarted daemon"
for _ in $(seq 20); do [ -z "$(squeue -h -n "ai-expand:$job" -o %i)" ] && break; sleep 0.5; done
expect_eq "expansion jobs left" "" "$(squeue -h -n "ai-expand:$job" -o %i)"
view=$("$SLURM_AI_BIN_DIR/ai-resize" status "$job" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["view_file"])')
expect_eq "the job's view" 6 "$(json_get "$view" num_nodes)"
pass "6 -> 4 for job $big (priority 100000), back to 6, grow finished across a daemon kill"
