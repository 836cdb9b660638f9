#!/usr/bin/env bash
# A second mini-cluster comes up beside the test cluster without colliding (ports,
# directories, munge socket, cluster name), both run jobs, and taking the second one
# down leaves the first untouched.
source "$(dirname "$0")/lib.sh"

repo=$(cd "$(dirname "$0")/../.." && pwd)
second=$(mktemp -d /tmp/slurm-ai-second.XXXXXX)
rmdir "$second"
trap '"$repo/tools/minicluster" down --dir "$second" >/dev/null 2>&1 || true' EXIT

"$repo/tools/minicluster" up --dir "$second" --nodes 2 --gpus 0 >"$WORK/up.log" 2>&1 ||
    fail "second cluster did not come up: $(tail -n 20 "$WORK/up.log")"
first_port=$(sed -n 's/^port_base=//p' "$MINICLUSTER_DIR/cluster.info")
second_port=$(sed -n 's/^port_base=//p' "$second/cluster.info")
[ "$first_port" != "$second_port" ] || fail "both clusters use port base $first_port"

out2=$(SLURM_CONF=$second/etc/slurm.conf srun -N2 bash -c 'echo $SLURMD_NODENAME' | sort | tr '\n' ' ')
expect_eq "srun on the second cluster" "n1 n2 " "$out2"
out1=$(srun -N3 bash -c 'echo $SLURMD_NODENAME' | sort -u | grep -c .)
expect_eq "nodes answering on the first cluster" 3 "$out1"
name1=$(scontrol show config | awk -F' = ' '$1 ~ /^ClusterName/ {print $2}')
name2=$(SLURM_CONF=$second/etc/slurm.conf scontrol show config | awk -F' = ' '$1 ~ /^ClusterName/ {print $2}')
[ "$name1" != "$name2" ] || fail "both clusters are named $name1"

"$repo/tools/minicluster" down --dir "$second" >/dev/null 2>&1
[ ! -e "$second" ] || fail "down left $second behind"
pgrep -f "$second/etc/slurm.conf" >/dev/null && fail "daemons of $second survived down"
expect_eq "first cluster after the second went down" 3 \
    "$(srun -N3 bash -c 'echo $SLURMD_NODENAME' | sort -u | grep -c .)"
pass "ports $first_port and $second_port, clusters $name1 and $name2"
