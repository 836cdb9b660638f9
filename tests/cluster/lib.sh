# Sourced by every cluster test. The mini-cluster is up already (ctest fixture
# cluster.setup); MINICLUSTER_DIR names it. Helpers fail the test with a message that
# says what was expected and what was seen.
set -euo pipefail
# With pipefail, `producer | grep -q` fails when grep exits early and the producer gets
# SIGPIPE: read long outputs with `grep -c ... >/dev/null`, which reads them whole.

: "${MINICLUSTER_DIR:?MINICLUSTER_DIR must name a running mini-cluster}"
# shellcheck disable=SC1091
source "$MINICLUSTER_DIR/env"
STATE_DIR=$(sed -n 's/^state_dir=//p' "$MINICLUSTER_DIR/cluster.info")
WORK=$(mktemp -d "$MINICLUSTER_DIR/test.XXXXXX")
TEST_NAME=$(basename "$0" .sh)

# The installed Slurm's series ("24.11"), and whether it is MAJOR.MINOR or later.
SLURM_SERIES=$(slurmctld -V | grep -oE '[0-9]+\.[0-9]+' | head -n1)
slurm_at_least() {  # slurm_at_least MAJOR MINOR
    local major=${SLURM_SERIES%%.*} minor=$((10#${SLURM_SERIES#*.}))
    [ "$major" -gt "$1" ] || { [ "$major" = "$1" ] && [ "$minor" -ge "$2" ]; }
}

# Whether the suite grows jobs on this Slurm: slurmctld 25.11 and later die merging an
# expansion job into a job without licenses, so there it refuses every grow and ai-elasticd
# only shrinks (SlurmClient::grow_unsupported, the same cut in the C++ code).
slurm_grows_jobs() { ! slurm_at_least 25 11; }

# skip_before MAJOR MINOR WHAT: a test of what Slurm MAJOR.MINOR brought (WHAT) is skipped
# (exit 77, ctest's SKIP_RETURN_CODE) on an older Slurm, saying so.
skip_before() {
    slurm_at_least "$1" "$2" && return 0
    echo "SKIP [$TEST_NAME]: Slurm $SLURM_SERIES has no $3 ($1.$2+)"
    exit 77
}

fail() {
    echo "FAIL [$TEST_NAME]: $*" >&2
    exit 1
}

expect_eq() {  # expect_eq WHAT EXPECTED ACTUAL
    [ "$2" = "$3" ] || fail "$1: expected '$2', got '$3'"
}

expect_contains() {  # expect_contains WHAT HAYSTACK NEEDLE
    case "$2" in
        *"$3"*) ;;
        *) fail "$1: expected to contain '$3', got: $2" ;;
    esac
}

# Waits until job $1 has left the queue (any end state); fails after $2 seconds (60).
wait_job_gone() {
    local id=$1 limit=${2:-60} t=0
    while squeue -h -j "$id" -o %i 2>/dev/null | grep -q .; do
        sleep 1
        t=$((t + 1))
        [ $t -lt "$limit" ] || fail "job $id still in the queue after ${limit}s"
    done
}

# stop_daemon PIDFILE WHAT [SECONDS]: SIGTERM to the daemon, then waits until it is gone
# (a zombie counts as gone: containers may have no reaper); fails after SECONDS (60).
stop_daemon() {
    local pid
    pid=$(cat "$1")
    kill -TERM "$pid"
    for _ in $(seq $((${3:-60} * 4))); do
        [ -d "/proc/$pid" ] && ! grep -q '^State:.*Z' "/proc/$pid/status" 2>/dev/null || return 0
        sleep 0.25
    done
    fail "$2 ($pid) did not stop within ${3:-60} s"
}

# Stops slurmctld cleanly (it saves its state on the way out).
# tools/minicluster restart-ctld starts it again.
stop_ctld() { stop_daemon "$MINICLUSTER_DIR/run/slurmctld.pid" slurmctld; }

# cancel_named NAME...: cancels this test's jobs by name (scancel --name takes one name)
# and waits up to 30 s for them to leave the queue, so that the next test starts on free
# nodes. For EXIT traps: never fails.
cancel_named() {
    local n left
    for n in "$@"; do scancel --name="$n" >/dev/null 2>&1 || true; done
    for _ in $(seq 60); do
        left=""
        for n in "$@"; do left+=$(squeue -h -n "$n" -o %i 2>/dev/null || true); done
        [ -n "$left" ] || return 0
        sleep 0.5
    done
    return 0
}

# show_on_failure RC CLUSTER_DIR FILE...: for EXIT traps; never fails. When RC (the test's
# exit status) is not 0, the tails of FILE..., of the cluster's slurmctld log (no debug
# lines) and the queue go to stderr, and SLURM_AI_KEEP_LOGS=DIR keeps the cluster's whole
# log folder there.
show_on_failure() {
    local rc=$1 dir=$2 f keep
    shift 2
    [ "$rc" != 0 ] || return 0
    for f in "$@"; do
        echo "=== $f" >&2
        tail -n 40 "$f" >&2 2>/dev/null || true
    done
    echo "=== slurmctld.log (no debug lines)" >&2
    grep -v "debug" "$dir/log/slurmctld.log" 2>/dev/null | tail -n 40 >&2 || true
    squeue >&2 2>/dev/null || true
    if [ -n "${SLURM_AI_KEEP_LOGS:-}" ]; then
        keep=$SLURM_AI_KEEP_LOGS/$(basename "$dir")-$TEST_NAME
        mkdir -p "$keep" && cp -r "$dir/log" "$keep" && echo "=== logs kept in $keep" >&2
    fi
    return 0
}

# Prints the end state of a finished job from the job completion log.
job_end_state() {
    sed -n "s/^JobId=$1 .*JobState=\([A-Z_]*\).*/\1/p" "$MINICLUSTER_DIR/log/jobcomp.log" | tail -n1
}

# The id the controller would give the next job (from a held, cancelled probe job).
next_job_id() {
    local id
    id=$(sbatch --parsable --hold -o /dev/null --wrap=true)
    scancel "$id"
    echo $((id + 1))
}

# Reads a JSON field (python dotted path, e.g. hints.comm.pattern) from a file.
json_get() {
    python3 -c 'import json,sys
v=json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."):
    v=v[int(k)] if isinstance(v,list) else v[k]
print(v if not isinstance(v,(dict,list)) else json.dumps(v,sort_keys=True))' "$1" "$2"
}

# resv_fields SLURM_CONF NAME: what a reservation holds, without its name, nodes and times
# (NodeCnt, CoreCnt, Flags, PartitionName), to compare two clusters' reservations.
resv_fields() {
    SLURM_CONF=$1 scontrol -o show reservation "$2" |
        grep -o '\(NodeCnt\|CoreCnt\|Flags\|PartitionName\)=[^ ]*' | tr '\n' ' '
}

# side_by_side NAME: a scratch directory $base for two clusters of the same shape, the
# suite's (A, in $base/suite) and stock's (B, in $base/stock), both taken down and the
# directory removed on exit; CONF[A|B] are their slurm.conf, and `on A|B CMD...` runs a
# client command against one of them.
side_by_side() {
    base=$(mktemp -d "/tmp/slurm-ai-$1.XXXXXX")
    chmod 755 "$base"
    declare -gA CONF=([A]=$base/suite/etc/slurm.conf [B]=$base/stock/etc/slurm.conf)
    trap _side_by_side_down EXIT
}
_side_by_side_down() {
    local top
    top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
    "$top/tools/minicluster" down --dir "$base/suite" >/dev/null 2>&1 || true
    "$top/tools/minicluster" down --dir "$base/stock" >/dev/null 2>&1 || true
    rm -rf "$base"
}
on() { local c=$1; shift; SLURM_CONF=${CONF[$c]} "$@"; }

# reconfigure_until LOG TEXT [SECONDS]: scontrol reconfigure, then waits up to SECONDS
# (10) for a new line of slurmctld's LOG holding TEXT; returns 1 if none came.
reconfigure_until() {
    local log=$1 text=$2 limit=${3:-10} mark i
    mark=$(wc -l <"$log")
    scontrol reconfigure
    for ((i = 0; i < limit * 2; i++)); do
        tail -n +"$mark" "$log" | grep -cF -- "$text" >/dev/null && return 0
        sleep 0.5
    done
    return 1
}

pass() {
    echo "PASS [$TEST_NAME]${1:+: $1}"
}

# Per node, the CPU ids and GPU indexes each running job holds ("scontrol -d" detail
# lines): every node of a running job holds some of its CPUs, no CPU or GPU is held by
# two jobs, and each node's own CPUAlloc and GresUsed equal what its running jobs hold.
# A job that holds resources shows as RUNNING, or for a moment CONFIGURING or RESIZING.
# On a failure every job's state and nodes are printed too.
check_no_double_allocation() {  # check_no_double_allocation WHEN
    scontrol -d -o show job >"$WORK/jobs.txt"
    scontrol -d -o show node >"$WORK/nodes.txt"
    _allocation_consistent "$1" && return 0
    grep -o 'JobId=[0-9]* JobName=[^ ]*\|JobState=[A-Z_]*\| NodeList=[^ ]*' "$WORK/jobs.txt" |
        paste -d' ' - - - >&2 || true
    fail "double allocation $1 (see above)"
}
_allocation_consistent() {
    python3 - "$WORK/jobs.txt" "$WORK/nodes.txt" "$1" <<'PY'
import re, sys

def expand(expr):  # n[1-2,4],n7 -> names; ids "0-3,8" -> ints
    out = []
    for m in re.finditer(r'([^,\[]+)(?:\[([^\]]+)\])?', expr):
        base, ranges = m.group(1), m.group(2)
        if not ranges:
            out.append(base); continue
        for r in ranges.split(','):
            a, _, b = r.partition('-')
            out += [f"{base}{i}" for i in range(int(a), int(b or a) + 1)]
    return out

def ids(expr):
    s = set()
    for r in filter(None, expr.split(',')):
        a, _, b = r.partition('-')
        s |= set(range(int(a), int(b or a) + 1))
    return s

cpus, gpus, bad = {}, {}, []
for line in open(sys.argv[1]):
    # SIGNALING: a running job with a signal under way (a grown job's view signal), which
    # holds what it holds.
    if not re.search(r'JobState=(RUNNING|CONFIGURING|RESIZING|SIGNALING) ', line):
        continue
    job = re.search(r'JobId=(\d+)', line).group(1)
    with_cpus = set()
    for m in re.finditer(r' Nodes=(\S+) CPU_IDs=(\S+) Mem=\S+ GRES=(\S*)', line):
        g = re.search(r'IDX:([0-9,-]+)', m.group(3))
        for node in expand(m.group(1)):
            with_cpus.add(node)
            for what, table, got in (('CPU', cpus, ids(m.group(2))),
                                     ('GPU', gpus, ids(g.group(1)) if g else set())):
                for other, held in table.setdefault(node, {}).items():
                    if held & got:
                        bad.append(f"{node}: {what}s {sorted(held & got)} held by jobs {other} and {job}")
                table[node][job] = got
    for node in expand(re.search(r' NodeList=(\S+)', line).group(1)):
        if node not in with_cpus:
            bad.append(f"{node}: a node of job {job} where it holds no CPU")
for line in open(sys.argv[2]):
    node = re.search(r'NodeName=(\S+)', line).group(1)
    alloc = int(re.search(r'CPUAlloc=(\d+)', line).group(1))
    held = sum(len(s) for s in cpus.get(node, {}).values())
    if alloc != held:
        bad.append(f"{node}: CPUAlloc={alloc} but running jobs hold {held} CPUs")
    m = re.search(r'GresUsed=gpu:(?:\w+:)?(\d+)(?:\(IDX:([^)]*)\))?', line)
    used = ids(m.group(2)) if m and m.group(2) not in (None, 'N/A') else set()
    held = set().union(*gpus.get(node, {}).values())
    if used != held or (m and int(m.group(1)) != len(held)):
        bad.append(f"{node}: GPUs in use {m.group(0) if m else '-'} but running jobs hold {sorted(held)}")
for b in bad:
    print(f"{sys.argv[3]}: {b}", file=sys.stderr)
sys.exit(1 if bad else 0)
PY
}
