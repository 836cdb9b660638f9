# Sourced by the tests that run the trainers' jobs, on the loopback mini-cluster
# (tests/trainer/cluster_helpers.bash) and on the compose cluster (tests/docker/lib.sh):
# waiting, and reading what a trainer's job wrote. Needs fail().

JOB_HELPERS_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# wait_until SECONDS WHAT COMMAND...: polls COMMAND every 0.5 s; fails with WHAT.
wait_until() {
    local limit=$1 what=$2 t0=$SECONDS
    shift 2
    until "$@"; do
        [ $((SECONDS - t0)) -lt "$limit" ] || fail "$what: not within ${limit}s"
        sleep 0.5
    done
}

output_has() { [ -f "$1" ] && grep -cE "$2" "$1" >/dev/null; }

# analyse OUT [FAILURE_TIME...]: trainer_log.py's JSON of the output file OUT, written to
# OUT.json; prints that path.
analyse() {
    local out=$1 f args=()
    shift
    for f in "$@"; do args+=(--failure "$f"); done
    python3 "$JOB_HELPERS_REPO/tests/trainer/trainer_log.py" "$out" "${args[@]+"${args[@]}"}" \
        >"$out.json" || fail "cannot read the trainer's output $out"
    echo "$out.json"
}

# expect_trainer_finished JSON STEPS [WHAT]: the trainer's runs (analyse's JSON) raised no
# error and ended at step STEPS with a final state that verifies.
expect_trainer_finished() {
    local what=${3:+$3: }
    expect_eq "${what}trainer errors" "[]" "$(py "$1" 'd["errors"]')"
    expect_eq "${what}final step count" "$2" "$(py "$1" 'd["final_step"]')"
    expect_eq "${what}final state verifies" true "$(py "$1" 'd["final_digest_ok"]')"
}

# py FILE EXPR: evaluates a Python expression over the JSON in FILE (as d).
py() {
    python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
v=eval(sys.argv[2])
print(json.dumps(v) if isinstance(v,(list,dict,bool)) or v is None else v)' "$1" "$2"
}
