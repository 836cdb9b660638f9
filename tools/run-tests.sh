#!/usr/bin/env bash
# Runs every test of the suite on a fresh Debian 12 machine, as root: installs what is
# needed (tools/setup.sh), builds with warnings as errors, then runs ctest: unit tests,
# build checks and the integration tests against a live mini-cluster, which ctest brings
# up once and tears down at the end, also when a test fails.
#
#   tools/run-tests.sh [ctest arguments...]     e.g. -L unit, -R cluster.batch_job
#
# BUILD_DIR (default: build) is where it builds; logs of the long steps go there.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
# Where a Docker engine answers, the docker tests' base image and Debian packages are
# fetched while the suite builds (docker/images.sh --runtime-only; docker.setup waits for
# it and adds the suite). Its log: $build/docker-images/runtime.log. It starts once
# tools/setup.sh has installed debootstrap: the two must not both run apt on this host.
if command -v docker >/dev/null && docker info >/dev/null 2>&1; then
  mkdir -p "$build/docker-images"
  (until command -v debootstrap >/dev/null; do sleep 5; done
   exec docker/images.sh --runtime-only --build-dir "$build") \
    >"$build/docker-images/runtime.log" 2>&1 &
fi
# The Debian roots of the other Slurm series tested (tools/slurm-root.sh: debootstrap, that
# Slurm's packages and configured source tree; for 24.11 mostly download and unpacking,
# for 26.05 SchedMD's packages built from ../shared/data/slurm-src, about 12 minutes of
# CPU at nice 10) are made beside the build too when every test runs (no ctest
# arguments); the slurm-<series> tests wait for them, or make them themselves.
# SLURM_AI_OTHER_SLURM (space-separated series) chooses them; "" leaves them out.
other=${SLURM_AI_OTHER_SLURM-24.11 26.05}
for series in $other; do
  [ $# -eq 0 ] || break
  mkdir -p "$build"
  (until command -v debootstrap >/dev/null; do sleep 5; done
   exec nice -n 10 tools/slurm-root.sh "$series") >"$build/slurm-root-$series.log" 2>&1 &
done
# A build directory this script configures first gets no debug information: the same
# -O2 code as tools/build.sh's default (GCC's -g adds tables, not other instructions), in
# about a third less compile time, which a 2-core CI machine spends on the tests instead.
# A directory configured before keeps its flags.
flags=()
no_debug_info="-O2 -DNDEBUG"
[ -f "$build/CMakeCache.txt" ] || flags=(-DCMAKE_C_FLAGS_RELWITHDEBINFO="$no_debug_info"
                                         -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$no_debug_info")
BUILD_DIR=$build tools/build.sh -DSLURM_AI_WERROR=ON "-DSLURM_AI_OTHER_SLURM=${other// /;}" \
  "${flags[@]}"

cluster_dir=$(sed -n 's/^SLURM_AI_TEST_CLUSTER_DIR:PATH=//p' "$build/CMakeCache.txt")
# ctest's fixture cleanup tears the cluster down; this covers ctest itself being killed.
trap 'tools/minicluster down --dir "$cluster_dir" >/dev/null 2>&1 || true' EXIT

# Five at a time: two lanes of tests that run daemons one by one (the host's Slurm, the
# other series in their roots), beside them two lanes of compile-heavy ones at nice 19, and
# the short ones in the fifth slot (tests/CMakeLists.txt says how).
ctest --test-dir "$build" --output-on-failure -j5 "$@"
