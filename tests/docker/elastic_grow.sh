#!/usr/bin/env bash
# An elastic job grows onto a host that did not exist when it started: the PyTorch
# trainer runs with --ai-elastic=2:5 on the four compute containers (c5 is in slurm.conf
# but its container is not started, so the node is down); then `docker-compose up -d c5`
# starts it. Expected: c5 registers and goes idle, ai-elasticd grows the job onto it, the
# job's view lists c5 in a new generation, the job's script restarts the step and the
# trainer's process group has the new world size (4, then 5); nothing committed is done
# again and the final parameters equal, bit for bit, those of one process.
source "$(dirname "$0")/lib.sh"
on_exit 'ctl scancel --name ddp-grow >/dev/null 2>&1'
[ "$(node_state c5)" != idle ] || fail "c5 is idle before its container started"

out=$HOST_DIR/job.out
steps=300
opts=(--steps $steps --seed 7 --every 50 --step-ms 100)
id=$(ddp_submit "$WORK/job.out" -J ddp-grow --ai-elastic=2:5:signal=USR2 --ai-checkpoint="$WORK/ckpt" -- \
    "${opts[@]}" --final "$WORK/final.pt")
runs_started() {
    local n
    n=$(grep -cE '^[0-9.]+ rank=0 .* resume step=' "$out" 2>/dev/null) || true
    [ "${n:-0}" -ge "$1" ]
}
nodes_are() { [ "$(job_field "$id" NumNodes)" = "$1" ]; }
wait_until 90 "job $id training" runs_started 1
expect_eq "nodes at the start" 4 "$(job_field "$id" NumNodes)"
view() { /usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["generation"], d["world_size"], ",".join(d["nodes"]))' \
    "$SLURM_AI_SHARED_DIR/ai_elastic/views/$id/view.json" 2>/dev/null; }
before=$(view) || true

t0=$SECONDS
dc up -d c5 >"$HOST_DIR/up-c5.log" 2>&1 || fail "docker-compose up -d c5: $(cat "$HOST_DIR/up-c5.log")"
wait_until 90 "job $id grown onto c5" nodes_are 5
echo "job $id on 5 nodes $((SECONDS - t0)) s after c5's container started"
wait_until 60 "the trainer's run on 5 nodes" runs_started 2
after=$(view)
[[ $after == *,c5* || $after == *" c5"* ]] || fail "the view does not list c5: '$after' (before: '$before')"
[ -z "$before" ] || [ "${after%% *}" -gt "${before%% *}" ] ||
    fail "the view's generation did not grow: '$before' -> '$after'"
wait_until 150 "job $id finished" job_gone "$id"

expect_eq "end state ($(grep ddp_job: "$out" | tail -n 3))" COMPLETED "$(job_end_state "$id")"
ref=$(ddp_standalone "$HOST_DIR/alone.out" "$WORK/alone.pt" "${opts[@]}")
j=$(analyse "$out")
expect_eq "trainer errors" "[]" "$(py "$j" 'd["errors"]')"
expect_eq "world sizes of the trainer's runs" "4 5" "$(ddp_worlds "$out")"
expect_eq "committed steps done again after the grow" 0 "$(py "$j" 'd["runs"][1]["lost"]')"
expect_eq "ranks done" 5 "$(grep -c " done step=$steps " "$out")"
expect_eq "digest of every rank against one process" "$ref" "$(ddp_digests "$out")"
ddp_same_params "$WORK/final.pt" "$WORK/alone.pt"
echo "view '$before' -> '$after'; grown at step $(py "$j" 'd["runs"][1]["resume_step"]'); digest ${ref:0:16} equals one process's"
