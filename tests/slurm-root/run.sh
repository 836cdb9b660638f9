#!/usr/bin/env bash
# Runs inside tools/slurm-root.sh's root (the checkout is /src there): builds the suite
# against that root's Slurm into build-slurm<SERIES>/ (incremental after the first time)
# and runs the named tests of that build there: cluster tests each with the mini-cluster
# its fixture brings up from that Slurm's daemons, build tests against its packages.
#
#   tests/slurm-root/run.sh SERIES build          configure and build only
#   tests/slurm-root/run.sh SERIES TEST...        e.g. cluster.select_type build.package_deb
set -euo pipefail
series=$1
shift
build=/src/build-slurm$series
if [ "${1:-}" = build ]; then
  # A unity build at -O1 without debug info: the tests here run the plugins and tools,
  # they do not debug them, and it takes about half the CPU of the host's build.
  cmake -S /src -B "$build" -DSLURM_AI_WERROR=ON -DSLURM_AI_UNIT_TESTS=OFF \
    -DCMAKE_UNITY_BUILD=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 \
    ${SLURM_AI_SLURM_TREE:+-DSLURM_AI_SLURM_SRC_DIR="$SLURM_AI_SLURM_TREE"} \
    -DSLURM_AI_SHARED_DATA=/shared/data >"$build.configure.log" 2>&1 ||
    { tail -n 30 "$build.configure.log"; exit 1; }
  cmake --build "$build" -j"$(nproc)" >"$build.build.log" 2>&1 ||
    { grep -E 'error|Error' "$build.build.log" | head -n 30; tail -n 20 "$build.build.log"; exit 1; }
  echo "built the suite against Slurm $(slurmctld -V) in $build"
  exit 0
fi
[ -d "$build" ] || { echo "no build in $build: run '$0 $series build' first" >&2; exit 1; }
pattern=$(printf '%s|' "${@//./\\.}")
exec ctest --test-dir "$build" --output-on-failure -R "^(${pattern%|})\$"
