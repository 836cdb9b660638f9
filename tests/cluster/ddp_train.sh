#!/usr/bin/env bash
# A real PyTorch data-parallel job (tests/trainer/ddp_trainer.py, gloo on CPU) launched by
# srun with only the suite's environment: 3 nodes, one task each, find each other through
# the MASTER_ADDR/MASTER_PORT/RANK/WORLD_SIZE the SPANK plugin gives them, and checkpoint
# into the job's --ai-checkpoint directory. Expected: the ranks are 0-2 on three nodes and
# agree on one rendezvous; every rank ends with the same parameters, and they equal, bit
# for bit, those of the same training in one process without Slurm (the fixed-point
# reduction makes the result independent of the world size); the checkpoints are complete
# and the last one holds the final parameters.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/../trainer/ddp_helpers.bash"
ddp_need_torch
t_begin=$SECONDS
trap 'show_on_failure $? "$MINICLUSTER_DIR" "$WORK/job.out"; cancel_named ddp-train' EXIT

out=$WORK/job.out
ck=$WORK/ckpt
steps=60
opts=(--steps $steps --seed 7 --every 20)
pace=(--step-ms 20)  # the job only: the pace changes nothing in the result
id=$(ddp_submit "$out" -J ddp-train -N3 --ai-checkpoint="$ck" -- "${opts[@]}" "${pace[@]}" --final "$WORK/final.pt")
ref=$(ddp_standalone "$WORK/alone.out" "$WORK/alone.pt" "${opts[@]}")
[ -n "$ref" ] || fail "the standalone run printed no digest: $(tail -n 3 "$WORK/alone.out")"
wait_job_gone "$id" 120
expect_eq "end state of job $id ($(grep -v ' step=' "$out" | tail -n 5))" COMPLETED "$(job_end_state "$id")"

resumes=$(grep -E ' resume step=' "$out" | sort -t= -k2 -n)
expect_eq "ranks (resume lines)" "0 1 2" "$(sed 's/.* rank=\([0-9]*\) .*/\1/' <<<"$resumes" | sort -n | xargs)"
expect_eq "distinct nodes of the ranks" 3 "$(grep -o ' node=[^ ]*' <<<"$resumes" | sort -u | grep -c .)"
expect_eq "world sizes" "3 3 3" "$(grep -o ' world=[0-9]*' <<<"$resumes" | cut -d= -f2 | xargs)"
expect_eq "rendezvous points" 1 "$(grep -o ' master=[^ ]*' <<<"$resumes" | sort -u | grep -c .)"
expect_eq "fresh start" 3 "$(grep -c ' step=0 from=scratch ' <<<"$resumes")"
expect_eq "ranks done" 3 "$(grep -c " done step=$steps " "$out")"
expect_eq "digest of every rank against one process without Slurm" "$ref" "$(ddp_digests "$out")"
ddp_same_params "$WORK/final.pt" "$WORK/alone.pt"

for k in 20 40 60; do
    [ -f "$ck/step-$(printf %08d $k)/COMPLETE" ] || fail "checkpoint of step $k missing or torn: $(ls -a "$ck")"
done
expect_eq "temporary checkpoints left" "" "$(find "$ck" -maxdepth 1 -name '.tmp-*')"
last=$("$DDP_PYTHON" -c 'import sys, torch
s = torch.load(sys.argv[1] + "/state.pt"); f = torch.load(sys.argv[2])
print(s["step"], torch.equal(s["params"], f["params"]))' "$ck/step-$(printf %08d $steps)" "$WORK/final.pt")
expect_eq "last checkpoint (step, holds the final parameters)" "$steps True" "$last"
master=$(grep -o ' master=[^ ]*' <<<"$resumes" | head -n1 | cut -d= -f2)
pass "3 ranks met at $master, $steps steps, digest ${ref:0:16} equals one process's ($((SECONDS - t_begin))s)"
