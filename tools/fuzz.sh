#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz/fuzz_*.cpp) with clang and runs each from a seed
# corpus: inputs made from the real files of ../shared/data (see make_seeds below) and the
# kept regression inputs of tests/fuzz/regressions/<target>/. Exits non-zero on the first
# crash, leak or sanitizer report, leaving the input that caused it in the build
# directory, and when a target has no seed made from ../shared/data.
#
#   tools/fuzz.sh [RUNS_PER_TARGET] [TARGET...]
#       What CI runs: reproducible. Each target runs RUNS_PER_TARGET inputs (default
#       10000) with its own fixed random seed, from the seeds alone (no corpus of earlier
#       runs), so one commit gets the same verdict at every run, on any machine. The
#       targets of FUZZ_TWICE (default select_decide; "all", or "" for none) then run a
#       second time into a fresh corpus, and the run fails unless both runs end with the
#       same coverage and the same corpus. A timeout whose input takes under the limit
#       in CPU alone (the load's, not the input's) runs that run once more.
#   tools/fuzz.sh --explore SECONDS [TARGET...]
#       Exploratory: a new random seed per target (printed, so a find can be replayed with
#       -seed=), a time budget, and a corpus kept in the build directory across runs.
#       Whatever it finds goes into tests/fuzz/regressions/<target>/ with the fix
#       (docs/development.md, "Fuzzing").
#
# FUZZ_BUILD_DIR (default build-fuzz) is where it builds; CI's is the instrumented build
# directory of tests/build/sanitize_unit.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
explore=0
if [ "${1:-}" = --explore ]; then
    explore=1
    shift
    budget=${1:?--explore needs SECONDS}
else
    budget=${1:-10000}
fi
shift || true
case $budget in '' | *[!0-9]* | 0) echo "fuzz: '$budget' is not a positive whole number" >&2; exit 2 ;; esac
build=${FUZZ_BUILD_DIR:-build-fuzz}
data=$(realpath "${SLURM_AI_SHARED_DATA:-$PWD/../shared/data}")
[ -f "$data/README.md" ] || { echo "fuzz: no shared data in $data" >&2; exit 1; }

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    for f in tests/fuzz/fuzz_*.cpp; do
        t=$(basename "$f" .cpp)
        targets+=("${t#fuzz_}")
    done
fi

# Only the fuzz targets and the libraries they link, in the instrumented build that
# tests/build/sanitize_unit.sh shares (tools/instrumented-build.sh): the tools are not fuzzed.
tools/instrumented-build.sh "$build" "$data" "${targets[@]/#/fuzz_}"

# --- seeds ------------------------------------------------------------------------------
seed() {  # seed DIR < content: one seed file (also from a pipeline's subshell)
    # Named by content: the same seeds in the same order at every run (libFuzzer reads
    # inputs of one size in name order), and duplicates made once.
    local tmp sum
    tmp=$(mktemp "$1/.new-XXXXXXXX")
    cat >"$tmp"
    sum=$(sha1sum <"$tmp")
    mv -f "$tmp" "$1/data-${sum%% *}"
}
seed_files() {  # seed_files DIR FILE...: copies of real files
    local f
    for f in "${@:2}"; do [ -f "$f" ] && seed "$1" <"$f"; done
    return 0
}

# Option values a real job would give, from the Pollux workloads in ../shared/data (each
# row: application, replicas, batch size): NAME VALUE per line, for the option parsers.
workload_hints() {
    local f
    for f in "$data"/comm-measurements/workloads/*.csv; do
        awk -F, 'NR > 1 && $4 ~ /^[0-9]+$/ {
            n = $4; b = $5; nodes = int((n + 3) / 4)
            print "ai-comm allreduce:bytes=" b "K"
            print "ai-comm pipeline:stages=" (nodes > 1 ? nodes : 2) ",bytes=" b "K,microbatches=" n
            print "ai-comm tp:size=" (n > 8 ? 8 : n + 1)
            print "ai-comm moe:experts=" 2 * n
            print "ai-comm ps:servers=" nodes
            print "ai-elastic 1:" nodes
            print "ai-gang " $1 ":" n ":" $2
            print "ai-checkpoint /ckpt/" $3 ",signal=USR1@" $2 ",keep=" (n % 5 + 1)
            print "ai-locality soft:" $2 "s"
        }' "$f"
    done | sort -u | awk '++per[$1] <= 60'  # at most 60 values of each option
}

# The task DAGs that seed the DAG parser: the hand-written ones (../shared/data has none),
# and a pipeline per model of ../shared/data/comm-measurements, one stage per node of its
# widest measured placement.
task_dags() {
    local f model stages
    for f in tests/fuzz/seeds/task_dag/*; do tr -d '\n' <"$f"; echo; done
    for f in "$data"/comm-measurements/*/placements.csv; do
        model=$(basename "$(dirname "$f")")
        stages=$(awk -F, 'NR > 1 {print length($1)}' "$f" | sort -n | tail -n1)
        python3 - "$model" "${stages:-2}" <<'PY'
import json, sys
model, n = sys.argv[1], int(sys.argv[2])
tasks = [{"name": f"{model}{i}", "gpus": 1, "compute_s": 0.01 * (i + 1)} for i in range(n)]
edges = [{"from": f"{model}{i}", "to": f"{model}{i + 1}", "bytes": f"{16 << i}M"}
         for i in range(n - 1)]
print(json.dumps({"tasks": tasks, "edges": edges}))
PY
    done
}

hosts_of_fabric() {  # the host names of the shared fabric, one per line
    awk '{print $2}' "$data"/fabric/*.map
}

make_seeds() {  # make_seeds TARGET DIR: writes the seeds made from ../shared/data
    local t=$1 d=$2 line name value i opt
    case $t in
        topology_conf)
            seed_files "$d" "$data"/fabric/*.topology.conf tests/inputs/*.topology.conf \
                "$data"/fabric/topograph/expected.*.conf ;;
        topology_yaml)  # topograph's expected tree and block configs as one topology.yaml
            python3 - "$data"/fabric/topograph/expected.slinky-oci-sim-tree.conf \
                "$data"/fabric/topograph/expected.slinky-dra-block.conf <<'PY' | seed "$d"
import re, sys
tree, block = (open(p).read().splitlines() for p in sys.argv[1:3])
out = ["- topology: tree", "  cluster_default: true", "  tree:", "    switches:"]
for line in tree:
    kv = dict(re.findall(r"(\w+)=(\S+)", line))
    if "SwitchName" in kv:
        out.append("      - switch: " + kv["SwitchName"])
        if "Switches" in kv:
            out.append("        children: " + kv["Switches"])
        if "Nodes" in kv:
            out.append("        nodes: " + kv["Nodes"])
out += ["- topology: block", "  block:"]
blocks = []
for line in block:
    kv = dict(re.findall(r"(\w+)=(\S+)", line))
    if "BlockSizes" in kv:
        out.append("    block_sizes: [" + ", ".join(kv["BlockSizes"].split(",")) + "]")
    elif "BlockName" in kv:
        blocks += ["      - block: " + kv["BlockName"], "        nodes: " + kv["Nodes"]]
print("\n".join(out + ["    blocks:"] + blocks))
PY
            ;;
        topograph_model) seed_files "$d" "$data"/fabric/topograph/*.yaml ;;
        gpu_fabric)  # every nvidia-smi capture, and CSV lines of its fabric fields
            seed_files "$d" "$data"/gpu-fabric/nvidia-smi-*
            printf '00000001-0000-0000-0000-000000000001, 2\nN/A, N/A\n' | seed "$d"
            printf 'pci.bus_id, fabric.state, fabric.status, fabric.clusterUuid, fabric.cliqueId\n00000009:01:00.0, Completed, Success, 00000002-0000-0000-0000-000000000002, 4\n' |
                seed "$d" ;;
        clos_csv)  # Lingjun's topo.csv whole, and its first 40 hosts
            seed_files "$d" "$data"/fabric/lingjun-topo.csv
            head -n 41 "$data"/fabric/lingjun-topo.csv | seed "$d" ;;
        ibnetdiscover)  # X5 whole; of example.out (300 KB) its first switches and its CAs
            seed_files "$d" "$data"/fabric/*.topofile
            sed -n '1,400p' "$data"/fabric/topograph/example.out | seed "$d"
            awk '/^Ca/ {n++} n > 0 && n <= 40' "$data"/fabric/topograph/example.out | seed "$d" ;;
        guid_map) seed_files "$d" "$data"/fabric/*.map ;;
        hwloc_xml) seed_files "$d" "$data"/hwloc/*.xml ;;
        nccl_topo) seed_files "$d" "$data"/nccl-topo/*.xml tests/inputs/*.xml ;;
        hostlist)  # every Nodes=/Switches= value of the fabric, and its host names
            grep -ohiE '(Nodes|Switches)=[^ ]+' "$data"/fabric/*.topology.conf |
                sed 's/^[^=]*=//' | while read -r line; do printf '%s' "$line" | seed "$d"; done
            hosts_of_fabric | sort -u | sed -n 1,40p | while read -r line; do
                printf '%s' "$line" | seed "$d"
            done ;;
        plugin_config)  # the shipped file, and one naming each real fabric and node file
            seed_files "$d" contrib/slurm.conf.d/ai_select.conf
            for f in "$data"/hwloc/*.xml "$data"/nccl-topo/*.xml; do
                printf 'Fabric=%s\nNodeTopology=%s\nPolicy=engine\nTimeBudgetMs=5\n' \
                    "$data/fabric/X5.topology.conf" "$f" | seed "$d"
                printf 'Fabric=%s\nGuidMap=%s\nNodeTopology=sl390lin[1-5]=%s\nDebug=yes\n' \
                    "$data/fabric/X5.topofile" "$data/fabric/X5.map" "$f" | seed "$d"
            done ;;
        job_options)  # first byte: the option's index in hint_options()
            workload_hints | while read -r name value; do
                i=0
                for opt in ai-comm ai-dag ai-elastic ai-gang ai-checkpoint ai-locality; do
                    [ "$opt" = "$name" ] && break
                    i=$((i + 1))
                done
                { printf "\\$(printf %03o "$i")"; printf '%s' "$value"; } | seed "$d"
            done
            for f in "$data"/hwloc/*.xml; do printf '\001%s' "$f" | seed "$d"; done ;;
        task_dag) task_dags | while read -r line; do printf '%s' "$line" | seed "$d"; done ;;
        select_decide)  # 8 bytes of request (2 nodes, 4 GPUs each), then the SPANK env
            workload_hints | awk 'NR % 3 == 1' | while read -r name value; do
                { printf '\001\001\001\004\001\007\000\000'
                  printf '_SLURM_SPANK_OPTION_ai_%s=%s\n' "${name//-/_}" "$value"; } | seed "$d"
            done
            task_dags | while read -r line; do
                { printf '\003\002\000\002\001\017\000\011'
                  printf 'AI_DAG=%s\n_SLURM_SPANK_OPTION_ai_ai_locality=soft\n' "$line"; } | seed "$d"
            done ;;
        select_state)  # failure histories of the fabric's hosts, as save_state writes them
            # (version 1, and version 2 with the classes of the fault trace's first faults)
            hosts_of_fabric | python3 -c '
import json, sys
hosts = sorted(set(sys.stdin.read().split()))
trace = json.load(open(sys.argv[1]))
classes = ["gpu", "network", "power", "cooling", "software", "other"]
for n in (1, 5, len(hosts)):
    f = {h: {"count": 1 + i % 3, "at": 1.7e9 + 3600 * i} for i, h in enumerate(hosts[:n])}
    print(json.dumps({"version": 1, "failures": f}))
    g = {}
    for i, h in enumerate(hosts[:n]):
        e = trace[i % len(trace)]
        cls = [c for c in classes if c in (e["fault_type"]["Class"] + e["fault_type"]["Desc"]).lower()]
        t = 1.7e9 + 86400 * e["event_time"]
        g[h] = {"day": 0.5, "week": 1 + i % 3, "month": 2, "at": t, "last": t,
                "classes": {(cls or ["other"])[0]: 1 + i % 3}}
    print(json.dumps({"version": 2, "failures": g}))' "$data/failures/infinitehbd-fault-trace.json" |
                while read -r line; do printf '%s' "$line" | seed "$d"; done ;;
        state_records)  # job records, ai-elasticd's state and ai-recover's runs on the fabric's hosts
            hosts_of_fabric | sort -u | sed -n 1,6p | python3 -c '
import json, sys
for i, h in enumerate(sys.stdin.read().split()):
    print(json.dumps({"job_id": 100 + i, "nodes": h, "gpus": h + ":0,1", "hints": {},
                      "options": {"ai-comm": "allreduce"}, "hint_errors": [],
                      "recorded_at": 1795352400 + i, "decision": None,
                      "cons_tres_would_choose": h}))
    print(json.dumps({"version": 1, "grows": [{"job_id": 100 + i, "expansion_id": 200 + i,
                      "add": 1 + i, "nodes_before": 2, "deadline": 1795352481,
                      "reason": "grow " + h}], "last_resize": {str(100 + i): 1795352400},
                      "gangs_released": [f"{1000 + i}:{h}"], "failures_handled": [100 + i]}))
    print(json.dumps({"run_start": 1795352400 + i, "nodes": [h], "signalled": i % 2 == 0}))' |
                while read -r line; do printf '%s' "$line" | seed "$d"; done ;;
        gang_file)  # gangs of the fabric's hosts' users in each state, as the plugin writes them
            hosts_of_fabric | sort -u | sed -n 1,6p | python3 -c '
import json, sys
states = ["waiting", "timed_out", "starting", "started"]
gangs = []
for i, name in enumerate(sys.stdin.read().split()):
    gangs.append({"key": f"{1000 + i}:{name}", "user_id": 1000 + i, "name": name,
                  "size": 2 + i, "timeout_s": 60 * i, "onfail": ["kill", "keep"][i % 2],
                  "members": list(range(100 + i, 102 + 2 * i)), "status": states[i % 4],
                  "reason": f"gang {name} waits", "deadline": 1795352481 + i, "updated": 1795352400})
    print(json.dumps({"version": 1, "gangs": gangs}))' | while read -r line; do
                printf '%s' "$line" | seed "$d"
            done ;;
        learned_placement)  # the scorers ai-sim train-place made of Philly (contrib), and
            # scorers of widths 1, 2 and 8 for each shared fabric, judged at 2x, 4x and 16x
            # its host count, one that won and one that lost
            seed_files "$d" contrib/slurm.conf.d/placement-model-*.json
            for f in "$data"/fabric/*.map; do
                awk 'END {print FILENAME, NR}' "$f"
            done | python3 -c '
import json, math, sys
for line in sys.stdin:
    name, hosts = line.split()[0].rsplit("/", 1)[1], int(line.split()[1])
    for width, lost in ((1, False), (2, True), (8, False)):
        n = width * (6 + 1 + 8 + 1 + 5 + 5 + 1) + 8
        judged = [{"hosts": hosts * k, "windows": 2, "mean_jct_h": 5.0 + (0.2 if lost and k == 16 else -0.1),
                   "engine_mean_jct_h": 5.0} for k in (2, 4, 16)]
        print(json.dumps({"format": "slurm-ai learned placement scorer", "version": 1, "width": width,
            "mean": {"job": [0.5] * 6, "candidate": [0.1] * 8, "region": [0.2] * 5},
            "scale": {"job": [1.5] * 6, "candidate": [0.7] * 8, "region": [0.3] * 5},
            "parameters": [round(math.sin(i + hosts), 6) for i in range(n)],
            "trained": {"scenario": name, "method": "seed", "hosts": hosts, "windows": 4,
                        "decisions": 10 * hosts, "epochs": 3, "regularizer": 0.1},
            "judged": judged, "beats_engine": not lost}))' | while read -r line; do
                printf '%s' "$line" | seed "$d"
            done ;;
        shape_profile)  # each measured model's placements as a profile of 4-GPU hosts, and
            # all of them in one file, in both spellings of a shape
            for f in "$data"/comm-measurements/*/placements.csv; do
                awk -F, 'NR == 1 {print "gpus_per_host,shape,step"} NR > 1 {print "4," $1 "," $3}' \
                    "$f" | seed "$d"
            done
            awk -F, 'BEGIN {print "gpus_per_host,shape,step"} FNR > 1 {
                     s = ""; for (i = 1; i <= length($1); ++i) s = s (i > 1 ? "+" : "") substr($1, i, 1)
                     print "4," s "," $3 }' "$data"/comm-measurements/*/placements.csv | seed "$d" ;;
        learned_risk)  # the model ai-sim train-risk made of the fault trace (contrib)
            seed_files "$d" contrib/slurm.conf.d/risk-model-*.json ;;
        checkpoint_records)  # restart records and checkpoint names naming the fabric's hosts
            hosts_of_fabric | sort -u | sed -n 1,12p | while read -r name; do
                printf 'step-%08d' "$(printf '%s' "$name" | cksum | cut -c1-6)" | seed "$d"
                printf '/ckpt/%s/%%j/step-00000120' "$name" | seed "$d"
            done
            hosts_of_fabric | sort -u | sed -n 1,8p | while read -r name; do
                printf '{"at":1795352481.5,"event":"node_failure","action":"requeue","reason":"%s DOWN","failed":["%s"],"step_before":120,"step_after":131,"restarts":1}' \
                    "$name" "$name" | seed "$d"
            done ;;
        task_env)  # the shipped plugstack line's arguments, the fabric's leaves as steps
            args=$(sed -n 's/^required [^ ]* //p' contrib/slurm.conf.d/plugstack.conf.d/ai.conf)
            grep -ohE 'Nodes=[^ ]+' "$data"/fabric/*.topology.conf | sed 's/^Nodes=//' |
                sed -n 1,20p | python3 -c '
import re, sys
for nodes in sys.stdin.read().split():
    n = 0
    for part in re.findall(r"[^,\[]+(?:\[[^]]*\])?", nodes):
        m = re.search(r"\[(.*)\]", part)
        for r in (m.group(1).split(",") if m else ["x"]):
            a, _, b = r.partition("-")
            n += int(b) - int(a) + 1 if b else 1
    print(nodes, n)' | while read -r nodes n; do
                    printf '%s\n%s\n1(x%s)\n0,1,2,3\n\001' "$args" "$nodes" "$n" | seed "$d"
                done
            printf '%s master_port=40000-40099\nn[1-4]\n2(x3),1\n1,3\n\000' "$args" | seed "$d" ;;
        *) echo "fuzz: no seeds defined for target $t; add them to make_seeds" >&2; return 1 ;;
    esac
}

# A UBSan report is a failure, not a line in the log (the fuzz build recovers from UB).
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# The scratch directory of the targets that need one (select_decide records placed jobs):
# this build's own, so that another checkout's run never removes it midway, and the same
# name at every run.
SLURM_AI_FUZZ_SCRATCH=$(realpath -m "$build/scratch")
export SLURM_AI_FUZZ_SCRATCH
twice=" ${FUZZ_TWICE-select_decide} "

# Reproducible runs. Addresses reach the fuzzer: the compiled code compares pointers as
# integers (a null check, a loop's end), and libFuzzer mutates inputs with the operands of
# comparisons. So: no address space layout randomisation, where the kernel lets a process
# turn it off; no RSS-watching thread (-rss_limit_mb=0: its start races with the first
# inputs' malloc count, which decides whether libFuzzer runs an input again for leaks, a
# run more or less), a single allocation over the limit still failing (-malloc_limit_mb);
# and, without an RSS limit, no purge of the allocator's caches once a second
# (-purge_allocator_interval=-1), which would move later allocations by the clock; and no
# report of slow inputs (-report_slow_units past any input's time: the timeout ends one
# long before). libFuzzer writes an input that took 10 s of wall time or more to a file
# of its own, and the allocations that takes move every later one of the target's: on a
# loaded machine, at nice 19, an input of 0.2 s of CPU can take that long and finish
# before the timeout's alarm sees it. The stack's addresses move with the size of the
# environment, so a target sees only the variables it needs, whoever calls this script.
# The targets' own time() stands still (tests/fuzz/fixed_time.cpp).
fixed=()
flags=(-rss_limit_mb=2048)
if [ $explore = 0 ]; then
    flags=(-rss_limit_mb=0 -malloc_limit_mb=2048 -purge_allocator_interval=-1
        -report_slow_units=86400)
    fixed=(env -i PATH=/usr/bin:/bin "UBSAN_OPTIONS=$UBSAN_OPTIONS"
        "SLURM_AI_FUZZ_SCRATCH=$SLURM_AI_FUZZ_SCRATCH")
    [ -z "${ASAN_OPTIONS:-}" ] || fixed+=("ASAN_OPTIONS=$ASAN_OPTIONS")
    if setarch "$(uname -m)" -R true 2>/dev/null; then
        fixed+=(setarch "$(uname -m)" -R)
    else
        echo "fuzz: cannot turn address randomisation off here (setarch -R): runs may differ" >&2
    fi
fi

# libFuzzer's -timeout, seconds of wall time per input; an input that takes as long in CPU
# alone hangs (timed_out_under_load).
fuzz_timeout_s=10

fuzz_once() {  # fuzz_once TARGET SEEDS CORPUS LOG LIMITS...: one libFuzzer run
    local t=$1 seeds=$2 corpus=$3 log=$4
    shift 4
    "${fixed[@]}" "$build/tests/fuzz/fuzz_$t" "$corpus" "$seeds" "$@" \
        -timeout=$fuzz_timeout_s "${flags[@]}" -artifact_prefix="$build/crashes/$t/" \
        -print_final_stats=1 >"$log" 2>&1
}

# fuzz_run TARGET SEEDS CORPUS LOG LIMITS...: a libFuzzer run whose verdict counts. In
# CI's mode a timeout that the load made, not its input (timed_out_under_load), runs the
# target once more from the start, into a fresh corpus, and that run's verdict counts.
fuzz_run() {
    fuzz_once "$@" && return 0
    [ $explore = 0 ] && timed_out_under_load "$1" "$2" "$4" || return 1
    rm -rf "$3" && mkdir -p "$3"
    fuzz_once "$@"
}

# Whether a failed run (LOG) was a timeout that its input does not make alone. CI runs
# this script at nice 19 beside the other tests, and libFuzzer's -timeout counts wall
# time, so an input of 0.2 s of CPU can wait longer than the limit for a core. The input
# kept in crashes/TARGET since SEEDS were made runs once more alone; a hang is one that
# takes the limit in CPU.
timed_out_under_load() {  # timed_out_under_load TARGET SEEDS LOG
    local t=$1 seeds=$2 log=$3 input cpu
    grep -q 'ERROR: libFuzzer: timeout' "$log" || return 1
    input=$(find "$build/crashes/$t" -name 'timeout-*' -newer "$seeds" -printf '%T@ %p\n' |
        sort -rn | head -n1 | cut -d' ' -f2-)
    [ -n "$input" ] || return 1
    cpu=$( { TIMEFORMAT='%U %S'; time "${fixed[@]}" "$build/tests/fuzz/fuzz_$t" \
        -timeout=120 "${flags[@]}" "$input" >"$log.alone" 2>&1; } 2>&1) || return 1
    cpu=$(awk '{ printf "%.1f", $1 + $2 }' <<<"$cpu")
    echo "fuzz: $t: timed out under load; alone its input took ${cpu}s of CPU" \
        "(log $log.alone)" >&2
    awk -v c="$cpu" -v limit=$fuzz_timeout_s 'BEGIN { exit !(c < limit) }'
}

final_coverage() {  # final_coverage LOG: "cov: N ft: M" of the run's last stats line
    grep -E '^#[0-9]+[[:space:]].*cov: [0-9]+ ft: [0-9]+' "$1" | tail -n1 |
        sed -E 's/.*(cov: [0-9]+ ft: [0-9]+).*/\1/'
}

# Whether two runs (LOG CORPUS each) ended with the same final coverage and corpus (files
# named by their content's SHA-1).
same_run() {  # same_run LOG_A CORPUS_A LOG_B CORPUS_B
    local a b only
    a=$(final_coverage "$1")
    b=$(final_coverage "$3")
    only=$(diff <(ls "$2") <(ls "$4") | grep -c '^[<>]' || true)
    [ -n "$a" ] && [ "$a" = "$b" ] && [ "$only" -eq 0 ]
}

# Runs the target again with the same seed and runs into a fresh corpus (a name of the same
# length, so that nothing else differs), and compares the two runs' final coverage and
# corpus. When they differ, a third run decides: two runs of three ending alike pass (seen
# in CI: under the load of the cluster tests, one run of select_decide took another path
# from its 3,469th input on, and the rerun and every run on an idle machine agreed; one
# cause, the slow-input report, is off now (see flags above), another is not found), three
# different ends fail. A target that reads a clock, a random source or an address
# differs on nearly every run, so the third run does not hide it.
check_twice() {  # check_twice TARGET SEEDS CORPUS LOG LIMITS...
    local t=$1 seeds=$2 corpus=$3 log=$4 again=$build/corpus-re/$t log2=$build/fuzz-$t.again.log
    local third=$build/corpus-r3/$t log3=$build/fuzz-$t.third.log
    shift 4
    rm -rf "$again" "$third"
    mkdir -p "$again"
    if ! fuzz_run "$t" "$seeds" "$again" "$log2" "$@"; then
        echo "fuzz: $t: FAILED on its second run, with the same seed; log $log2" >&2
        return 1
    fi
    if same_run "$log" "$corpus" "$log2" "$again"; then
        echo "fuzz: $t: reproducible: a second run with the same seed ended with the same" \
            "coverage ($(final_coverage "$log")) and the same $(ls "$corpus" | wc -l) corpus files"
        return 0
    fi
    local cov1 cov2
    cov1=$(final_coverage "$log")
    cov2=$(final_coverage "$log2")
    mkdir -p "$third"
    if ! fuzz_run "$t" "$seeds" "$third" "$log3" "$@"; then
        echo "fuzz: $t: FAILED on its third run, with the same seed; log $log3" >&2
        return 1
    fi
    if same_run "$log" "$corpus" "$log3" "$third" || same_run "$log2" "$again" "$log3" "$third"; then
        echo "fuzz: $t: reproducible in two runs of three: the same seed ended with" \
            "'$cov1' and '$cov2', and a third run with '$(final_coverage "$log3")' (logs $log," \
            "$log2, $log3)" >&2
        return 0
    fi
    echo "fuzz: $t: NOT REPRODUCIBLE: three runs with the same seed ended with '$cov1'," \
        "'$cov2' and '$(final_coverage "$log3")' (corpora $corpus, $again, $third; logs $log," \
        "$log2, $log3). Something the target reaches reads a clock, a random source, an" \
        "address or the file system: see docs/development.md, \"Fuzzing\"." >&2
    return 1
}

failed=0
for t in "${targets[@]}"; do
    seeds=$build/seeds/$t
    rm -rf "$seeds"
    mkdir -p "$seeds" "$build/crashes/$t"
    make_seeds "$t" "$seeds" || { failed=1; continue; }
    made=$(find "$seeds" -type f | wc -l)
    if [ "$made" -eq 0 ]; then
        echo "fuzz: $t: no seed made from $data" >&2
        failed=1
        continue
    fi
    kept=0
    for f in tests/fuzz/regressions/"$t"/*; do
        [ -f "$f" ] && cp -f "$f" "$seeds/regression-$(basename "$f")" && kept=$((kept + 1))
    done
    log=$build/fuzz-$t.log
    if [ $explore = 1 ]; then
        # New inputs go to a corpus kept across runs; the seeds are read only.
        corpus=$build/corpus/$t
        mkdir -p "$corpus"
        rseed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
        limits=(-seed="$rseed" -max_total_time="$budget")
        what="${budget}s, seed $rseed"
    else
        # A fresh corpus, and a seed of the target's own that never changes. No reread of
        # the corpus directory every second (-reload=0): only this run writes there, but
        # what the clock decides should not be libFuzzer's either.
        corpus=$build/corpus-ci/$t
        rm -rf "$corpus"
        mkdir -p "$corpus"
        rseed=$(printf '%s' "$t" | cksum | cut -d' ' -f1)
        limits=(-seed="$rseed" -runs="$budget" -reload=0)
        what="seed $rseed"
    fi
    if fuzz_run "$t" "$seeds" "$corpus" "$log" "${limits[@]}"; then
        runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
        secs=$(sed -n 's/^stat::total_time_in_seconds*: *//p;s/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -n1)
        echo "fuzz: $t: $made seeds from shared data, $kept regressions, ${runs:-?} runs ($what${secs:+, ${secs}s}), no crash"
        if [ $explore = 0 ] && { [ "$twice" = " all " ] || [[ $twice == *" $t "* ]]; }; then
            check_twice "$t" "$seeds" "$corpus" "$log" "${limits[@]}" || failed=1
        fi
    else
        echo "fuzz: $t: FAILED ($what); input kept in $build/crashes/$t/; log $log:" >&2
        grep -E 'ERROR|SUMMARY|==[0-9]+==' "$log" | sed -n 1,15p >&2
        failed=1
    fi
done
exit $failed
