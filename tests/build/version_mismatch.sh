#!/usr/bin/env bash
# Configuring against a Slurm tree of another version than the installed slurmctld stops
# with a message that names both versions.
set -euo pipefail
src=$1
installed=$(slurmctld -V | grep -Eo '[0-9]+\.[0-9]+\.[0-9]+')
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/tree/slurm" "$tmp/tree/src/slurmctld" "$tmp/build"
touch "$tmp/tree/slurm/slurm.h" "$tmp/tree/src/slurmctld/slurmctld.h"
echo '#define SLURM_VERSION_STRING "21.08.99"' >"$tmp/tree/config.h"
rc=0
cmake -S "$src" -B "$tmp/build" -DSLURM_AI_SLURM_SRC_DIR="$tmp/tree" -DSLURM_AI_BUILD_TESTS=OFF \
    >"$tmp/out" 2>&1 || rc=$?
[ $rc -ne 0 ] || { echo "FAIL: configure accepted a 21.08.99 tree"; exit 1; }
grep -q "Slurm version mismatch" "$tmp/out" || { echo "FAIL: no mismatch message"; cat "$tmp/out"; exit 1; }
grep -q "21.08.99" "$tmp/out" && grep -q "$installed" "$tmp/out" ||
    { echo "FAIL: message does not name both versions"; cat "$tmp/out"; exit 1; }
echo "PASS: $(grep -m1 -A1 'Slurm version mismatch' "$tmp/out" | tr -s ' ' | tr '\n' ' ')"
