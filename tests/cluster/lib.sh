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

# Stops slurmctld cleanly (it saves its state on the way out) and waits until it is gone
# (a zombie counts as gone); fails after 60 s. tools/minicluster restart-ctld starts it.
stop_ctld() {
    local pid
    pid=$(cat "$MINICLUSTER_DIR/run/slurmctld.pid")
    kill -TERM "$pid"
    for _ in $(seq 240); do
        [ -d "/proc/$pid" ] && ! grep -q '^State:.*Z' "/proc/$pid/status" 2>/dev/null || return 0
        sleep 0.25
    done
    fail "slurmctld $pid did not stop within 60 s"
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

pass() {
    echo "PASS [$TEST_NAME]${1:+: $1}"
}
