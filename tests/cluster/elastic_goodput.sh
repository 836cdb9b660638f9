#!/usr/bin/env bash
# ai-elasticd's goodput rule on a cluster of its own (8 nodes of 4 GPUs): two elastic
# jobs of 2 nodes, --ai-elastic=2:4, of different scalability, and 4 nodes freed at once.
#   A (higher priority) all-reduces 8 GiB per step against 0.5 s of computation: a node
#     more adds little (its communication grows as fast as its computation shrinks);
#   B all-reduces 16 MiB against 60 s of computation: a node more adds nearly a node's
#     worth.
# Expected, as the rule says: B grows to its MAX of 4 nodes, A keeps 2, 2 nodes stay idle;
# the daemon's log gives each job's gain per GPU (A's under ElasticMinGain=0.5, B's
# over). Then the same look under ElasticPolicy=priority: A, of higher priority, grows.
# First, with every node idle, the select plugin's start (ElasticStart=goodput, the
# default): a job like A, --ai-elastic=2:4, starts on 2 nodes and one like B on 4; the
# job's record keeps the size CommShare is measured at (elastic_start_max).
source "$(dirname "$0")/lib.sh"
repo=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mktemp -d /tmp/slurm-ai-goodput.XXXXXX)
rmdir "$dir"
daemon_pid=
cleanup() {
    [ -z "$daemon_pid" ] || kill -TERM "$daemon_pid" 2>/dev/null || true
    "$repo/tools/minicluster" down --dir "$dir" >/dev/null 2>&1 || true
}
trap cleanup EXIT
"$repo/tools/minicluster" up --dir "$dir" --nodes 8 --gpus 4 \
    --plugin-dir "$SLURM_AI_PLUGIN_DIR" --select select/ai_cons_tres \
    --spank "$SLURM_AI_PLUGIN_DIR/spank_ai.so" \
    --ai-conf "NodeTopology=$repo/tests/inputs/minicluster-node.xml" \
    --ai-conf ElasticInterval=1 --ai-conf ElasticGrowCooldown=2s --ai-conf ElasticGrowTimeout=20s \
    >"$WORK/up.log" 2>&1 || fail "cluster did not come up: $(tail -n 20 "$WORK/up.log")"
export SLURM_CONF=$dir/etc/slurm.conf
log=$WORK/elasticd.log
start_daemon() {
    "$SLURM_AI_BIN_DIR/ai-elasticd" --slurm-conf "$SLURM_CONF" --state "$WORK/elasticd.json" \
        --verbose </dev/null >>"$log" 2>&1 &
    daemon_pid=$!
}

size() { squeue -h -j "$1" -t R -o %D; }  # empty unless it runs
wait_size() {  # JOB NODES SECONDS WHAT
    for _ in $(seq $(($3 * 2))); do [ "$(size "$1")" = "$2" ] && return 0; sleep 0.5; done
    fail "$4: job $1 has $(size "$1") node(s), expected $2; ai-elasticd: $(tail -n 8 "$log")"
}
idle_nodes() { sinfo -h -N -t idle -o %N | sort -u | wc -l; }

a_comm=allreduce:bytes=8G,compute=500ms
b_comm=allreduce:bytes=16M,compute=60s
c=$(sbatch --parsable --gpus-per-node=4 --ai-elastic=2:4 --ai-comm=$a_comm -o /dev/null \
    --wrap='sleep 600')
wait_size "$c" 2 30 "on 8 idle nodes a job like A starts on its goodput size, MIN"
# Its record keeps the size its start was measured at (MAX, no -N), for ai-elasticd.
expect_eq "elastic_start_max in the record of a job started on its MIN" 4 \
    "$(json_get "$dir/state/ai_select/jobs/$c.json" elastic_start_max)"
d=$(sbatch --parsable --gpus-per-node=4 --ai-elastic=2:4 --ai-comm=$b_comm -o /dev/null \
    --wrap='sleep 600')
wait_size "$d" 4 30 "a job like B starts on its MAX"
scancel "$c" "$d"
for _ in $(seq 60); do [ "$(idle_nodes)" = 8 ] && break; sleep 0.5; done
expect_eq "idle nodes once both are cancelled" 8 "$(idle_nodes)"
if ! slurm_grows_jobs; then  # the start is the select plugin's; growth is ai-elasticd's
    pass "start on 8 idle nodes: like A 2 nodes, like B 4; no growth on Slurm $SLURM_SERIES"
    exit 0
fi

blocker=$(sbatch --parsable -N4 --gpus-per-node=4 -o /dev/null --wrap='sleep 600')
a=$(sbatch --parsable --priority=5000 -N2 --gpus-per-node=4 --ai-elastic=2:4 \
    --ai-comm=$a_comm -o /dev/null --wrap='sleep 600')
b=$(sbatch --parsable --priority=1000 -N2 --gpus-per-node=4 --ai-elastic=2:4 \
    --ai-comm=$b_comm -o /dev/null --wrap='sleep 600')
wait_size "$blocker" 4 30 "the blocker starts"
wait_size "$a" 2 30 "A starts"
wait_size "$b" 2 30 "B starts"
expect_eq "elastic_start_max of a job of -N2 --ai-elastic=2:4" 2 \
    "$(json_get "$dir/state/ai_select/jobs/$a.json" elastic_start_max)"
start_daemon
# With every node in use there is nothing to give: a few looks, no resize.
sleep 3
expect_eq "grows while no node is idle" 0 "$(grep -c "grows by" "$log")"

scancel "$blocker"
wait_size "$b" 4 60 "B grows into the freed nodes"
sleep 4  # more looks: A must not grow, the 2 nodes left stay idle
expect_eq "nodes A keeps" 2 "$(size "$a")"
expect_eq "nodes B has" 4 "$(size "$b")"
expect_eq "idle nodes" 2 "$(idle_nodes)"
grep -c "job $b: grows by 2 " "$log" >/dev/null ||
    fail "no grow of B by 2 in the log: $(grep "grows by" "$log")"
expect_eq "grows of A" 0 "$(grep -c "job $a: grows by" "$log")"
# What the daemon logged of a job on its last look at it at a size.
field() {  # field JOB NODES SED-EXPR: from the last goodput line of JOB at NODES nodes
    grep "job $1: $2 node(s), goodput" "$log" | tail -n1 | sed -n "$3"
}
next_gain='s/.*next node adds \([-0-9.]*\),.*/\1/p'   # per GPU
goodput='s/.*goodput \([0-9.]*\) GPUs.*/\1/p'           # GPUs' worth
# The gains the rule compared (the last look before B's grow: both at 2 nodes).
ga=$(field "$a" 2 "$next_gain") gb=$(field "$b" 2 "$next_gain")
[ -n "$ga" ] && [ -n "$gb" ] || fail "no goodput lines in the log: $(tail -n 8 "$log")"
awk -v a="$ga" -v b="$gb" 'BEGIN { exit !(a < 0.5 && b >= 0.5 && b > a) }' ||
    fail "gains per GPU: A $ga (expected < 0.5), B $gb (expected >= 0.5)"

# The priority rule, on the same state: A (higher priority) takes the idle nodes.
kill -TERM "$daemon_pid"
wait "$daemon_pid" 2>/dev/null || true
daemon_pid=
echo "ElasticPolicy=priority" >>"$dir/etc/ai_select.conf"
start_daemon
wait_size "$a" 4 60 "under the priority rule A grows into the idle nodes"
expect_eq "nodes B keeps" 4 "$(size "$b")"

# A job without compute= (CommShare): ai-elasticd measures it at the size it started
# asking for (-N2: 2 nodes), before and after it grows, so the goodput it logs at 3 nodes
# is the one its curve promised at 2 (goodput + 4 GPUs x the next node's gain). Measured
# at its present size instead, CommShare would make it 6 GPUs' worth (half of 12).
kill -TERM "$daemon_pid"
wait "$daemon_pid" 2>/dev/null || true
daemon_pid=
scancel "$a" "$b"
for _ in $(seq 60); do [ "$(idle_nodes)" = 8 ] && break; sleep 0.5; done
sed -i '/^ElasticPolicy=/d' "$dir/etc/ai_select.conf"
echo "ElasticMinGain=0.1" >>"$dir/etc/ai_select.conf"
e=$(sbatch --parsable -N2 --gpus-per-node=4 --ai-elastic=2:3 --ai-comm=allreduce:bytes=64M \
    -o /dev/null --wrap='sleep 600')
wait_size "$e" 2 30 "a job of -N2 starts on 2 nodes"
start_daemon
wait_size "$e" 3 60 "with ElasticMinGain=0.1 it grows to its MAX"
sleep 3  # a look at 3 nodes
g2=$(field "$e" 2 "$goodput") x2=$(field "$e" 2 "$next_gain") g3=$(field "$e" 3 "$goodput")
[ -n "$g2" ] && [ -n "$x2" ] && [ -n "$g3" ] ||
    fail "no goodput lines of job $e at 2 and 3 nodes: $(grep "job $e:" "$log" | tail -n 4)"
awk -v g2="$g2" -v x="$x2" -v g3="$g3" 'BEGIN {
    d = g3 - (g2 + 4 * x); off = g3 - 6
    exit !(d < 0.03 && d > -0.03 && (off > 0.1 || off < -0.1)) }' ||
    fail "at 2 nodes goodput $g2, a node more adds $x2 per GPU; at 3 nodes $g3 ($g2 + 4 x $x2?)"
pass "start on 8 idle nodes: like A 2 nodes, like B 4; goodput: B (gain $gb per GPU) grew 2 -> 4, A (gain $ga) kept 2 and 2 nodes stayed idle; under the priority rule A grew 2 -> 4; a CommShare job's goodput $g2 at 2 nodes, $g3 at 3, on one curve"
