# Sourced by the tests against the dockerized mini-cluster (label "docker"). The cluster is
# up already (ctest fixture docker.setup, tests/docker/setup.sh); DOCKER_PROJECT names its
# compose project, SLURM_AI_SHARED_DIR the host folder that is /shared in every container.
# Without a Docker engine every test says so and exits 77, which ctest counts as skipped.
set -euo pipefail

TEST_NAME=$(basename "$0" .sh)
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
: "${DOCKER_PROJECT:?DOCKER_PROJECT must name the compose project (ctest sets it)}"
: "${SLURM_AI_SHARED_DIR:?SLURM_AI_SHARED_DIR must name the shared folder (ctest sets it)}"
export SLURM_AI_SHARED_DIR SLURM_AI_IMAGE=${SLURM_AI_IMAGE:-slurm-ai-minicluster:22.05}
# The network docker.setup chose (setup.sh), so that every later compose command reads the
# same configuration.
NET_FILE=$SLURM_AI_SHARED_DIR/network.env
if [ -z "${SLURM_AI_NET:-}" ] && [ -f "$NET_FILE" ]; then
    SLURM_AI_NET=$(sed -n 's/^SLURM_AI_NET=//p' "$NET_FILE")
    export SLURM_AI_NET
fi

fail() {
    echo "FAIL [$TEST_NAME]: $*" >&2
    exit 1
}

docker_engine_or_skip() {
    if ! command -v docker >/dev/null || ! command -v docker-compose >/dev/null; then
        echo "SKIP [$TEST_NAME]: no docker or docker-compose command on this host" >&2
        exit 77
    fi
    if ! docker info >/dev/null 2>&1; then
        echo "SKIP [$TEST_NAME]: the Docker engine does not answer (docker info)" >&2
        exit 77
    fi
}
docker_engine_or_skip

dc() { docker-compose -p "$DOCKER_PROJECT" -f "$REPO/docker/compose.yaml" "$@"; }
# A command on the controller, as a user at the cluster's submit host.
ctl() { dc exec -T controller "$@"; }
container_of() { dc ps -q "$1"; }
NETWORK=${DOCKER_PROJECT}_cluster

# A folder of this test under /shared, seen at the same path by the host (as $HOST_DIR)
# and by every container (as $WORK).
WORK=/shared/$TEST_NAME
HOST_DIR=$SLURM_AI_SHARED_DIR/$TEST_NAME
rm -rf "$HOST_DIR"
mkdir -p "$HOST_DIR"

job_state() { ctl squeue -h -j "$1" -o %T 2>/dev/null || true; }
job_field() {  # job_field ID KEY: a field of `scontrol -o show job` ("" when the job is gone)
    ctl scontrol -o show job "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n1
}
job_running() { [ "$(job_state "$1")" = RUNNING ]; }
job_gone() { [ -z "$(job_state "$1")" ]; }
node_state() { ctl sinfo -h -N -n "$1" -o %T 2>/dev/null | head -n1; }
node_idle() { [ "$(node_state "$1")" = idle ]; }

# At exit: the test's cleanups (on_exit CMD), then, after a failure, what the controller
# saw.
CLEANUPS=()
on_exit() { CLEANUPS+=("$1"); }
at_exit() {
    local rc=$? c
    for c in "${CLEANUPS[@]+"${CLEANUPS[@]}"}"; do eval "$c" || true; done
    if [ "$rc" != 0 ] && [ "$rc" != 77 ]; then
        echo "=== squeue / sinfo" >&2
        ctl squeue >&2 2>/dev/null || true
        ctl sinfo -N >&2 2>/dev/null || true
        echo "=== controller (last 40 lines but getaddrinfo's)" >&2
        dc logs --no-color --tail 80 controller 2>/dev/null | grep -v getaddrinfo | tail -n 40 >&2 || true
    fi
    exit "$rc"
}
trap at_exit EXIT

# --- Shared with the loopback rig's tests: waiting, reading a trainer's output, and the
# PyTorch trainer of the image (tests/trainer/, installed in /opt/slurm-ai/trainer/),
# run from the controller.
# shellcheck source=../trainer/job_helpers.bash
source "$REPO/tests/trainer/job_helpers.bash"
DDP_RUN=(ctl)
DDP_TRAINER=/opt/slurm-ai/trainer/ddp_trainer.py
DDP_JOB=/opt/slurm-ai/trainer/ddp_job.sh
# shellcheck source=../trainer/ddp_helpers.bash
source "$REPO/tests/trainer/ddp_helpers.bash"

expect_eq() {  # expect_eq WHAT EXPECTED ACTUAL
    [ "$2" = "$3" ] || fail "$1: expected '$2', got '$3'"
}
job_end_state() {  # the last end state jobcomp.log records for the job
    ctl sed -n "s/^JobId=$1 .*JobState=\([A-Z_]*\).*/\1/p" /var/log/slurm/jobcomp.log | tail -n1
}

# ddp_reference TRAINER_OPTIONS...: the digest of the same training in one process
# (ddp_standalone), run once per cluster for each set of options and kept in
# /shared/reference/; ddp_reference_pt TRAINER_OPTIONS...: its parameters' path there.
ddp_reference_key() { printf '%s_' "$@" | tr -c 'A-Za-z0-9_.=-' '_'; }
ddp_reference_pt() { echo "/shared/reference/$(ddp_reference_key "$@")/alone.pt"; }
ddp_reference() {
    local host
    host=$SLURM_AI_SHARED_DIR/reference/$(ddp_reference_key "$@")
    if [ ! -s "$host/digest" ]; then
        mkdir -p "$host"
        ddp_standalone "$host/alone.out" "$(ddp_reference_pt "$@")" "$@" >"$host/digest.new"
        mv "$host/digest.new" "$host/digest"
    fi
    cat "$host/digest"
}
