#!/usr/bin/env bash
# Option values from the environment (SBATCH_AI_*, SALLOC_AI_*, SLURM_AI_* for srun) work
# as the options do: checked where the user submits, refused with a message naming the
# variable, the command line winning over them. --ai-dag's file is read and checked at
# submit time; its compact form reaches the select plugin, which places by it even after
# the file is gone; a bad DAG stops sbatch with no job created.
source "$(dirname "$0")/lib.sh"

refused() {  # refused WHAT EXPECTED-IN-STDERR COMMAND...
    local what=$1 want=$2 before after err rc=0
    shift 2
    before=$(next_job_id)
    err=$("$@" 2>&1 >/dev/null) || rc=$?
    [ $rc -ne 0 ] || fail "$what was accepted"
    expect_contains "$what: stderr" "$err" "$want"
    after=$(next_job_id)
    expect_eq "job ids consumed by the refused $what" $((before + 1)) "$after"
}

# From the environment.
id=$(SBATCH_AI_COMM=pipeline:stages=3 SBATCH_AI_LOCALITY=soft:2m \
    sbatch --parsable -N2 -o /dev/null --wrap=true)
wait_job_gone "$id"
rec="$STATE_DIR/ai_select/jobs/$id.json"
expect_eq "pattern from SBATCH_AI_COMM" pipeline "$(json_get "$rec" hints.comm.pattern)"
expect_eq "wait from SBATCH_AI_LOCALITY" 120 "$(json_get "$rec" hints.locality.wait_s)"
# The command line wins over the environment.
id=$(SBATCH_AI_COMM=pipeline sbatch --parsable -N2 --ai-comm=moe:experts=8 -o /dev/null --wrap=true)
wait_job_gone "$id"
expect_eq "command line over SBATCH_AI_COMM" moe \
    "$(json_get "$STATE_DIR/ai_select/jobs/$id.json" hints.comm.pattern)"
# Bad values from the environment are refused, naming the variable.
refused "SBATCH_AI_COMM=allgather" SBATCH_AI_COMM \
    env SBATCH_AI_COMM=allgather sbatch -o /dev/null --wrap=true
refused "SALLOC_AI_ELASTIC=9:3" SALLOC_AI_ELASTIC env SALLOC_AI_ELASTIC=9:3 salloc -N1 true
refused "SLURM_AI_LOCALITY=strict (srun)" SLURM_AI_LOCALITY \
    env SLURM_AI_LOCALITY=strict srun -N1 true

# A task DAG: read at submit, compacted into the job, placed by it after the file is gone.
dag=$WORK/dag.json
cat >"$dag" <<'JSON'
{"tasks": [{"name": "embed", "gpus": 2}, {"name": "body", "gpus": 2, "compute_s": 0.02},
           {"name": "head", "gpus": 2}],
 "edges": [{"from": "embed", "to": "body", "bytes": "256M"},
           {"from": "body", "to": "head", "bytes": "256M"}]}
JSON
id=$(sbatch --parsable -N3 --gpus-per-node=2 --ai-dag="$dag" --begin=now+2 -o /dev/null --wrap=true)
rm "$dag"
wait_job_gone "$id" 60
expect_eq "end state of the DAG job" COMPLETED "$(job_end_state "$id")"
rec="$STATE_DIR/ai_select/jobs/$id.json"
expect_eq "the plugin placed the job by its DAG" dag "$(json_get "$rec" decision.pattern)"
[ "$(json_get "$rec" hints.dag_compact_bytes)" -gt 0 ] || fail "no compact DAG in the record"

# Bad DAG files stop sbatch, naming the file and the field.
printf '{"tasks": [{"name": "a", "gpus": -1}], "edges": []}' >"$WORK/neg.json"
refused "a DAG with gpus=-1" "tasks[0].gpus" sbatch --ai-dag="$WORK/neg.json" -o /dev/null --wrap=true
printf '{"tasks": [{"name": "a"}, {"name": "b"}], "edges": [{"from": "a", "to": "b"}, {"from": "b", "to": "a"}]}' \
    >"$WORK/cycle.json"
refused "a cyclic DAG" "cycle.json" sbatch --ai-dag="$WORK/cycle.json" -o /dev/null --wrap=true
refused "a missing DAG file" "$WORK/none.json" sbatch --ai-dag="$WORK/none.json" -o /dev/null --wrap=true
# An elastic job's tasks learn where their resize view lives (docs/elastic.md); others not.
el=$(sbatch --parsable -N1 --ai-elastic=1:3 -o "$WORK/elastic.out" \
    --wrap='srun env | grep ^SLURM_AI_ELASTIC_ | sort')
wait_job_gone "$el"
expect_eq "elastic variables of job $el's task" "SLURM_AI_ELASTIC_ENV=$STATE_DIR/ai_elastic/views/$el/env
SLURM_AI_ELASTIC_HOSTFILE=$STATE_DIR/ai_elastic/views/$el/hostfile
SLURM_AI_ELASTIC_MAX=3
SLURM_AI_ELASTIC_MIN=1
SLURM_AI_ELASTIC_VIEW=$STATE_DIR/ai_elastic/views/$el/view.json" "$(cat "$WORK/elastic.out")"
expect_eq "elastic variables of a plain job" 0 "$(srun -N1 env | grep -c ^SLURM_AI_ELASTIC_ || true)"
# A job with --ai-checkpoint is told its newest complete checkpoint; a torn one (newer,
# but without its COMPLETE marker) is never offered.
ck=$WORK/ckpt
mkdir -p "$ck/step-000120" "$ck/step-000130"
touch "$ck/step-000120/COMPLETE"
srun -N1 --ai-checkpoint="$ck,keep=2" -o "$WORK/ckpt.out" bash -c 'env | grep ^AI_CHECKPOINT_ | sort'
expect_eq "checkpoint variables of an srun task" "AI_CHECKPOINT_DIR=$ck
AI_CHECKPOINT_KEEP=2
AI_CHECKPOINT_RESUME=$ck/step-000120
AI_CHECKPOINT_SIGNAL=10
AI_CHECKPOINT_STEP=120" "$(cat "$WORK/ckpt.out")"
pass "options from SBATCH_/SALLOC_/SLURM_AI_*, DAG job $id placed by its compact DAG"
