#!/usr/bin/env bash
# Values given to sbatch travel in the job's SPANK environment to slurmctld, where the
# select plugin parses them and records them in its per-job record.
source "$(dirname "$0")/lib.sh"

id=$(sbatch --parsable -N2 --ai-comm=pipeline:stages=4,bytes=64M --ai-elastic=2:6 \
    --ai-locality=soft:5m -o /dev/null --wrap='sleep 1')
wait_job_gone "$id"
rec="$STATE_DIR/ai_select/jobs/$id.json"
[ -f "$rec" ] || fail "the select plugin wrote no record $rec"
expect_eq "job id in record" "$id" "$(json_get "$rec" job_id)"
expect_eq "pattern" pipeline "$(json_get "$rec" hints.comm.pattern)"
expect_eq "stages" 4 "$(json_get "$rec" hints.comm.stages)"
expect_eq "bytes" $((64 << 20)) "$(json_get "$rec" hints.comm.bytes)"
expect_eq "elastic max" 6 "$(json_get "$rec" hints.elastic.max_nodes)"
expect_eq "locality wait" 300 "$(json_get "$rec" hints.locality.wait_s)"
expect_eq "hint errors" "[]" "$(json_get "$rec" hint_errors)"
expect_eq "nodes in record" "$(sed -n "s/^JobId=$id .*NodeList=\([^ ]*\).*/\1/p" \
    "$MINICLUSTER_DIR/log/jobcomp.log")" "$(json_get "$rec" nodes)"

# A job without hints is recorded with none.
id2=$(sbatch --parsable -o /dev/null --wrap=true)
wait_job_gone "$id2"
expect_eq "hints of a plain job" "{}" "$(json_get "$STATE_DIR/ai_select/jobs/$id2.json" hints)"
pass "job $id: $(json_get "$rec" hints)"
