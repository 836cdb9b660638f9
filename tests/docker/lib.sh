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

# wait_until SECONDS WHAT COMMAND...: polls COMMAND every second; fails with WHAT.
wait_until() {
    local limit=$1 what=$2 t0=$SECONDS
    shift 2
    until "$@"; do
        [ $((SECONDS - t0)) -lt "$limit" ] || fail "$what: not within ${limit}s"
        sleep 1
    done
}

job_state() { ctl squeue -h -j "$1" -o %T 2>/dev/null || true; }
job_field() {  # job_field ID KEY: a field of `scontrol -o show job` ("" when the job is gone)
    ctl scontrol -o show job "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n1
}
job_running() { [ "$(job_state "$1")" = RUNNING ]; }
job_gone() { [ -z "$(job_state "$1")" ]; }
node_state() { ctl sinfo -h -N -n "$1" -o %T 2>/dev/null | head -n1; }
node_idle() { [ "$(node_state "$1")" = idle ]; }
cluster_healthy() { ctl /opt/slurm-ai/entrypoint.sh health; }

# On failure: what the controller saw.
show_on_failure() {
    local rc=$?
    [ "$rc" = 0 ] || [ "$rc" = 77 ] && return 0
    echo "=== squeue / sinfo" >&2
    ctl squeue >&2 2>/dev/null || true
    ctl sinfo -N >&2 2>/dev/null || true
    echo "=== controller (last 40 lines)" >&2
    dc logs --no-color --tail 40 controller >&2 2>/dev/null || true
}
trap show_on_failure EXIT

# --- The PyTorch trainer of the image (tests/trainer/ddp_trainer.py, ddp_job.sh) --------
TRAINER_DIR=/opt/slurm-ai/trainer
DDP_TRAINER=$TRAINER_DIR/ddp_trainer.py
DDP_JOB=$TRAINER_DIR/ddp_job.sh

# ddp_submit OUT SBATCH_OPTIONS... -- TRAINER_OPTIONS...: submitted from the controller;
# OUT is a path under /shared. Prints the job id.
ddp_submit() {
    local out=$1 sb=()
    shift
    while [ $# -gt 0 ] && [ "$1" != -- ]; do sb+=("$1"); shift; done
    [ $# -gt 0 ] && shift
    ctl sbatch --parsable --open-mode=append -o "$out" "${sb[@]}" "$DDP_JOB" "$DDP_TRAINER" "$@" ||
        fail "sbatch ${sb[*]} refused the PyTorch trainer"
}

# ddp_standalone NAME TRAINER_OPTIONS...: the same training in one process on the
# controller, without Slurm; its output in $HOST_DIR/NAME.out, its parameters in
# $WORK/NAME.pt. Prints the digest.
ddp_standalone() {
    local name=$1
    shift
    ctl env MASTER_ADDR=127.0.0.1 MASTER_PORT=29499 RANK=0 WORLD_SIZE=1 \
        /usr/bin/python3 "$DDP_TRAINER" --final "$WORK/$name.pt" "$@" >"$HOST_DIR/$name.out" 2>&1 ||
        fail "the standalone run failed: $(tail -n 5 "$HOST_DIR/$name.out")"
    ddp_digests "$HOST_DIR/$name.out"
}

# ddp_digests OUT: the distinct digests of OUT's "done" lines, one a line.
ddp_digests() { sed -n 's/.* done step=[0-9]* digest=\([0-9a-f]*\)$/\1/p' "$1" | sort -u; }
# ddp_worlds OUT: the world size of each run of the trainer, in order ("3 2 3").
ddp_worlds() {
    grep -E '^[0-9.]+ rank=0 .* resume step=' "$1" | sed 's/.* world=\([0-9]*\) .*/\1/' | xargs
}
# ddp_same_params A B (paths under /shared): torch.equal on every tensor, in a container.
ddp_same_params() {
    local msg
    msg=$(ctl /usr/bin/python3 -c 'import sys, torch
a, b = (torch.load(p, map_location="cpu") for p in sys.argv[1:3])
bad = [k for k in a["state_dict"] if not torch.equal(a["state_dict"][k], b["state_dict"][k])]
print("differ in " + ", ".join(bad) if bad else "equal")' "$1" "$2" 2>&1) ||
        fail "cannot compare $1 and $2: $msg"
    [ "$msg" = equal ] || fail "final parameters of $1 and $2 $msg"
}
# analyse OUT [FAILURE_TIME...]: tests/trainer/trainer_log.py's JSON of a host file.
analyse() {
    local out=$1 f args=()
    shift
    for f in "$@"; do args+=(--failure "$f"); done
    /usr/bin/python3 "$REPO/tests/trainer/trainer_log.py" "$out" "${args[@]+"${args[@]}"}" \
        >"$out.json" || fail "cannot read the trainer's output $out"
    echo "$out.json"
}
# py FILE EXPR: a Python expression over the JSON in FILE (as d).
py() {
    /usr/bin/python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
v=eval(sys.argv[2])
print(json.dumps(v) if isinstance(v,(list,dict,bool)) or v is None else v)' "$1" "$2"
}
expect_eq() {  # expect_eq WHAT EXPECTED ACTUAL
    [ "$2" = "$3" ] || fail "$1: expected '$2', got '$3'"
}
output_has() { [ -f "$1" ] && grep -cE "$2" "$1" >/dev/null; }
job_end_state() {  # the last end state jobcomp.log records for the job
    ctl sed -n "s/^JobId=$1 .*JobState=\([A-Z_]*\).*/\1/p" /var/log/slurm/jobcomp.log | tail -n1
}
