#!/usr/bin/env bash
# Slurm's block topology (topology/block, 23.11+) and --segment with the suite's select
# plugin, on two 8-node clusters of its own with blocks of 4 nodes (BlockSizes=4,8): the
# suite's (select/ai_cons_tres, its fabric a tree of the same groups) and a stock one
# (select/cons_tres). Jobs without hints, each on idle clusters, get the same shape on
# both: the same node count and the same spread over blocks (2 nodes in one block, 4 as
# one whole block, --segment=2 as segments of 2 inside blocks, 6 as a block and a
# segment). Jobs with --ai-comm hints obey the same block rules, and the log says how
# many of them cons_tres and topology/block took on exactly the engine's nodes (the
# figure docs/design.md's entry-point decision quotes). Skipped (77) before Slurm 23.11.
source "$(dirname "$0")/lib.sh"

repo=$(cd "$(dirname "$0")/../.." && pwd)
skip_before 23 11 'topology/block'
t0=$SECONDS

side_by_side block
declare -A LABEL=([A]="suite cluster (select/ai_cons_tres, topology/block)"
                  [B]="stock cluster (select/cons_tres, topology/block)")

# The engine's fabric: the blocks as leaf switches under one spine.
printf '%s\n' "SwitchName=leaf1 Nodes=n[1-4]" "SwitchName=leaf2 Nodes=n[5-8]" \
    "SwitchName=spine Switches=leaf[1-2]" >"$WORK/fabric.conf"
"$repo/tools/minicluster" up --dir "$base/suite" --nodes 8 --topology block \
    --plugin-dir "$SLURM_AI_PLUGIN_DIR" --select select/ai_cons_tres \
    --spank "$SLURM_AI_PLUGIN_DIR/spank_ai.so" --extra-conf DebugFlags=SelectType \
    --ai-conf "NodeTopology=$repo/tests/inputs/minicluster-node.xml" \
    --ai-conf "Fabric=$WORK/fabric.conf" >"$WORK/up-suite.log" 2>&1 ||
    fail "the suite's block cluster did not come up: $(tail -n 20 "$WORK/up-suite.log")"
"$repo/tools/minicluster" up --dir "$base/stock" --nodes 8 --topology block \
    --select select/cons_tres >"$WORK/up-stock.log" 2>&1 ||
    fail "the stock block cluster did not come up: $(tail -n 20 "$WORK/up-stock.log")"
expect_eq "TopologyPlugin of the suite's cluster" topology/block \
    "$(on A scontrol show config | sed -n 's/^TopologyPlugin *= *//p')"

# blocks HOSTLIST: how many of the job's nodes each block holds, sorted ("2+2", "4").
blocks() {
    on A scontrol show hostnames "$1" | sed 's/^n//' |
        awk '{b[int(($1 - 1) / 4)]++} END {for (k in b) print b[k]}' | sort -n | paste -sd+
}
# run CLUSTER SBATCH_ARGS...: submits, waits until the job has left the queue, prints
# "STATE NODES BLOCKS" (BLOCKS as blocks() says).
run() {
    local c=$1 id record state nodes t=0
    shift
    id=$(on "$c" sbatch --parsable -o /dev/null "$@" --wrap='hostname; sleep 1' 2>&1) ||
        fail "sbatch $* refused on the ${LABEL[$c]}: $id"
    while on "$c" squeue -h -j "$id" -o %i 2>/dev/null | grep . >/dev/null; do
        sleep 1
        t=$((t + 1))
        [ $t -lt 60 ] || fail "job $id ($*) still queued after 60 s on the ${LABEL[$c]}: $(on "$c" squeue -h -j "$id" -o '%T %r')"
    done
    record=$(on "$c" scontrol -o show job "$id")
    state=$(sed -n 's/.* JobState=\([A-Z_]*\) .*/\1/p' <<<"$record")
    nodes=$(sed -n 's/.* NodeList=\([^ ]*\) .*/\1/p' <<<"$record")
    echo "$state $(on "$c" scontrol show hostnames "$nodes" | wc -l) $(blocks "$nodes")"
}

# --- jobs without hints: the same shape as stock -----------------------------------------
declare -A WANT=(["-N2"]="COMPLETED 2 2" ["-N4"]="COMPLETED 4 4"
                 ["-N4 --segment=2"]="COMPLETED 4 2+2"
                 ["-N4 --segment=2 --gpus-per-node=2"]="COMPLETED 4 2+2"
                 ["-N6 --segment=2"]="COMPLETED 6 2+4")
shapes=()
for args in "-N2" "-N4" "-N4 --segment=2" "-N4 --segment=2 --gpus-per-node=2" "-N6 --segment=2"; do
    read -r -a a <<<"$args"
    got_b=$(run B "${a[@]}")
    got_a=$(run A "${a[@]}")
    [ "$got_a" = "$got_b" ] ||
        fail "$args: '$got_a' on the ${LABEL[A]} vs '$got_b' on the ${LABEL[B]} (state, nodes, nodes per block)"
    # A segment of 2 may also share a block with the other: 4 in one block is 2+2 too.
    case "$args:$got_b" in
        *--segment=2*:"COMPLETED 4 4" | *--segment=2*:"COMPLETED 6 2+4") ;;
        *) [ "$got_b" = "${WANT[$args]}" ] ||
            fail "$args: stock Slurm gave '$got_b', expected '${WANT[$args]}' (the test's blocks are not what it thinks)" ;;
    esac
    shapes+=("$args: ${got_b#COMPLETED }")
done

# --- jobs with hints: the block rules hold, and how often the engine's nodes were kept -
hinted=0
for args in "-N4 --ai-comm=allreduce:bytes=1G" "-N2 --gpus-per-node=2 --ai-comm=allreduce:bytes=1G" \
    "-N4 --segment=2 --ai-comm=allreduce:bytes=1G" "-N3 --ai-comm=allreduce:bytes=256M" \
    "-N8 --segment=4 --ai-comm=allreduce:bytes=1G"; do
    read -r -a a <<<"$args"
    got=$(run A "${a[@]}")
    read -r state n b <<<"$got"
    expect_eq "$args: end state" COMPLETED "$state"
    case $args in
        -N4\ --segment=2*) [[ $b == 2+2 || $b == 4 ]] || fail "$args: segments of 2 broken: nodes per block $b" ;;
        -N8*) expect_eq "$args: nodes per block" 4+4 "$b" ;;
        -N3*) expect_eq "$args: nodes per block (3 fit one block of 4)" 3 "$b" ;;
        *) expect_eq "$args: nodes per block" "$n" "$b" ;;
    esac
    hinted=$((hinted + 1))
done
# Jobs (a job is tested more than once) whose test kept the engine's nodes ("ai: engine
# placed ..."), widened them (the refusal), or left the job to plain cons_tres.
log=$base/suite/log/slurmctld.log
jobs_with() { { grep -o "JobId=[0-9]*:* $1" "$log" || true; } | cut -d' ' -f1 | sort -u | wc -l; }
kept=$(jobs_with 'ai: engine placed')
widened=$(jobs_with "cons_tres refused the engine's nodes")
plain=$(jobs_with 'placed by plain cons_tres')
[ $((kept + widened)) -ge "$hinted" ] ||
    fail "the engine placed $((kept + widened)) of the $hinted hinted jobs (plain cons_tres: $plain; slurmctld.log)"
pass "Slurm $SLURM_SERIES topology/block: ${shapes[*]} as stock; $hinted hinted jobs in blocks; of the $((hinted + ${#shapes[@]})) jobs of the suite's cluster, cons_tres and topology/block kept the engine's nodes for $kept, widened them for $widened, plain cons_tres for $plain ($((SECONDS - t0))s)"
