# Sourced by the PyTorch trainer's tests, on the loopback mini-cluster (tests/cluster/
# ddp_*.sh, after lib.sh) and on the compose cluster (tests/docker/lib.sh): the trainer,
# its batch script, the uninterrupted run to compare with, and what its jobs reported.
# Needs fail() and TEST_NAME. Set before sourcing, for another cluster than this host's:
#   DDP_RUN      the command prefix that runs a command at the cluster's submit host
#                (default none: here; the docker tests run `docker-compose exec`)
#   DDP_TRAINER, DDP_JOB   the trainer and its batch script as that host sees them

DDP_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
DDP_TRAINER=${DDP_TRAINER:-$DDP_REPO/tests/trainer/ddp_trainer.py}
DDP_JOB=${DDP_JOB:-$DDP_REPO/tests/trainer/ddp_job.sh}
DDP_RUN=("${DDP_RUN[@]+"${DDP_RUN[@]}"}")
# Debian's python3-torch is installed for Debian's Python; a python3 earlier on PATH (a
# pyenv one, say) may not have it. ddp_job.sh reads the same variable.
export DDP_PYTHON=${DDP_PYTHON:-/usr/bin/python3}

# Skips the test (exit status 77, ctest's SKIP_RETURN_CODE) without torch and gloo.
ddp_need_torch() {
    local err
    err=$("$DDP_PYTHON" -c 'import torch.distributed as d
assert d.is_available() and d.is_gloo_available(), "torch.distributed without gloo"' 2>&1) && return 0
    echo "SKIP [$TEST_NAME]: $DDP_PYTHON cannot run torch.distributed with gloo" \
        "(Debian's python3-torch): $(tail -n 1 <<<"$err")"
    exit 77
}

# ddp_standalone OUT FINAL TRAINER_OPTIONS...: the same training in one process without
# Slurm (env:// on a free loopback port, no checkpoints), at the submit host; OUT is a
# file here, FINAL a path there. Prints its digest.
ddp_standalone() {
    local out=$1 final=$2 port
    shift 2
    port=$("${DDP_RUN[@]}" "$DDP_PYTHON" -c 'import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    "${DDP_RUN[@]}" env -u AI_CHECKPOINT_DIR -u AI_CHECKPOINT_RESUME MASTER_ADDR=127.0.0.1 \
        MASTER_PORT="$port" RANK=0 WORLD_SIZE=1 "$DDP_PYTHON" "$DDP_TRAINER" --final "$final" "$@" \
        >"$out" 2>&1 ||
        fail "the standalone run failed: $(tail -n 5 "$out")"
    ddp_digests "$out"
}

# ddp_submit OUT SBATCH_OPTIONS... -- TRAINER_OPTIONS...: prints the job id.
ddp_submit() {
    local out=$1 sb=()
    shift
    while [ $# -gt 0 ] && [ "$1" != -- ]; do sb+=("$1"); shift; done
    [ $# -gt 0 ] && shift
    "${DDP_RUN[@]}" sbatch --parsable --open-mode=append -o "$out" "${sb[@]}" "$DDP_JOB" \
        "$DDP_TRAINER" "$@" ||
        fail "sbatch ${sb[*]} refused the PyTorch trainer"
}

# ddp_digests OUT: the distinct digests of OUT's "done" lines, one a line.
ddp_digests() { sed -n 's/.* done step=[0-9]* digest=\([0-9a-f]*\)$/\1/p' "$1" | sort -u; }

# ddp_worlds OUT: the world size of each run, in order ("3 2 3").
ddp_worlds() {
    grep -E '^[0-9.]+ rank=0 .* resume step=' "$1" | sed 's/.* world=\([0-9]*\) .*/\1/' | xargs
}

# ddp_same_params A B: the two --final files (paths at the submit host) hold equal tensors
# (torch.equal), or fails.
ddp_same_params() {
    local msg
    msg=$("${DDP_RUN[@]}" "$DDP_PYTHON" -c 'import sys, torch
a, b = (torch.load(p, map_location="cpu") for p in sys.argv[1:3])
bad = [k for k in a["state_dict"] if not torch.equal(a["state_dict"][k], b["state_dict"][k])]
print("differ in " + ", ".join(bad) if bad else "equal")' "$1" "$2" 2>&1) ||
        fail "cannot compare $1 and $2: $msg"
    [ "$msg" = equal ] || fail "final parameters of $1 and $2 $msg"
}

# ddp_expect_recovered OUT JSON VICTIM STEPS: OUT (a file here) and its analysis JSON
# (analyse OUT FAILURE_TIME) show a 3-rank job that lost VICTIM once and recovered as the
# suite promises: a second run of 3 ranks without VICTIM, resumed from no older than the
# newest complete checkpoint before the failure, doing again at most the steps done since
# that checkpoint, and every rank done at STEPS. Sets NEWEST, COMMITTED, RESUMED, REDONE.
ddp_expect_recovered() {
    local out=$1 j=$2 victim=$3 steps=$4
    expect_eq "world sizes of the trainer's runs" "3 3" "$(ddp_worlds "$out")"
    expect_eq "nodes of the second run without $victim" "" \
        "$(py "$j" '" ".join(d["runs"][1]["nodes"])' | tr ' ' '\n' | grep -x "$victim" || true)"
    NEWEST=$(py "$j" 'd["failures"][0]["newest_checkpoint_before"]')
    COMMITTED=$(py "$j" 'd["failures"][0]["committed_before"]')
    RESUMED=$(py "$j" 'd["runs"][1]["resume_step"]')
    REDONE=$(py "$j" 'd["runs"][1]["lost"]')
    [ "$NEWEST" -gt 0 ] || fail "no complete checkpoint before the failure"
    [ "$RESUMED" -ge "$NEWEST" ] ||
        fail "resumed from step $RESUMED, older than the newest complete checkpoint $NEWEST before the failure"
    [ "$REDONE" -le $((COMMITTED - NEWEST)) ] ||
        fail "did $REDONE steps again, more than the $((COMMITTED - NEWEST)) done since the checkpoint of step $NEWEST"
    expect_eq "ranks done" 3 "$(grep -c " done step=$steps " "$out")"
}
