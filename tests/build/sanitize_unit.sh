#!/usr/bin/env bash
# The unit tests and the tools' golden cases under AddressSanitizer and
# UndefinedBehaviorSanitizer, in the instrumented build (tools/instrumented-build.sh, which
# tools/fuzz.sh shares), and the ai-topo discover/draw check. The first report of either
# sanitizer (a leak, a bad access, undefined behaviour) stops the program and fails this
# test, with the report printed.
#
#   sanitize_unit.sh SOURCE_DIR BUILD_DIR SHARED_DATA
set -euo pipefail
src=$1 build=$2 data=$3

# The unit tests and the tools that golden cases run (tests/golden/cases/<tool>_*.args
# runs ai-<tool>); the other tools are not needed here.
tools=$(for f in "$src"/tests/golden/cases/*.args; do
    b=$(basename "$f"); echo "ai-${b%%_*}"; done | sort -u)
# shellcheck disable=SC2086  # one target per word
"$src/tools/instrumented-build.sh" "$build" "$data" slurm_ai_unit_tests $tools

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
