#!/usr/bin/env bash
# contrib/slurm.conf.d/topology.conf, topology-block.conf, topology.yaml and gres.conf are
# what ai-topo makes from the real files of ../shared/data: the commands their headers give ("#   ai-topo ...", run from
# the source tree) print exactly the lines below the header. And Slurm reads the gres.conf
# as written: slurmd -G, for one node of each kind in it, reports every GPU with the
# Cores= and Links= of the file.
#
#   contrib_examples.sh SOURCE_DIR AI_TOPO
set -euo pipefail
# shellcheck disable=SC2034  # ai_topo is used by the eval of the header commands below
src=$1 ai_topo=$2
tmp=$(mktemp -d /tmp/slurm-ai-contrib.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cd "$src"

for f in topology.conf topology-block.conf topology.yaml gres.conf; do
    file=contrib/slurm.conf.d/$f
    mapfile -t cmds < <(sed -n 's/^#   \(ai-topo .*\)$/\1/p' "$file")
    [ ${#cmds[@]} -gt 0 ] || fail "$file names no ai-topo command in its header"
    # The header ends at the first blank line; the rest is the commands' output, one
    # blank line between two commands' outputs.
    sed '1,/^$/d' "$file" >"$tmp/$f.want"
    : >"$tmp/$f.got"
    for i in "${!cmds[@]}"; do
        [ "$i" = 0 ] || echo >>"$tmp/$f.got"
        eval "\"\$ai_topo\" ${cmds[$i]#ai-topo }" >>"$tmp/$f.got" ||
            fail "$file: '${cmds[$i]}' failed"
    done
    diff -u "$tmp/$f.want" "$tmp/$f.got" ||
        fail "$file is not the output of its header's commands (regenerate it with them)"
done

# slurmd reads the example gres.conf: one node of each kind, its GPUs as device files here.
mkdir -p "$tmp/dev" "$tmp/spool"
for i in $(seq 0 15); do mknod "$tmp/dev/nvidia$i" c 195 "$i"; done
sed "s|File=/dev/|File=$tmp/dev/|" contrib/slurm.conf.d/gres.conf >"$tmp/gres.conf"
check_node() {  # check_node NODE HOSTLIST_IN_GRES_CONF NODELINE_HARDWARE GRES
    local node=$1 lines
    lines=$(grep -v '^#' "$tmp/gres.conf" | grep -F "NodeName=$2 ")
    cat >"$tmp/slurm.conf" <<EOF
ClusterName=contrib
SlurmctldHost=localhost
SlurmdSpoolDir=$tmp/spool
SlurmdPidFile=$tmp/slurmd.pid
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SlurmdParameters=config_overrides
GresTypes=gpu
NodeName=$node $3 Gres=$4
PartitionName=p Nodes=ALL
EOF
    local out
    out=$(cd "$tmp" && slurmd -G -f "$tmp/slurm.conf" -N "$node" 2>&1) ||
        { echo "$out"; fail "slurmd -G refuses the example gres.conf for $node"; }
    # Cores= and Links= of each GPU, from the file's lines for this node and from slurmd.
    local want got
    cores_links() { awk '{ s = ""; for (i = 1; i <= NF; i++) if ($i ~ /^(Cores|Links)=/) s = s " " $i; print substr(s, 2) }'; }
    want=$(cores_links <<<"$lines")
    got=$(grep 'Gres Name=gpu' <<<"$out" | cores_links)
    [ "$(grep -c 'Gres Name=gpu' <<<"$out")" = "$(wc -l <<<"$lines")" ] ||
        { echo "$out"; fail "slurmd -G sees another GPU count for $node than gres.conf has"; }
    [ "$got" = "$want" ] ||
        { echo "$out"; fail "slurmd reads other Cores/Links for $node: got '$got', file says '$want'"; }
}
check_node dgx01 'dgx[01-04]' "CPUs=4 Boards=1 SocketsPerBoard=2 CoresPerSocket=2 ThreadsPerCore=1 RealMemory=1000" \
    gpu:tesla_v100-sxm3-32gb-h:16
check_node p8gpu1 'p8gpu[1-2]' "CPUs=16 Boards=1 SocketsPerBoard=2 CoresPerSocket=4 ThreadsPerCore=2 RealMemory=1000" \
    gpu:tesla_p100-sxm2-16gb:4
echo "PASS: contrib topology.conf and gres.conf are ai-topo's output; slurmd reads the gres.conf's Cores and Links"
