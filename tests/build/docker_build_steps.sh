#!/usr/bin/env bash
# The mini-cluster image's build steps, run on this host as docker/images.sh and the
# Dockerfile run them, except that nothing here changes: `build` packages the existing
# build directory into a temporary --out (as images.sh does), `install`
# resolves the .deb's Depends with a simulated apt and installs it with dpkg into a fresh
# root, and `check` runs the installed tools, finds the plugins in Slurm's PluginDir there
# and has slurmd (loading the installed select plugin) read the configuration that
# docker/entrypoint.sh renders for the containers. `deps` is tools/setup.sh, which
# tools/run-tests.sh has run already.
#
#   docker_build_steps.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1 build=$2
tmp=$(mktemp -d /tmp/slurm-ai-image.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

"$src/docker/build-image.sh" --src "$src" --build-dir "$build" --out "$tmp/out" \
    --root "$tmp/root" build install check 2>"$tmp/steps.log" || {
    cat "$tmp/steps.log"
    echo "FAIL: docker/build-image.sh build install check"
    exit 1
}
cat "$tmp/steps.log"
status=$(dpkg --root="$tmp/root" -s slurm-ai | sed -n 's/^Status: //p')
[ "$status" = "install ok installed" ] ||
    { echo "FAIL: dpkg --root says slurm-ai is '$status'"; exit 1; }
grep -q "^Inst slurm-ai " "$tmp/out/apt-simulate.log" ||
    { cat "$tmp/out/apt-simulate.log"; echo "FAIL: apt would not install the .deb"; exit 1; }
echo "PASS: build, install and check steps of the image on this host ($(basename "$tmp"/out/*.deb))"
