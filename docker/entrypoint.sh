#!/usr/bin/env bash
# The mini-cluster image's entrypoint: one controller container and compute containers
# c1..cN (docker/compose.yaml) that share a munge key and /etc/slurm through volumes.
#
#   entrypoint.sh controller   make the munge key (first start), write the configuration
#                              into /etc/slurm, run munged, slurmctld, ai-recover (the
#                              node-down trigger and its watch loop), ai-elasticd,
#                              ai-metrics (:9780) and Debian's Prometheus (:9090)
#                              scraping it; the container ends when slurmctld does
#   entrypoint.sh compute      wait for the key and the configuration, create the
#                              emulated GPUs, run munged, the lease agent ai-lease and
#                              slurmd -N $(hostname)
#   entrypoint.sh render       only write the configuration (build-image.sh check runs it
#                              on the CI host)
#   entrypoint.sh health       the controller's health check: every compute node c1..cN
#                              (not the spares) is idle
#   entrypoint.sh CMD ARGS...  anything else runs as a command (e.g. bash)
#
# The configuration is the one docs/admin-guide.md gives an admin: slurm.conf Includes
# the installed /usr/share/slurm-ai/slurm.conf.d/ai-suite.conf (a copy, with backfill
# every second), plugstack.conf includes
# the installed plugstack.conf.d/ai.conf, ai_select.conf is the installed example plus the
# nodes' topology, and `ai-topo gres-conf` writes gres.conf (with NVLink Links=) from that
# topology. The daemon settings for containers without systemd or cgroups are those of
# tools/minicluster: root daemons, proctrack/linuxproc, task/none, GPUs as device files
# (major 195) that nothing opens.
#
# Environment:
#   SLURM_AI_COMPUTE_NODES  compute containers c1..cN (default 2): the same N as compose.yaml
#   SLURM_AI_SPARE_NODES    nodes c(N+1).. that slurm.conf lists but whose containers start
#                           later, to grow onto (default 0; compose.yaml's profile spare)
#   SLURM_AI_SHARED_DIR     the folder every container mounts (default /shared): elastic
#                           views, checkpoints and job output live there
#   SLURM_AI_NODE_XML       topology of every compute node (default /opt/slurm-ai/node.xml,
#                           the tests' 4-GPU node: GPU pairs 0-1 and 2-3 NVLinked)
#   SLURM_AI_CONF_DIR       shared configuration directory (default /etc/slurm)
#   SLURM_AI_MUNGE_SHARED   shared directory of the munge key (default /etc/munge-shared)
#   SLURM_AI_DEV_DIR        where the emulated GPUs are created (default /dev)
#   SLURM_AI_ROOT           where the suite is installed (default /; `check` on a host
#                           installs it into a fresh root)
set -euo pipefail

PROG=entrypoint
log() { printf '%s: %s\n' "$PROG" "$*" >&2; }
die() { printf '%s: error: %s\n' "$PROG" "$*" >&2; exit 1; }

N=${SLURM_AI_COMPUTE_NODES:-2}
SPARE=${SLURM_AI_SPARE_NODES:-0}
SHARED_DIR=${SLURM_AI_SHARED_DIR:-/shared}
NODE_XML=${SLURM_AI_NODE_XML:-/opt/slurm-ai/node.xml}
CONF_DIR=${SLURM_AI_CONF_DIR:-/etc/slurm}
SHARED=${SLURM_AI_MUNGE_SHARED:-/etc/munge-shared}
DEV=${SLURM_AI_DEV_DIR:-/dev}
R=${SLURM_AI_ROOT:-}
R=${R%/}
EXAMPLES=$R/usr/share/slurm-ai/slurm.conf.d
DEBIAN_PLUGIN_DIR=/usr/lib/x86_64-linux-gnu/slurm-wlm
CONTROLLER=controller
GPU_TYPE=v100
READY=$CONF_DIR/.rendered   # written last: computes start once it exists

[[ $N =~ ^[1-9][0-9]*$ ]] || die "SLURM_AI_COMPUTE_NODES='$N': expected a positive integer"
[[ $SPARE =~ ^[0-9]+$ ]] || die "SLURM_AI_SPARE_NODES='$SPARE': expected 0 or a positive integer"
ALL=$((N + SPARE))
nodelist() { if [ "$1" = 1 ]; then echo c1; else echo "c[1-$1]"; fi; }
NODES=$(nodelist "$ALL")     # every node slurm.conf lists
STARTED=$(nodelist "$N")     # the nodes whose containers compose starts at once

# ---------------------------------------------------------------------------------------
render() {
  [ -f "$EXAMPLES/ai-suite.conf" ] || die "$EXAMPLES/ai-suite.conf missing: is the suite installed?"
  [ -f "$NODE_XML" ] || die "SLURM_AI_NODE_XML=$NODE_XML: no such file"
  rm -f "$READY"
  mkdir -p "$CONF_DIR/plugstack.conf.d"

  # The installed ai-suite.conf, with backfill every second (tests should not wait half a
  # minute for a start) and, installed under a root, the plugins there and Debian's
  # cons_tres on the host. A copy: Slurm logs a key set twice as an error.
  local suite=$CONF_DIR/ai-suite.conf plugin_dir=$DEBIAN_PLUGIN_DIR
  [ -z "$R" ] || plugin_dir=$R$DEBIAN_PLUGIN_DIR:$DEBIAN_PLUGIN_DIR
  sed -e "s|^PluginDir=.*|PluginDir=$plugin_dir|" \
      -e "s|^SchedulerParameters=.*|&,bf_interval=1,bf_resolution=60,sched_min_interval=100000|" \
      "$EXAMPLES/ai-suite.conf" >"$suite"

  local gpus
  gpus=$("$R/usr/bin/ai-topo" gres-conf --json "$NODE_XML" |
         sed -n 's/^ *"gpus": *\([0-9]*\).*/\1/p')
  [[ $gpus =~ ^[1-9][0-9]*$ ]] || die "ai-topo finds no GPUs in $NODE_XML"
  "$R/usr/bin/ai-topo" gres-conf --nodes "$NODES" --type "$GPU_TYPE" \
    --file "$DEV/nvidia%d" -o "$CONF_DIR/gres.conf" "$NODE_XML" >/dev/null

  cat >"$CONF_DIR/slurm.conf" <<EOF
# Written by docker/entrypoint.sh for $N compute containers and $SPARE spare ones;
# rewritten at every start.
ClusterName=slurmai
SlurmctldHost=$CONTROLLER
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
# No cgroups and no systemd in the containers.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
MailProg=/bin/true
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=/var/log/slurm/jobcomp.log
DefMemPerCPU=1000
SchedulerType=sched/backfill
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
# No log files: the daemons run in the foreground and log to the container's output.
SlurmctldDebug=verbose
SlurmdDebug=verbose
ReturnToService=2
SlurmdParameters=config_overrides
# A container that comes back may have another address: look names up every time.
CommunicationParameters=NoAddrCache
# Failures found within seconds (contrib/slurm.conf.d/checkpoint.conf explains the pair).
SlurmdTimeout=15
MessageTimeout=5
KillWait=5
InactiveLimit=0
MinJobAge=600

# The suite, as an admin enables it (the installed ai-suite.conf: JobRequeue=1 too).
Include $suite

NodeName=$NODES CPUs=16 Boards=1 SocketsPerBoard=2 CoresPerSocket=8 ThreadsPerCore=1 RealMemory=16000 Gres=gpu:$GPU_TYPE:$gpus State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF

  # Leaf switches of two nodes under one spine, so that placement has a choice.
  local leaves=$(((ALL + 1) / 2)) i f="$CONF_DIR/topology.conf"
  echo "# Written by docker/entrypoint.sh: leaves of two compute containers, one spine." >"$f"
  for ((i = 1; i <= leaves; i++)); do
    if [ $((2 * i)) -le "$ALL" ]; then
      echo "SwitchName=leaf$i Nodes=c[$((2 * i - 1))-$((2 * i))]" >>"$f"
    else
      echo "SwitchName=leaf$i Nodes=c$((2 * i - 1))" >>"$f"
    fi
  done
  if [ "$leaves" = 1 ]; then echo "SwitchName=spine Switches=leaf1" >>"$f"
  else echo "SwitchName=spine Switches=leaf[1-$leaves]" >>"$f"; fi

  { cat "$EXAMPLES/ai_select.conf"
    echo
    echo "# Added by docker/entrypoint.sh: every compute container has this topology."
    echo "NodeTopology=$NODE_XML"
    echo "# Elastic views where every node sees them."
    echo "ElasticViewDir=$SHARED_DIR/ai_elastic/views"
    echo "# Short elastic timers, as on the loopback mini-cluster's tests."
    echo "ElasticInterval=1"
    echo "ElasticGrowCooldown=2s"
    echo "ElasticGrowTimeout=30s"
    echo "# Grow whenever nodes are idle (docker.elastic_grow checks the mechanics of a grow;"
    echo "# cluster.elastic_goodput checks the goodput rule)."
    echo "ElasticPolicy=priority"
    echo "# Elastic jobs start as large as fits (docker.elastic_grow counts from MAX)."
    echo "ElasticStart=max"
    echo "# The leases at their defaults (LeasePeriod=1s, LeaseFence=2s, LeaseLapse=3s), but"
    echo "# fenced tasks killed sooner, so that docker.node_netcut need not wait 30 s; and"
    echo "# every node's health events in a file a test can write to."
    echo "LeaseKill=10s"
    echo "HealthEventFile=/var/log/slurm/xid.log"
  } >"$CONF_DIR/ai_select.conf"

  echo "include $CONF_DIR/plugstack.conf.d/*.conf" >"$CONF_DIR/plugstack.conf"
  sed -E "s#^(required|optional) (/[^ ]*)#\1 $R\2#" "$EXAMPLES/plugstack.conf.d/ai.conf" \
    >"$CONF_DIR/plugstack.conf.d/ai.conf"

  date -u +%FT%TZ >"$READY"
  log "configuration for $NODES ($gpus GPUs each) in $CONF_DIR"
}

# ---------------------------------------------------------------------------------------
wait_for() {  # wait_for FILE WHAT
  local t=0
  until [ -s "$1" ]; do
    [ $t -lt 120 ] || die "no $2 ($1) after 120s: is the controller running?"
    t=$((t + 1)); sleep 1
  done
}

start_munged() {
  install -d -o munge -g munge -m 0700 /etc/munge
  install -o munge -g munge -m 0400 "$SHARED/munge.key" /etc/munge/munge.key
  install -d -o munge -g munge -m 0755 /run/munge
  install -d -o munge -g munge -m 0700 /var/log/munge /var/lib/munge
  # --force: a restarted container still holds the socket of its last run.
  runuser -u munge -- /usr/sbin/munged --force
  munge -n | unmunge >/dev/null || die "munged runs but a credential does not round-trip"
}

controller() {
  mkdir -p "$SHARED"
  if [ ! -s "$SHARED/munge.key" ]; then
    mungekey -c -k "$SHARED/munge.key.new"
    mv "$SHARED/munge.key.new" "$SHARED/munge.key"
    log "made the cluster's munge key"
  fi
  start_munged
  render
  mkdir -p /var/spool/slurmctld /var/log/slurm "$SHARED_DIR"
  export SLURM_CONF=$CONF_DIR/slurm.conf
  slurmctld -D -f "$SLURM_CONF" &
  local ctld=$! t=0 others=()
  # docker stop: slurmctld saves its state on SIGTERM; the helpers just end.
  trap 'kill -TERM $ctld "${others[@]}" 2>/dev/null' TERM INT
  until scontrol ping >/dev/null 2>&1; do
    kill -0 $ctld 2>/dev/null || { wait $ctld; die "slurmctld ended before it answered"; }
    [ $t -lt 120 ] || die "slurmctld does not answer after 60 s"
    t=$((t + 1)); sleep 0.5
  done
  # ai-recover: the node-down trigger. Slurm keeps PERM triggers in its saved state, so a
  # restarted controller has it already.
  local prog="/usr/bin/ai-recover --conf $SLURM_CONF --grace 10 node-down"
  strigger --get --node --down 2>/dev/null | grep -qF "$prog" ||
    strigger --set --node --down --flags=PERM --program="$prog" >/dev/null ||
    die "strigger --set failed for $prog"
  /usr/bin/ai-recover --conf "$SLURM_CONF" --grace 10 watch --interval 2 &
  others+=($!)
  /usr/bin/ai-elasticd --slurm-conf "$SLURM_CONF" \
    --state /var/spool/slurmctld/ai_elastic/elasticd.json --interval 1 &
  others+=($!)
  /usr/bin/ai-metrics --slurm-conf "$SLURM_CONF" --listen :9780 &
  others+=($!)
  prometheus_for_metrics &
  others+=($!)
  log "slurmctld, ai-recover, ai-elasticd, ai-metrics and Prometheus run"
  local rc=0
  wait $ctld || rc=$?
  kill -TERM "${others[@]}" 2>/dev/null || true
  exit $rc
}

# Debian's Prometheus, scraping ai-metrics every second (what a site's would do every
# 30 s), its data in the container: the rig's check that the figures reach Prometheus.
prometheus_for_metrics() {
  local dir=/var/lib/slurm-ai-prometheus
  mkdir -p "$dir"
  cat >"$dir/prometheus.yml" <<'YAML'
global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: slurm_ai
    static_configs: [{targets: ['localhost:9780']}]
YAML
  exec prometheus --config.file="$dir/prometheus.yml" --storage.tsdb.path="$dir/data" \
    --web.listen-address=:9090 >/var/log/slurm/prometheus.log 2>&1
}

# Healthy: every node whose container starts with the cluster answers and is idle.
health() {
  local states
  states=$(sinfo -h -N -n "$STARTED" -o %T 2>/dev/null | sort -u) || return 1
  [ "$states" = idle ]
}

compute() {
  local node i gpus
  node=$(hostname -s)
  wait_for "$SHARED/munge.key" "munge key"
  wait_for "$READY" "configuration"
  start_munged
  gpus=$(grep -c "^NodeName=.* File=" "$CONF_DIR/gres.conf" || true)
  for ((i = 0; i < gpus; i++)); do
    [ -e "$DEV/nvidia$i" ] || mknod "$DEV/nvidia$i" c 195 "$i"
  done
  mkdir -p /var/spool/slurmd /var/log/slurm
  # The lease agent, as contrib/systemd/ai-lease.service runs it: its output joins slurmd's
  # in the container's log.
  /usr/bin/ai-lease --conf "$CONF_DIR/slurm.conf" run --node "$node" &
  exec slurmd -D -f "$CONF_DIR/slurm.conf" -N "$node"
}

case ${1:-} in
  controller) controller ;;
  compute) compute ;;
  render) render ;;
  health) health ;;
  "") die "expected controller, compute, render, health or a command" ;;
  *) exec "$@" ;;
esac
