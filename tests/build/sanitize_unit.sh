#!/usr/bin/env bash
# The sanitizer build: the libraries, the tools and the unit tests built with
# AddressSanitizer and UndefinedBehaviorSanitizer (-DSLURM_AI_SANITIZE=ON) in their own
# directory, then every unit test, every golden case of the tools and the ai-topo
# discover/draw check run under them. The first report of either sanitizer (a leak, a bad
# access, undefined behaviour) stops the program and fails this test, with the report
# printed. The plugins are left out: they run inside slurmctld and slurmstepd, which are not
# built with a sanitizer runtime.
#
#   sanitize_unit.sh SOURCE_DIR BUILD_DIR SHARED_DATA [C_LAUNCHER CXX_LAUNCHER]
set -euo pipefail
src=$1 build=$2 data=$3 c_launcher=${4:-} cxx_launcher=${5:-}
mkdir -p "$build"

# -O1 and line tables only (-g1) keep the reports' stacks readable and compile much faster
# than the release flags with full debug info; the check is of behaviour, not of speed.
# The unit tests' own files build at -O0 (tests/CMakeLists.txt says why).
# Warnings are not errors here: under -fsanitize GCC's flow analysis reports false "used
# uninitialized" in Boost.Graph's headers; the normal build keeps -DSLURM_AI_WERROR=ON.
# A unity build (several sources per compiler run) takes about a third less CPU; the
# normal build keeps one file per run, so a missing include still shows there.
if ! cmake -S "$src" -B "$build" -DSLURM_AI_SANITIZE=ON -DSLURM_AI_BUILD_PLUGINS=OFF \
    -DCMAKE_UNITY_BUILD=ON \
    -DSLURM_AI_WERROR=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
    -DSLURM_AI_SHARED_DATA="$data" \
    ${c_launcher:+-DCMAKE_C_COMPILER_LAUNCHER="$c_launcher"} \
    ${cxx_launcher:+-DCMAKE_CXX_COMPILER_LAUNCHER="$cxx_launcher"} \
    >"$build/configure.log" 2>&1; then
    tail -n 30 "$build/configure.log" >&2
    echo "sanitize: configuring failed; see $build/configure.log" >&2
    exit 1
fi
# The unit tests and the tools that golden cases run (tests/golden/cases/<tool>_*.args
# runs ai-<tool>); the other tools are not needed here.
tools=$(for f in "$src"/tests/golden/cases/*.args; do
    b=$(basename "$f"); echo "ai-${b%%_*}"; done | sort -u)
# shellcheck disable=SC2086  # one target per word
if ! cmake --build "$build" -j"$(nproc)" --target slurm_ai_unit_tests $tools \
    >"$build/build.log" 2>&1; then
    grep -E 'error|Error' "$build/build.log" | head -n 30 >&2
    echo "sanitize: the sanitizer build failed; see $build/build.log" >&2
    exit 1
fi

# Halt on the first report of any kind; leaks are checked at every exit. libhwloc leaks the
# object it was importing when it rejects a file (its bug, not ours): suppressed there only.
supp=$build/lsan.supp
echo 'leak:libhwloc.so' >"$supp"
export ASAN_OPTIONS=halt_on_error=1:abort_on_error=0:detect_leaks=1:detect_stack_use_after_return=1:strict_string_checks=1:check_initialization_order=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export LSAN_OPTIONS=suppressions=$supp

status=0
# The whole unit suite in one process: leaks of every test case add up at its exit.
unit=$(find "$build/tests" -maxdepth 1 -name slurm_ai_unit_tests -type f)
if ! "$unit" --order decl >"$build/unit.log" 2>&1; then
    grep -E -A 25 '==[0-9]+==ERROR|runtime error|FAILED|SUMMARY' "$build/unit.log" | head -n 80 >&2
    echo "sanitize: unit tests failed under ASan/UBSan; log $build/unit.log" >&2
    status=1
else
    echo "sanitize: unit tests: $(tail -n 2 "$build/unit.log" | grep -E 'passed|assertions' | head -n1)"
fi
# The tools, through their golden cases and the discover/draw check.
if ! ctest --test-dir "$build" -L golden --output-on-failure -j"$(nproc)" \
    >"$build/tools.log" 2>&1 ||
    ! ctest --test-dir "$build" -R '^build\.ai_topo_discover_draw$' --output-on-failure \
        >>"$build/tools.log" 2>&1; then
    grep -E -B 2 -A 25 '==[0-9]+==ERROR|runtime error|Failed|FAILED' "$build/tools.log" |
        head -n 80 >&2
    echo "sanitize: tools failed under ASan/UBSan; log $build/tools.log" >&2
    status=1
else
    echo "sanitize: tools: $(grep -E 'tests passed' "$build/tools.log" | tr '\n' ' ')"
fi
exit $status
