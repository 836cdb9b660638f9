# Sourced by the checkpoint/restart cluster tests (tests/cluster/ckpt_*.sh) after lib.sh: a
# mini-cluster of their own with ai-recover as its node-down trigger, the toy trainer's
# jobs, and what they did.
# Needs: SLURM_AI_PLUGIN_DIR, SLURM_AI_BIN_DIR (set by ctest), fail(), slurm_at_least() and
# show_on_failure() (lib.sh).

CKPT_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=job_helpers.bash
source "$CKPT_REPO/tests/trainer/job_helpers.bash"
TRAINER=$CKPT_REPO/tests/trainer/toy_trainer.py
TOY_JOB=$CKPT_REPO/tests/trainer/toy_job.sh
RECOVER=${SLURM_AI_BIN_DIR:?}/ai-recover
EXPLAIN=${SLURM_AI_BIN_DIR:?}/ai-explain
# Failure detection that a test can wait for: slurmctld pings every SlurmdTimeout/3 and
# gives up on a ping after MessageTimeout (see contrib/slurm.conf.d/checkpoint.conf).
# After 22.05 (seen on 24.11), a ping round that holds a dead node lasts MessageTimeout +
# 1 s (slurmctld retries the refused connection once a second), and the other nodes'
# answers wait for it: SlurmdTimeout must exceed that by a ping interval or more, or every
# node of the round is set not responding.
CKPT_DETECTION=(--extra-conf SlurmdTimeout=6 --extra-conf MessageTimeout=5)
if slurm_at_least 23 2; then
    CKPT_DETECTION=(--extra-conf SlurmdTimeout=15 --extra-conf MessageTimeout=5)
fi

# ckpt_cluster_up DIR [minicluster up options...]: the suite's plugins, ai-recover as the
# PERM node-down trigger (grace 10 s) and its watch loop. Exports SLURM_CONF, CKPT_DIR,
# CKPT_STATE. The caller tears it down (ckpt_cluster_down) in its EXIT trap.
ckpt_cluster_up() {
    CKPT_DIR=$1
    shift
    "$CKPT_REPO/tools/minicluster" up --dir "$CKPT_DIR" --plugin-dir "$SLURM_AI_PLUGIN_DIR" \
        --select select/ai_cons_tres --spank "$SLURM_AI_PLUGIN_DIR/spank_ai.so" \
        --ai-conf "NodeTopology=$CKPT_REPO/tests/inputs/minicluster-node.xml" \
        --recover "$RECOVER" --recover-arg --grace --recover-arg 10 \
        "${CKPT_DETECTION[@]}" "$@" >"$CKPT_DIR.up.log" 2>&1 ||
        fail "mini-cluster in $CKPT_DIR did not come up: $(tail -n 20 "$CKPT_DIR.up.log")"
    rm -f "$CKPT_DIR.up.log"
    export SLURM_CONF=$CKPT_DIR/etc/slurm.conf
    CKPT_STATE=$CKPT_DIR/state
}

# Frozen nodes keep their processes stopped: kill them so that `down` is quick. After a
# failure, ai-recover's log and the job output go to stderr first. RC: the test's exit
# status, where the trap ran a command before this one (default: the last command's).
ckpt_cluster_down() {
    local rc=${1:-$?} n
    [ -n "${CKPT_DIR:-}" ] && [ -d "$CKPT_DIR" ] || return 0
    show_on_failure "$rc" "$CKPT_DIR" "$CKPT_STATE/ai_recover/ai-recover.log" \
        "${CKPT_SHOW_ON_FAILURE[@]+"${CKPT_SHOW_ON_FAILURE[@]}"}"
    for n in "${CKPT_FROZEN[@]+"${CKPT_FROZEN[@]}"}"; do
        "$CKPT_REPO/tools/minicluster" kill-node "$n" --dir "$CKPT_DIR" >/dev/null 2>&1 || true
    done
    "$CKPT_REPO/tools/minicluster" down --dir "$CKPT_DIR" >/dev/null 2>&1 || true
}
CKPT_FROZEN=()
CKPT_SHOW_ON_FAILURE=()  # files whose tail a failed test shows

# fail_node NODE kill|stop|down: slurmd dies (with the node's steps and tasks), the whole
# node hangs (stops responding), or an admin sets it DOWN. Sets FAILED_AT (epoch s).
fail_node() {
    FAILED_AT=$(date +%s.%N)
    case $2 in
        kill) "$CKPT_REPO/tools/minicluster" kill-node "$1" --dir "$CKPT_DIR" >/dev/null 2>&1 ;;
        stop) "$CKPT_REPO/tools/minicluster" kill-node "$1" --stop --dir "$CKPT_DIR" \
                  >/dev/null 2>&1 && CKPT_FROZEN+=("$1") ;;
        down) scontrol update NodeName="$1" State=DOWN Reason="ckpt test: $1 failed" ;;
    esac || fail "could not fail node $1 ($2)"
}

# submit_trainer OUT CKPT_DIR SBATCH_OPTIONS... -- TRAINER_OPTIONS...: prints the job id.
submit_trainer() {
    local out=$1 dir=$2 sb=() tr=()
    shift 2
    while [ $# -gt 0 ] && [ "$1" != -- ]; do sb+=("$1"); shift; done
    [ $# -gt 0 ] && shift
    tr=("$@")
    sbatch --parsable --open-mode=append -o "$out" "${sb[@]}" "$TOY_JOB" "$TRAINER" \
        --dir "$dir" --resolver "$RECOVER resume-path" "${tr[@]}" ||
        fail "sbatch ${sb[*]} refused the toy trainer"
}

# job_field ID KEY: a field of `scontrol -o show job` ("" when the job is gone).
job_field() {
    scontrol -o show job "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n1
}

# job_running_with_restarts ID N SINCE: a run of the job that started at or after SINCE
# (epoch s) is running and it is restart N. (Slurm counts the restart at the start of a
# requeue, while the old run still reads RUNNING.)
job_running_with_restarts() {
    local line start
    line=$(scontrol -o show job "$1" 2>/dev/null | tr ' ' '\n')  # one look at all three
    [ "$(sed -n 's/^JobState=//p' <<<"$line")" = RUNNING ] &&
        [ "$(sed -n 's/^Restarts=//p' <<<"$line")" = "$2" ] &&
        start=$(date -d "$(sed -n 's/^StartTime=//p' <<<"$line")" +%s) &&
        [ "$start" -ge "${3%.*}" ]
}
job_gone() { [ -z "$(squeue -h -j "$1" -o %i 2>/dev/null)" ]; }

# The leaf switch of a mini-cluster node: four nodes a leaf (tools/minicluster).
leaf_of() { echo $(((${1#n} + 3) / 4)); }

# records ID: ai-explain's JSON of the job (placement record and restart log).
records() {
    "$EXPLAIN" "$1" --json --state-dir "$CKPT_STATE" >"$WORK/explain-$1.json" ||
        fail "ai-explain $1 found no record"
    echo "$WORK/explain-$1.json"
}
