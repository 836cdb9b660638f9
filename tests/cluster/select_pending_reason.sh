#!/usr/bin/env bash
# A job the engine holds for locality gets an explanation in the cluster's own terms:
# with n1-n2 and n5-n6 busy (4 GPUs each), a 3-node job with 4 GPUs a node and
# --ai-locality=hard waits, and `ai-explain JOB` says it needs 3 such nodes in one leaf
# switch while the largest free is 2, that it fits when the busy job ending first ends,
# and that --ai-locality=soft would start it now. The select plugin's note of the job
# (its options, which slurmctld shows no client) goes once the job starts, and ai-metrics'
# map lists the job with the same explanation while it waits.
source "$(dirname "$0")/lib.sh"

t0=$SECONDS
jobs=()
cleanup() { for id in "${jobs[@]}"; do scancel "$id" 2>/dev/null || true; done; }
trap cleanup EXIT
first=$(sbatch --parsable -J pend-busy -w 'n[1-2]' -N2 --gpus-per-node=4 -t 5 -o /dev/null \
    --wrap='sleep 300')
second=$(sbatch --parsable -J pend-busy -w 'n[5-6]' -N2 --gpus-per-node=4 -t 10 -o /dev/null \
    --wrap='sleep 300')
jobs+=("$first" "$second")
for id in "$first" "$second"; do
    for _ in $(seq 30); do [ "$(squeue -h -j "$id" -o %T)" = RUNNING ] && break; sleep 1; done
    expect_eq "busy job $id" RUNNING "$(squeue -h -j "$id" -o %T)"
done
id=$(sbatch --parsable -J pend-held -N3 --gpus-per-node=4 --ai-locality=hard \
    --ai-comm=allreduce:bytes=1G -o /dev/null --wrap='sleep 1')
jobs+=("$id")
note=$STATE_DIR/ai_select/pending/$id.json
for _ in $(seq 40); do [ -s "$note" ] && break; sleep 0.5; done
[ -s "$note" ] || fail "the select plugin wrote no note for job $id ($note)"
expect_eq "job $id" PENDING "$(squeue -h -j "$id" -o %T)"

text=$("$SLURM_AI_BIN_DIR/ai-explain" "$id") || fail "ai-explain $id failed: $text"
expect_contains "ai-explain $id" "$text" "job $id: pending (Slurm: "
expect_contains "ai-explain $id" "$text" "hints:       comm allreduce"
expect_contains "ai-explain $id" "$text" "locality hard"
expect_contains "ai-explain $id" "$text" "needs 3 nodes with 4 free GPUs each (12 GPUs) in one leaf switch (--ai-locality=hard); the largest free is 2 nodes with 4 free GPUs each (8 GPUs), in leaf"
expect_contains "ai-explain $id" "$text" "when job $first ends"
expect_contains "ai-explain $id" "$text" "--ai-locality=soft: over 2 leaf switches"
"$SLURM_AI_BIN_DIR/ai-explain" --json "$id" >"$WORK/explain.json"
python3 - "$WORK/explain.json" "$first" <<'PY' || fail "ai-explain --json: $(cat "$WORK/explain.json")"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["state"] == "PENDING", j
assert j["hints"]["locality"]["mode"] == "hard", j["hints"]
assert j["frees_with_job"] == int(sys.argv[2]), j
assert j["frees_at"] > 0 and not j["fits_now"], j
assert any(s.startswith("--ai-locality=soft") for s in j["starts_now"]), j["starts_now"]
PY

# ai-metrics' map says the same beside the job.
"$SLURM_AI_BIN_DIR/ai-metrics" --once --map "$WORK/map.html" >/dev/null ||
    fail "ai-metrics --once failed"
python3 - "$WORK/map.html" "$id" <<'PY' || fail "the map does not explain job $id"
import re, sys
page = open(sys.argv[1]).read()
m = re.search(r'<li class="pending" data-job="%s">(.*?)</li>' % sys.argv[2], page, re.S)
assert m and "in one leaf switch" in m.group(1), m and m.group(1)
PY

# The first busy job ends: leaf1 has 4 free nodes and the job starts there; its note goes.
scancel "$first"
for _ in $(seq 30); do [ "$(squeue -h -j "$id" -o %T)" != PENDING ] && break; sleep 1; done
[ "$(squeue -h -j "$id" -o %T)" != PENDING ] || fail "job $id still pending after job $first ended"
for _ in $(seq 10); do [ -e "$note" ] || break; sleep 0.5; done
[ ! -e "$note" ] || fail "job $id started and its pending note is still there"
pass "job $id held for one leaf: ai-explain named the 2 free nodes of a leaf, job $first's end and --ai-locality=soft; it started when job $first ended ($((SECONDS - t0))s)"
