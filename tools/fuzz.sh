#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz/fuzz_*.cpp) with clang and runs each for a
# bounded time from a seed corpus: the real files of ../shared/data that the parser reads,
# the kept regression inputs of tests/fuzz/regressions/<parser>/, and what earlier runs
# found (kept in the build directory). Exits non-zero on the first crash, leak or
# sanitizer report, leaving the input that caused it in the build directory.
#
#   tools/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]     (default 20 s, every target)
#
# FUZZ_BUILD_DIR (default build-fuzz) is where it builds.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-20}
shift || true
build=${FUZZ_BUILD_DIR:-build-fuzz}
data=${SLURM_AI_SHARED_DATA:-$PWD/../shared/data}

if ! cmake -S . -B "$build" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSLURM_AI_FUZZ=ON -DSLURM_AI_BUILD_PLUGINS=OFF \
    -DSLURM_AI_BUILD_TESTS=OFF >"$build.configure.log" 2>&1 ||
    ! cmake --build "$build" -j"$(nproc)" >"$build.build.log" 2>&1; then
    echo "fuzz: build failed; see $build.configure.log and $build.build.log" >&2
    tail -n 30 "$build.build.log" >&2 2>/dev/null || tail -n 30 "$build.configure.log" >&2
    exit 1
fi

# Which real files seed which parser.
seeds_for() {
    case $1 in
        topology_conf) ls "$data"/fabric/*.topology.conf ;;
        ibnetdiscover) ls "$data"/fabric/*.topofile ;;
        guid_map) ls "$data"/fabric/*.map ;;
        hostlist) printf '%s\n' ;;
        hwloc_xml) ls "$data"/hwloc/*.xml ;;
        plugin_config) ls "$PWD"/contrib/slurm.conf.d/ai_select.conf ;;
        nccl_topo) ls "$data"/nccl-topo/*.xml ;;
        *) ls "$PWD"/tests/fuzz/seeds/"$1"/* 2>/dev/null || true ;;
    esac
}

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    for f in tests/fuzz/fuzz_*.cpp; do
        t=$(basename "$f" .cpp)
        targets+=("${t#fuzz_}")
    done
fi

failed=0
for t in "${targets[@]}"; do
    corpus=$build/corpus/$t
    mkdir -p "$corpus" "$build/crashes/$t"
    for f in $(seeds_for "$t") tests/fuzz/regressions/"$t"/*; do
        [ -f "$f" ] && cp -f "$f" "$corpus/seed-$(basename "$f")"
    done
    log=$build/fuzz-$t.log
    if "$build/tests/fuzz/fuzz_$t" "$corpus" -max_total_time="$seconds" -timeout=10 \
        -rss_limit_mb=2048 -artifact_prefix="$build/crashes/$t/" -print_final_stats=1 \
        >"$log" 2>&1; then
        runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
        echo "fuzz: $t: ${runs:-?} runs in ${seconds}s, no crash"
    else
        echo "fuzz: $t: FAILED; input kept in $build/crashes/$t/; log $log:" >&2
        grep -E 'ERROR|SUMMARY|==[0-9]+==' "$log" | head -n 15 >&2
        failed=1
    fi
done
exit $failed
