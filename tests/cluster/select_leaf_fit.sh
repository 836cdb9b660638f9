#!/usr/bin/env bash
# With an occupancy built to show it, a job fits in one leaf switch where stock
# cons_tres splits it across leaves. The admin prefers nodes n1, n2, n5 and n6 (lower
# Weight): stock Slurm takes the preferred nodes first, across both leaves; the suite
# keeps the job under one leaf and uses Weight only to choose within it.
source "$(dirname "$0")/lib.sh"

repo=$(cd "$(dirname "$0")/../.." && pwd)
stock=$(mktemp -d /tmp/slurm-ai-stock-leaf.XXXXXX)
rmdir "$stock"
restore_weights() {
    scontrol update NodeName=n[3-4,7-8] Weight=1 >/dev/null 2>&1 || true
    "$repo/tools/minicluster" down --dir "$stock" >/dev/null 2>&1 || true
}
trap restore_weights EXIT
"$repo/tools/minicluster" up --dir "$stock" --nodes 8 --gpus 4 --select select/cons_tres \
    >"$WORK/up.log" 2>&1 || fail "stock cluster did not come up: $(tail -n 20 "$WORK/up.log")"

leaves_of() {  # number of leaf switches (n1-n4 = leaf1, n5-n8 = leaf2) in a node list
    scontrol show hostnames "$1" | sed 's/^n//' | awk '{print ($1 <= 4) ? 1 : 2}' | sort -u | grep -c .
}

run_on() {  # run_on CONF: submits the 3-node job, prints its node list
    local id
    SLURM_CONF=$1 scontrol update NodeName=n[3-4,7-8] Weight=10
    # It runs until cancelled: a job that ends by itself can end between two looks of a
    # loaded machine, and then its nodes are never seen.
    id=$(SLURM_CONF=$1 sbatch --parsable -N3 -o /dev/null --wrap='sleep 300')
    for _ in $(seq 30); do
        nodes=$(SLURM_CONF=$1 squeue -h -j "$id" -t R -o %N)
        [ -n "$nodes" ] && break
        sleep 1
    done
    SLURM_CONF=$1 scancel "$id"
    SLURM_CONF=$1 wait_job_gone "$id"
    echo "$nodes"
}

suite_nodes=$(run_on "$SLURM_CONF")
stock_nodes=$(run_on "$stock/etc/slurm.conf")
[ -n "$suite_nodes" ] || fail "the job never ran on the suite's cluster"
[ -n "$stock_nodes" ] || fail "the job never ran on the stock cluster"
expect_eq "leaves used by stock cons_tres ($stock_nodes)" 2 "$(leaves_of "$stock_nodes")"
expect_eq "leaves used by the suite ($suite_nodes)" 1 "$(leaves_of "$suite_nodes")"
# Within the leaf the preferred nodes come first.
expect_contains "suite nodes" "$(scontrol show hostnames "$suite_nodes" | tr '\n' ' ')" "n1 n2"
pass "stock: $stock_nodes (2 leaves), suite: $suite_nodes (1 leaf)"
