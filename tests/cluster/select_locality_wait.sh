#!/usr/bin/env bash
# A job that asks for a compact placement (--ai-locality=hard) waits while no leaf switch
# can take it, though enough nodes are free across leaves, and starts under one leaf as
# soon as one can. Its pending reason says why: from Slurm 26.05 slurmctld shows the text
# of the topology code the plugin answers with ("No suitable topology unit found", as
# topology/tree and topology/block say for their own refusals); before, Resources.
source "$(dirname "$0")/lib.sh"

t0=$SECONDS
busy=()
cleanup() { for id in "${busy[@]}"; do scancel "$id" 2>/dev/null || true; done; }
trap cleanup EXIT
# One busy node under each leaf of 4 (n1-n4, n5-n8): 6 nodes free, no leaf with 4.
for n in n1 n5; do
    busy+=("$(sbatch --parsable -w "$n" --exclusive -J busy -o /dev/null --wrap='sleep 300')")
done
for id in "${busy[@]}"; do
    for _ in $(seq 30); do [ "$(squeue -h -j "$id" -o %T)" = RUNNING ] && break; sleep 1; done
done
id=$(sbatch --parsable -N4 --ai-comm=allreduce:bytes=1G --ai-locality=hard -o /dev/null \
    --wrap='sleep 1')
busy+=("$id")
sleep 6  # scheduling passes, the main one and backfill's
expect_eq "the compact job while no leaf has 4 free nodes" PENDING "$(squeue -h -j "$id" -o %T)"
reason=$(squeue -h -j "$id" -o %r)
if slurm_at_least 26 5; then
    expect_eq "its pending reason (Slurm $SLURM_SERIES)" "No suitable topology unit found" "$reason"
else
    expect_eq "its pending reason (Slurm $SLURM_SERIES)" Resources "$reason"
fi
grep -c "JobId=$id.* waits: " "$MINICLUSTER_DIR/log/slurmctld.log" >/dev/null ||
    fail "slurmctld.log does not say why the engine holds job $id"

scancel "${busy[1]}"  # leaf 2 (n5-n8) frees
for _ in $(seq 30); do
    state=$(squeue -h -j "$id" -o %T)
    [ "$state" != PENDING ] && break
    sleep 1
done
nodes=$(squeue -h -j "$id" -o %N)
[ -n "$nodes" ] || nodes=$(sed -n "s/^JobId=$id .* NodeList=\([^ ]*\) .*/\1/p" \
    "$MINICLUSTER_DIR/log/jobcomp.log" | tail -n1)
expect_eq "the compact job's nodes once leaf 2 is free" "n[5-8]" "$nodes"
pass "a hard-locality job of 4 waited ($reason) with 6 nodes free across leaves, then ran on $nodes ($((SECONDS - t0))s)"
