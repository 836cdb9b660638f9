#!/usr/bin/env bash
# Load: a burst of N job submissions with mixed --ai-* hints, as fast as 4 parallel
# submitters go, against a mini-cluster running the suite. Records slurmctld's sdiag
# figures before and after (server threads, agent queue, main and backfill cycle times),
# times `scontrol ping` every half second during the burst, then waits for the queue to
# drain and checks every job: ended COMPLETED on nodes, or still queued with a Reason.
# Exits non-zero when a job is lost, failed, or pending without a reason, or when
# slurmctld stopped answering.
#
#   bench/ai-bench/load.sh [N (default 5000)] [--dir DIR] [--stock] [--wait SECONDS]
#
#   --dir DIR       use the running mini-cluster in DIR (its jobs from before are left
#                   alone); without it a suite cluster of 8 nodes x 4 GPUs is brought up
#                   and taken down again
#   --stock         also run the same burst on a stock select/cons_tres cluster brought up
#                   beside it, and print the suite/stock ratios
#   --wait SECONDS  how long to wait for the queue to drain after the burst (default 1800)
#
# Needs a build (tools/build.sh; BUILD_DIR names another one).
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
n=5000 dir="" stock=0 wait_s=1800
while [ $# -gt 0 ]; do
    case $1 in
        --dir) dir=$2; shift 2 ;;
        --stock) stock=1; shift ;;
        --wait) wait_s=$2; shift 2 ;;
        [0-9]*) n=$1; shift ;;
        *) echo "load: unknown argument $1" >&2; exit 2 ;;
    esac
done
plugins=${SLURM_AI_PLUGIN_DIR:-$(cd "${BUILD_DIR:-build}" 2>/dev/null && pwd)/plugins}
[ -f "$plugins/select_ai_cons_tres.so" ] || { echo "load: build first (tools/build.sh)" >&2; exit 1; }

base=$(mktemp -d /tmp/slurm-ai-load.XXXXXX)
chmod 755 "$base"  # munged wants every directory above its socket traversable
owned=()
cleanup() {
    local d
    for d in "${owned[@]+"${owned[@]}"}"; do tools/minicluster down --dir "$d" >/dev/null 2>&1 || true; done
    rm -rf "$base"
}
trap cleanup EXIT

up() {  # up DIR SELECT
    local args=(--nodes 8 --gpus 4 --timeout 120 --extra-conf MaxJobCount=100000
                --select "$2" --spank "$plugins/spank_ai.so")
    [ "$2" = select/cons_tres ] || args+=(--plugin-dir "$plugins"
        --ai-conf NodeTopology="$repo/tests/inputs/minicluster-node.xml")
    owned+=("$1")
    tools/minicluster up --dir "$1" "${args[@]}" >"$base/up.log" 2>&1 ||
        { tail -n 30 "$base/up.log" >&2; exit 1; }
}

# The job mix: sizes from 1 to 4 nodes, 0 to 4 GPUs, every --ai-comm pattern, a task DAG,
# locality and checkpoint hints, and a quarter without hints. Jobs run `true` or sleep a
# second, so the load is on slurmctld, not on the jobs.
write_mix() {  # write_mix FILE: one sbatch argument line per job
    cat >"$base/dag.json" <<'EOF'
{"tasks": [{"name": "embed", "gpus": 2}, {"name": "body", "gpus": 4, "compute_s": 0.02},
           {"name": "head", "gpus": 2}],
 "edges": [{"from": "embed", "to": "body", "bytes": "64M"}, {"from": "body", "to": "head", "bytes": "64M"}]}
EOF
    local i
    for ((i = 0; i < n; i++)); do
        case $((i % 12)) in
            0) echo "-N2 --gpus-per-node=4 --ai-comm=allreduce:bytes=1G --wrap=true" ;;
            1) echo "-N4 --gpus-per-node=2 --ai-comm=pipeline:stages=4,bytes=64M,microbatches=8 --wrap=true" ;;
            2) echo "-N1 --gpus=4 --ai-comm=tp:size=4 --wrap=true" ;;
            3) echo "-N2 --gpus-per-node=2 --ai-comm=moe:experts=8 --wrap=true" ;;
            4) echo "-N3 --gpus-per-node=1 --ai-comm=ps:servers=1 --wrap=true" ;;
            5) echo "-N2 --gpus-per-node=4 --ai-dag=$base/dag.json --wrap=true" ;;
            6) echo "-N2 --gpus-per-node=2 --ai-comm=allreduce:algo=ring --ai-locality=soft:10 --wrap=\"sleep 1\"" ;;
            7) echo "-N1 --gpus=2 --ai-checkpoint=$base/ckpt,keep=2 --wrap=true" ;;
            8) echo "-N1 --gpus=1 --wrap=true" ;;
            9) echo "-N2 -n4 --wrap=true" ;;
            10) echo "-N1 -n2 --wrap=\"sleep 1\"" ;;
            11) echo "-N4 --gpus-per-node=1 --ai-comm=allreduce:algo=hierarchical --ai-locality=hard --wrap=true" ;;
        esac
    done >"$1"
}

# sdiag's figures as "key=value" lines.
sdiag_figures() {
    sdiag | awk -F: '
        /^Main schedule statistics/ { sect = "main" } /^Backfilling stats/ { sect = "bf" }
        /^Remote Procedure Call/ { sect = "rpc" }
        function v() { x = $2; sub(/^[ \t]+/, "", x); sub(/[ \t].*$/, "", x); return x }
        /^[ \t]*Server thread count/ { print "server_threads=" v() }
        /^[ \t]*Agent queue size/ { print "agent_queue=" v() }
        /^[ \t]*Jobs submitted/ { print "jobs_submitted=" v() }
        /^[ \t]*Jobs started/ { print "jobs_started=" v() }
        sect == "main" && /^[ \t]*Last cycle:/ { print "main_last_us=" v() }
        sect == "main" && /^[ \t]*Max cycle:/ { print "main_max_us=" v() }
        sect == "main" && /^[ \t]*Mean cycle:/ { print "main_mean_us=" v() }
        sect == "main" && /^[ \t]*Total cycles:/ { print "main_cycles=" v() }
        sect == "bf" && /^[ \t]*Total cycles:/ { print "bf_cycles=" v() }
        sect == "bf" && /^[ \t]*Max cycle:/ { print "bf_max_us=" v() }
        sect == "bf" && /^[ \t]*Mean cycle:/ { print "bf_mean_us=" v() }
        /REQUEST_SUBMIT_BATCH_JOB/ {
            n = split($0, f, /[ \t:]+/)
            for (i = 1; i < n; i++) if (f[i] == "ave_time") print "submit_rpc_mean_us=" f[i + 1]
        }'
}

# run_burst DIR LABEL: the burst, the checks and the figures; writes $base/LABEL.fig.
run_burst() {
    local d=$1 label=$2 fig=$base/$2.fig mix=$base/mix.args stopfile=$base/$2.stop
    export SLURM_CONF=$d/etc/slurm.conf
    write_mix "$mix"
    sdiag -r >/dev/null
    sdiag_figures | sed 's/^/before_/' >"$fig"
    # Ping latency through the burst and the drain; every 2 s also the server threads and
    # the agent queue.
    rm -f "$stopfile"
    (i=0
     while [ ! -e "$stopfile" ]; do
         s=$(date +%s%N)
         if timeout 30 scontrol ping >/dev/null 2>&1; then
             echo $(( ($(date +%s%N) - s) / 1000000 ))
         else
             echo fail
         fi
         i=$((i + 1))
         [ $((i % 4)) != 0 ] || sdiag_figures | grep -E '^(server_threads|agent_queue)=' >>"$base/$label.busy"
         sleep 0.5
     done) >"$base/$label.ping" &
    local pinger=$!
    local t0 t1
    t0=$(date +%s%N)
    # Four submitters; an id per line, or the refusal.
    xargs -P 4 -L 1 sh -c 'sbatch --parsable -o /dev/null "$@" 2>&1 || echo "REFUSED $*"' sbatch \
        <"$mix" >"$base/$label.ids"
    t1=$(date +%s%N)
    sdiag_figures | sed 's/^/burst_/' >>"$fig"
    # Drain: wait until no job of the burst is queued but ones that wait with a reason
    # that cannot change by itself.
    local deadline=$((SECONDS + wait_s)) left
    while :; do
        left=$(squeue -h -o %i -j "$(grep -E '^[0-9]+$' "$base/$label.ids" | paste -sd,)" 2>/dev/null | grep -c . || true)
        [ "$left" -eq 0 ] && break
        [ $SECONDS -lt $deadline ] || break
        sleep 2
    done
    touch "$stopfile"
    wait "$pinger" || true
    sdiag_figures | sed 's/^/after_/' >>"$fig"
    {
        echo "jobs=$n"
        echo "burst_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f", (b - a) / 1e9}')"
        echo "refused=$(grep -c '^REFUSED' "$base/$label.ids" || true)"
        echo "left_queued=$left"
        sort -n "$base/$label.ping" | grep -v fail | awk '{a[NR] = $1} END {
            printf "ping_n=%d\nping_p50_ms=%d\nping_p99_ms=%d\nping_max_ms=%d\n",
                NR, a[int(NR * 0.5) + (NR ? 1 : 0)], a[int(NR * 0.99) + (NR ? 1 : 0)], a[NR]}'
        echo "ping_failed=$(grep -c fail "$base/$label.ping" || true)"
        for k in server_threads agent_queue; do
            echo "max_$k=$(sed -n "s/^$k=//p" "$base/$label.busy" 2>/dev/null | sort -n | tail -n1)"
        done
    } >>"$fig"
    check_jobs "$d" "$label"
}

# Every job: COMPLETED on nodes (jobcomp), or queued with a reason. Prints what is wrong.
check_jobs() {
    local d=$1 label=$2
    squeue -h -o '%i %T %r' >"$base/$label.queue"
    python3 - "$base/$label.ids" "$d/log/jobcomp.log" "$base/$label.queue" "$base/$label.fig" <<'PY'
import re, sys
ids = [l.strip() for l in open(sys.argv[1]) if re.fullmatch(r'\d+', l.strip())]
ended = {}
for line in open(sys.argv[2]):
    m = re.search(r'JobId=(\d+) .*JobState=(\S+).*NodeList=(\S+)', line)
    if m:
        ended[m.group(1)] = (m.group(2), m.group(3))
queued = {}
for line in open(sys.argv[3]):
    f = line.split(None, 2)
    queued[f[0]] = (f[1], f[2].strip() if len(f) > 2 else "")
bad, done, waiting, reasons = [], 0, 0, {}
for i in ids:
    if i in ended:
        state, nodes = ended[i]
        if state != "COMPLETED" or nodes in ("", "(null)", "None"):
            bad.append(f"job {i} ended {state} on '{nodes}'")
        done += 1
    elif i in queued:
        state, reason = queued[i]
        if state == "PENDING" and reason in ("", "None", "(null)"):
            bad.append(f"job {i} pending without a reason")
        waiting += 1
        reasons[reason] = reasons.get(reason, 0) + 1
    else:
        bad.append(f"job {i} is lost: neither queued nor in the completion log")
with open(sys.argv[4], "a") as fig:
    print(f"completed={done}\nqueued={waiting}", file=fig)
    print("queued_reasons=" + ",".join(f"{k}:{v}" for k, v in sorted(reasons.items())), file=fig)
for b in bad[:20]:
    print(b, file=sys.stderr)
if bad:
    print(f"{len(bad)} of {len(ids)} jobs wrong", file=sys.stderr)
sys.exit(1 if bad else 0)
PY
}

get() { sed -n "s/^$2=//p" "$base/$1.fig" | head -n1; }
report() {  # report LABEL
    local l=$1
    printf '%s: %s jobs submitted in %ss (%s refused), %s completed, %s still queued (%s)\n' \
        "$l" "$(get "$l" jobs)" "$(get "$l" burst_s)" "$(get "$l" refused)" \
        "$(get "$l" completed)" "$(get "$l" queued)" "$(get "$l" queued_reasons)"
    printf '  scontrol ping through the burst and the drain: %s pings, p50 %s ms, p99 %s ms, max %s ms, %s failed\n' \
        "$(get "$l" ping_n)" "$(get "$l" ping_p50_ms)" "$(get "$l" ping_p99_ms)" \
        "$(get "$l" ping_max_ms)" "$(get "$l" ping_failed)"
    printf '  sdiag every 2 s: at most %s server threads, agent queue at most %s\n' \
        "$(get "$l" max_server_threads)" "$(get "$l" max_agent_queue)"
    printf '  %-19s %9s %9s %9s\n' sdiag before "burst end" after
    local k
    for k in server_threads agent_queue jobs_submitted jobs_started submit_rpc_mean_us \
        main_cycles main_last_us main_mean_us main_max_us bf_cycles bf_mean_us bf_max_us; do
        printf '  %-19s %9s %9s %9s\n' "$k" "$(get "$l" "before_$k")" "$(get "$l" "burst_$k")" \
            "$(get "$l" "after_$k")"
    done
}

status=0
if [ -n "$dir" ]; then
    run_burst "$dir" suite || status=1
else
    up "$base/suite" select/ai_cons_tres
    run_burst "$base/suite" suite || status=1
fi
report suite
if [ $stock = 1 ]; then
    up "$base/stock" select/cons_tres
    run_burst "$base/stock" stock || status=1
    report stock
    awk -v a="$(get suite burst_s)" -v b="$(get stock burst_s)" \
        -v pa="$(get suite ping_max_ms)" -v pb="$(get stock ping_max_ms)" \
        -v ma="$(get suite after_main_mean_us)" -v mb="$(get stock after_main_mean_us)" 'BEGIN {
        printf "suite/stock: burst time %.2fx, max ping %.2fx, mean main cycle %.2fx\n",
            a / b, (pb ? pa / pb : 0), (mb ? ma / mb : 0) }'
fi
exit $status
