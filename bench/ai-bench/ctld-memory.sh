#!/usr/bin/env bash
# slurmctld's memory with the suite against stock select/cons_tres, measured in one run: a
# controller configured with N nodes (default 1,000: leaves of 32 under 8 spines, 4 GPUs
# each), started once with select/ai_cons_tres (its ai_select.conf naming the
# mini-cluster's node file for every host) and once with select/cons_tres, on the same
# slurm.conf otherwise. No slurmd runs: the nodes stay down, so what is measured is each
# controller with its configuration and the plugin's loaded model, not jobs. Prints VmRSS
# and RssAnon of both, the difference, and the ratio.
#
#   bench/ai-bench/ctld-memory.sh [N]
#
# Needs a build (tools/build.sh; BUILD_DIR names another one) and root.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
n=${1:-1000}
plugins=$(cd "${BUILD_DIR:-build}" 2>/dev/null && pwd)/plugins
[ -f "$plugins/select_ai_cons_tres.so" ] || { echo "ctld-memory: build first (tools/build.sh)" >&2; exit 1; }
base=$(mktemp -d /tmp/slurm-ai-mem.XXXXXX)
chmod 755 "$base"
pids=()
cleanup() {
    local p
    for p in "${pids[@]+"${pids[@]}"}"; do kill -TERM "$p" 2>/dev/null || true; done
    sleep 1
    for p in "${pids[@]+"${pids[@]}"}"; do kill -KILL "$p" 2>/dev/null || true; done
    rm -rf "$base"
}
trap cleanup EXIT

mkdir -p "$base/munge"
chmod 755 "$base/munge"
mungekey -c -k "$base/munge/munge.key" >/dev/null
chmod 600 "$base/munge/munge.key"
sock=$base/munge/munge.socket.2
munged --socket="$sock" --key-file="$base/munge/munge.key" --pid-file="$base/munge/munged.pid" \
    --log-file="$base/munge/munged.log" --seed-file="$base/munge/seed"
pids+=("$(cat "$base/munge/munged.pid")")

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# topology.conf: leaves of 32 nodes, spines of 8 leaves, one core.
topology() {
    local leaves=$(((n + 31) / 32)) l s first last
    for ((l = 0; l < leaves; l++)); do
        first=$((l * 32 + 1)); last=$(((l + 1) * 32 < n ? (l + 1) * 32 : n))
        echo "SwitchName=leaf$l Nodes=n[$first-$last]"
    done
    for ((s = 0; s * 8 < leaves; s++)); do
        last=$(((s + 1) * 8 - 1 < leaves - 1 ? (s + 1) * 8 - 1 : leaves - 1))
        echo "SwitchName=spine$s Switches=leaf[$((s * 8))-$last]"
    done
    echo "SwitchName=core Switches=spine[0-$(((leaves - 1) / 8))]"
}

# start_ctld NAME SELECT: prints the controller's pid once it answers.
start_ctld() {
    local d=$base/$1 port
    mkdir -p "$d/state" "$d/log"
    port=$(free_port)
    topology >"$d/topology.conf"
    echo "NodeTopology=$repo/tests/inputs/minicluster-node.xml" >"$d/ai_select.conf"
    : >"$d/plugstack.conf"
    : >"$d/gres.conf"
    cat >"$d/slurm.conf" <<EOF
ClusterName=mem$1
SlurmctldHost=$(hostname -s)(127.0.0.1)
SlurmctldPort=$port
SlurmUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$sock
PluginDir=$plugins:/usr/lib/x86_64-linux-gnu/slurm-wlm
PlugStackConfig=$d/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
MailProg=/bin/true
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=$2
SelectTypeParameters=CR_Core_Memory
GresTypes=gpu
TopologyPlugin=topology/tree
StateSaveLocation=$d/state
SlurmctldPidFile=$d/slurmctld.pid
SlurmctldLogFile=$d/log/slurmctld.log
SlurmctldDebug=verbose
MaxJobCount=100000
NodeName=n[1-$n] NodeAddr=127.0.0.1 CPUs=16 Boards=1 SocketsPerBoard=2 CoresPerSocket=8 ThreadsPerCore=1 RealMemory=16000 Gres=gpu:v100:4 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
    echo "NodeName=n[1-$n] Name=gpu Type=v100 Count=4" >"$d/gres.conf"
    setsid slurmctld -f "$d/slurm.conf" </dev/null >"$d/log/out" 2>&1
    for _ in $(seq 120); do
        SLURM_CONF=$d/slurm.conf timeout 10 scontrol ping 2>/dev/null | grep -c UP >/dev/null && break
        sleep 0.5
    done
    SLURM_CONF=$d/slurm.conf timeout 10 scontrol ping 2>/dev/null | grep -c UP >/dev/null ||
        { tail -n 20 "$d/log/slurmctld.log" >&2; echo "ctld-memory: $1's slurmctld does not answer" >&2; exit 1; }
    cat "$d/slurmctld.pid"
}

# rss PID: "VmRSS RssAnon" in KiB, after the controller settled.
rss() {
    awk '/^VmRSS:/ {r = $2} /^RssAnon:/ {a = $2} END {print r, a}' "/proc/$1/status"
}

declare -A RSS=() ANON=()
for kind in suite stock; do
    sel=select/cons_tres
    [ $kind = stock ] || sel=select/ai_cons_tres
    pid=$(start_ctld "$kind" "$sel")
    pids+=("$pid")
    sleep 5
    read -r RSS[$kind] ANON[$kind] < <(rss "$pid")
    if [ $kind = suite ]; then
        grep -c 'loaded .*ai_select.conf\|ai_cons_tres' "$base/suite/log/slurmctld.log" >/dev/null ||
            { echo "ctld-memory: the suite's plugin did not load" >&2; exit 1; }
    fi
    kill -TERM "$pid"
done
awk -v n="$n" -v rs="${RSS[suite]}" -v as="${ANON[suite]}" -v rb="${RSS[stock]}" -v ab="${ANON[stock]}" 'BEGIN {
    printf "slurmctld with %d nodes   %12s %12s\n", n, "VmRSS", "RssAnon"
    printf "%-26s %9.1f MiB %8.1f MiB\n", "select/ai_cons_tres", rs / 1024, as / 1024
    printf "%-26s %9.1f MiB %8.1f MiB\n", "select/cons_tres", rb / 1024, ab / 1024
    printf "%-26s %9.1f MiB %8.1f MiB\n", "difference", (rs - rb) / 1024, (as - ab) / 1024
    printf "suite/stock: VmRSS %.2fx, RssAnon %.2fx\n", rs / rb, as / ab
}'
