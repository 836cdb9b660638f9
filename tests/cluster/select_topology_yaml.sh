#!/usr/bin/env bash
# Slurm 25.05+'s topology.yaml with two topologies for two partitions, and --segment
# larger than a block, on two 16-node clusters of its own: the suite's (select/ai_cons_tres)
# and a stock one (select/cons_tres), both with the same topology.yaml: the cluster
# default a tree of two leaf switches of 8 nodes, and partition nvl's a block topology of
# 8 blocks of 2 nodes (block_sizes 2, 4, 8, 16), as GB200 racks cut in NVLink halves.
# - slurmctld gives partition nvl its topology, and the suite's plugin reads the file;
# - a hinted job of 6 nodes in the default partition stays under one leaf;
# - with n1 and n9 busy, 8 nodes in nvl in segments of 4 (each two blocks) run on the two
#   free aligned groups of 4, on both clusters; 8 nodes without segments need a whole free
#   group of 8 and wait, on both clusters, for the same reason.
# Skipped (77) before Slurm 25.05.
source "$(dirname "$0")/lib.sh"

repo=$(cd "$(dirname "$0")/../.." && pwd)
skip_before 25 05 'topology.yaml'
t0=$SECONDS
side_by_side yaml
declare -A LABEL=([A]="suite cluster (select/ai_cons_tres)" [B]="stock cluster (select/cons_tres)")

{
    echo "# Two topologies: the cluster's tree, and partition nvl's blocks."
    echo "- topology: fabric"
    echo "  cluster_default: true"
    echo "  tree:"
    echo "    switches:"
    echo "      - switch: spine"
    echo "        children: leaf[1-2]"
    echo "      - switch: leaf1"
    echo "        nodes: n[1-8]"
    echo "      - switch: leaf2"
    echo "        nodes: n[9-16]"
    echo "- topology: nvl"
    echo "  block:"
    echo "    block_sizes: [2, 4, 8, 16]"
    echo "    blocks:"
    for b in 1 2 3 4 5 6 7 8; do
        echo "      - block: half$b"
        echo "        nodes: n[$((2 * b - 1))-$((2 * b))]"
    done
} >"$WORK/topology.yaml"
common=(--nodes 16 --gpus 2 --topology-file "$WORK/topology.yaml"
        --extra-conf "PartitionName=nvl Nodes=ALL Topology=nvl MaxTime=INFINITE State=UP")
"$repo/tools/minicluster" up --dir "$base/suite" "${common[@]}" \
    --plugin-dir "$SLURM_AI_PLUGIN_DIR" --select select/ai_cons_tres \
    --spank "$SLURM_AI_PLUGIN_DIR/spank_ai.so" --extra-conf DebugFlags=SelectType \
    --ai-conf "NodeTopology=$repo/tests/inputs/minicluster-node.xml" >"$WORK/up-suite.log" 2>&1 ||
    fail "the suite's cluster did not come up: $(tail -n 20 "$WORK/up-suite.log")"
"$repo/tools/minicluster" up --dir "$base/stock" "${common[@]}" --select select/cons_tres \
    >"$WORK/up-stock.log" 2>&1 ||
    fail "the stock cluster did not come up: $(tail -n 20 "$WORK/up-stock.log")"
log=$base/suite/log/slurmctld.log

expect_contains "partition nvl" "$(on A scontrol show partition nvl)" "Topology=nvl"
grep -c "loaded .*ai_select.conf (fabric default .*/topology.yaml)" "$log" >/dev/null ||
    fail "the suite's plugin did not load topology.yaml: $(grep 'ai_cons_tres' "$log" | tail -n 5)"

# groups SIZE HOSTLIST: how many of the nodes each aligned group of SIZE nodes holds.
groups() {
    on A scontrol show hostnames "$2" | sed 's/^n//' |
        awk -v s="$1" '{g[int(($1 - 1) / s)]++} END {for (k in g) print g[k]}' | sort -n | paste -sd+
}
# wait_state CLUSTER ID STATE: until the job is in STATE (30 s).
wait_state() {
    for _ in $(seq 30); do
        [ "$(on "$1" squeue -h -j "$2" -o %T)" = "$3" ] && return 0
        sleep 1
    done
    fail "job $2 not $3 on the ${LABEL[$1]} after 30 s: $(on "$1" squeue -h -j "$2" -o '%T %r')"
}
nodes_of() { on "$1" scontrol show hostnames "$(on "$1" squeue -h -j "$2" -o %N)" | paste -sd,; }

# --- the default partition: the tree --------------------------------------------------
id=$(on A sbatch --parsable -N6 --ai-comm=allreduce:bytes=1G -o /dev/null --wrap='sleep 2')
wait_state A "$id" RUNNING
tree_nodes=$(on A squeue -h -j "$id" -o %N)
expect_eq "6 hinted nodes per leaf of 8 ($tree_nodes)" 6 "$(groups 8 "$tree_nodes")"
wait_job_gone "$id"

# --- partition nvl: blocks of 2, segments of 4 ------------------------------------------
declare -A SEG PLAIN REASON
for c in A B; do
    for n in n1 n9; do
        busy=$(on "$c" sbatch --parsable -p nvl -w "$n" --exclusive -J busy -o /dev/null \
               --wrap='sleep 300')
        wait_state "$c" "$busy" RUNNING
    done
    SEG[$c]=$(on "$c" sbatch --parsable -p nvl -N8 --segment=4 -o /dev/null \
              $([ "$c" = A ] && echo --ai-comm=allreduce:bytes=1G) --wrap='sleep 30')
    wait_state "$c" "${SEG[$c]}" RUNNING
    PLAIN[$c]=$(on "$c" sbatch --parsable -p nvl -N8 -o /dev/null --wrap='sleep 1')
done
sleep 5  # a scheduling pass for the waiting jobs
for c in A B; do
    expect_eq "8 nodes in segments of 4 on the ${LABEL[$c]}" "n5,n6,n7,n8,n13,n14,n15,n16" \
        "$(nodes_of "$c" "${SEG[$c]}")"
    expect_eq "8 nodes without segments on the ${LABEL[$c]}" PENDING \
        "$(on "$c" squeue -h -j "${PLAIN[$c]}" -o %T)"
    REASON[$c]=$(on "$c" squeue -h -j "${PLAIN[$c]}" -o %r)
done
expect_eq "the waiting job's reason, suite vs stock" "${REASON[B]}" "${REASON[A]}"
grep -c "JobId=${SEG[A]}.* ai: engine placed" "$log" >/dev/null ||
    fail "the engine did not place the hinted job ${SEG[A]} (slurmctld.log)"
pass "Slurm $SLURM_SERIES topology.yaml: tree for the default partition ($tree_nodes), blocks for nvl; 8 nodes in segments of 4 on n[5-8,13-16] as stock, 8 without segments wait as stock (${REASON[A]}) ($((SECONDS - t0))s)"
