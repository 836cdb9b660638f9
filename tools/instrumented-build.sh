#!/usr/bin/env bash
# The instrumented build: the libraries, the tools, the unit tests and the libFuzzer
# targets compiled once, with clang, AddressSanitizer, UndefinedBehaviorSanitizer and
# libFuzzer's coverage (-DSLURM_AI_FUZZ=ON), in one directory. tests/build/sanitize_unit.sh
# runs the unit tests and the tools there and tools/fuzz.sh the fuzz targets, so that CI
# compiles the project's code under the sanitizers once, not twice. The plugins are left
# out: they run inside slurmctld and slurmstepd, which have no sanitizer runtime.
#
#   tools/instrumented-build.sh BUILD_DIR SHARED_DATA TARGET...
#
# SLURM_AI_C_LAUNCHER and SLURM_AI_CXX_LAUNCHER, where set, wrap the compilers (ccache).
# Its logs: BUILD_DIR/configure.log and BUILD_DIR/build.log; on failure their tails are
# printed and it exits non-zero.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:?instrumented-build.sh needs BUILD_DIR}
data=${2:?instrumented-build.sh needs SHARED_DATA}
shift 2
[ $# -gt 0 ] || { echo "instrumented-build.sh: no target named" >&2; exit 2; }
mkdir -p "$build"

# -O2 with line tables only: the file and line of every frame of a report, at a fraction
# of full debug information's compile time. The unit tests' own files build at -O0
# (tests/CMakeLists.txt says why). A unity build (several sources per compiler run) takes
# about a third less CPU; the normal build keeps one file per run, so a missing include
# still shows there. Warnings are not errors here: the normal build keeps
# -DSLURM_AI_WERROR=ON with GCC.
flags="-O2 -gline-tables-only -DNDEBUG"
if ! cmake -S "$src" -B "$build" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DSLURM_AI_FUZZ=ON -DSLURM_AI_BUILD_PLUGINS=OFF -DCMAKE_UNITY_BUILD=ON \
    -DSLURM_AI_WERROR=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="$flags" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$flags" \
    -DSLURM_AI_SHARED_DATA="$data" \
    ${SLURM_AI_C_LAUNCHER:+-DCMAKE_C_COMPILER_LAUNCHER="$SLURM_AI_C_LAUNCHER"} \
    ${SLURM_AI_CXX_LAUNCHER:+-DCMAKE_CXX_COMPILER_LAUNCHER="$SLURM_AI_CXX_LAUNCHER"} \
    >"$build/configure.log" 2>&1; then
    tail -n 30 "$build/configure.log" >&2
    echo "instrumented build: configuring failed; see $build/configure.log" >&2
    exit 1
fi
if ! cmake --build "$build" -j"$(nproc)" --target "$@" >"$build/build.log" 2>&1; then
    grep -E 'error|Error' "$build/build.log" | head -n 30 >&2
    echo "instrumented build: building $* failed; see $build/build.log" >&2
    exit 1
fi
