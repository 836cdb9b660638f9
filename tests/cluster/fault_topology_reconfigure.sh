#!/usr/bin/env bash
# The topology files that ai_select.conf names (Fabric=, NodeTopology=) disappear or turn
# invalid, then `scontrol reconfigure`: slurmctld stays up, its log names the file and the
# error, and jobs are still placed by the engine on the last good model.
#
# The good model here is a fabric that differs from the cluster's own topology.conf (whose
# leaves are n[1-4] and n[5-8], as Slurm's topology/tree sees them): odd and even nodes on
# two leaves. A 3-node job placed on one leaf of the odd/even fabric shows that model is
# the one in force; cons_tres alone, or a model read from topology.conf, would not choose
# such nodes on an idle cluster.
source "$(dirname "$0")/lib.sh"
repo=$(cd "$(dirname "$0")/../.." && pwd)
conf=$MINICLUSTER_DIR/etc/ai_select.conf
ctld_log=$MINICLUSTER_DIR/log/slurmctld.log
fabric=$WORK/odd-even.topology.conf
node=$WORK/node.xml

cp "$conf" "$WORK/good.conf"
trap 'cp "$WORK/good.conf" "$conf"; scontrol reconfigure >/dev/null 2>&1 || true' EXIT
cat >"$fabric" <<'EOF'
SwitchName=odd Nodes=n[1,3,5,7] LinkSpeed=100
SwitchName=even Nodes=n[2,4,6,8] LinkSpeed=100
SwitchName=spine Switches=odd,even LinkSpeed=100
EOF
cp "$repo/tests/inputs/minicluster-node.xml" "$node"
{
    grep -viE '^(Fabric|NodeTopology)=' "$WORK/good.conf"
    echo "Fabric=$fabric"
    echo "NodeTopology=$node"
} >"$conf"

# reconfigure_expect WHAT PATTERN: reconfigures and waits for PATTERN in the new log lines.
reconfigure_expect() {
    local mark
    mark=$(wc -l <"$ctld_log")
    scontrol reconfigure || fail "$1: scontrol reconfigure failed"
    for _ in $(seq 40); do
        tail -n +"$((mark + 1))" "$ctld_log" | grep -c -- "$2" >/dev/null && break
        sleep 0.5
    done
    tail -n +"$((mark + 1))" "$ctld_log" | grep -c -- "$2" >/dev/null ||
        fail "$1: slurmctld.log has no line matching '$2' after the reconfigure: $(tail -n +"$((mark + 1))" "$ctld_log" | grep ai_cons_tres | tail -n 5)"
    scontrol ping | grep -c UP >/dev/null || fail "$1: slurmctld is not up after the reconfigure"
}

# placed_on_one_leaf WHAT: a 3-node job lands on the odd or the even leaf, by the engine.
placed_on_one_leaf() {
    local id nodes odd=0 even=0 n
    id=$(sbatch --parsable -N3 --gpus-per-node=1 --ai-comm=allreduce:bytes=1G -o /dev/null \
        --wrap='sleep 1')
    wait_job_gone "$id"
    expect_eq "$1: end state of job $id" COMPLETED "$(job_end_state "$id")"
    expect_eq "$1: policy that placed job $id" engine \
        "$(json_get "$STATE_DIR/ai_select/jobs/$id.json" decision.policy)"
    nodes=$(json_get "$STATE_DIR/ai_select/jobs/$id.json" nodes)
    for n in $(scontrol show hostnames "$nodes"); do
        if [ $((${n#n} % 2)) = 1 ]; then odd=$((odd + 1)); else even=$((even + 1)); fi
    done
    [ $odd = 0 ] || [ $even = 0 ] ||
        fail "$1: job $id got $nodes, across the odd and even leaves: the odd/even model is not in force"
    echo "$nodes"
}

reconfigure_expect "the good model" "loaded $conf"
first=$(placed_on_one_leaf "the good model")

# The node file disappears.
mv "$node" "$node.gone"
reconfigure_expect "node file removed" "$conf: .*node.xml"
placed_on_one_leaf "node file removed" >/dev/null
mv "$node.gone" "$node"

# The fabric turns invalid: line 2 names a switch that is never defined.
cp "$fabric" "$fabric.good"
printf 'SwitchName=odd Nodes=n[1,3,5,7]\nSwitchName=spine Switches=odd,nowhere\n' >"$fabric"
reconfigure_expect "fabric invalid" "odd-even.topology.conf:2: "
placed_on_one_leaf "fabric invalid" >/dev/null

# The fabric disappears.
rm -f "$fabric"
reconfigure_expect "fabric removed" "$conf: .*odd-even.topology.conf"
placed_on_one_leaf "fabric removed" >/dev/null

# Back to a good file: it is read again.
mv "$fabric.good" "$fabric"
reconfigure_expect "fabric back" "loaded $conf"
placed_on_one_leaf "fabric back" >/dev/null
pass "removed node file, invalid and removed fabric each reported; jobs kept the odd/even model (first on $first)"
