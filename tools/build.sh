#!/usr/bin/env bash
# Installs the dependencies (tools/setup.sh, as root) and builds the suite into
# ${BUILD_DIR:-build}. Extra arguments go to cmake's configure step. Output of each long
# step goes to a log in the build directory; on failure its last lines are printed.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
mkdir -p "$build"

run_logged() {  # run_logged NAME CMD...
    local log=$build/$1.log
    shift
    if ! "$@" >"$log" 2>&1; then
        echo "build: '$*' failed; last lines of $log:" >&2
        tail -n 40 "$log" >&2
        exit 1
    fi
}

echo "build: installing dependencies (log: $build/setup.log)"
run_logged setup bash tools/setup.sh
echo "build: building in $build (logs: $build/configure.log, $build/build.log)"
run_logged configure cmake -S . -B "$build" "$@"
run_logged build cmake --build "$build" -j"$(nproc)"
