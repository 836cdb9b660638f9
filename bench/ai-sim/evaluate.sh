#!/usr/bin/env bash
# Writes docs/evaluation.md and its figures (docs/img/sim-*.svg) from a fresh run of the
# evaluation (ai-sim report; a few minutes on 2 cores). Builds ai-sim first, in BUILD_DIR
# (default: build/, configured without the Slurm plugins if it is not configured yet).
# Extra arguments go to `ai-sim report` (e.g. --seeds 20, --threads 4).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$root/build}
if [ ! -f "$build/CMakeCache.txt" ]; then
    cmake -S "$root" -B "$build" -DSLURM_AI_BUILD_PLUGINS=OFF >/dev/null
fi
cmake --build "$build" --target ai-sim -j"$(nproc)" >/dev/null
exec "$build/bin/ai-sim" report --out "$root/docs/evaluation.md" --img "$root/docs/img" "$@"
