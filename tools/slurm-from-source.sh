#!/usr/bin/env bash
# Builds and installs Slurm from one of SchedMD's release tarballs (../shared/data/slurm-src)
# for a release no Debian archive here serves (25.11, 26.05), the way a Debian site runs
# those releases: SchedMD's own packages (slurm-smd, slurm-smd-slurmctld, -slurmd, -client,
# -dev), built from the debian/ directory the tarball ships (apt-get build-dep, then
# dpkg-buildpackage -B) and installed with apt. tools/setup.sh runs it inside the Debian
# root tools/slurm-root.sh makes.
#
#   tools/slurm-from-source.sh TARBALL
#
# One addition to SchedMD's configuration: --enable-multiple-slurmd (given through a
# CONFIG_SITE file, so debian/ stays as shipped), which the mini-cluster needs to run
# several slurmd on one host; Debian's own 22.05 and 24.11 packages have it too.
#
# The select plugin is built against slurmctld's internal headers and config.h, which no
# package ships: the unpacked tree is configured in place again with exactly the arguments
# the package build used (config.status --config). Tree and packages stay under
#   ${SLURM_AI_CACHE:-/var/cache/slurm-ai}/slurm-build/<version>/
# Idempotent: a second run finds the packages installed and only prints the tree's path
# (its last line, also written to .../slurm-src/current as tools/setup.sh does).
set -euo pipefail

log() { printf 'slurm-from-source: %s\n' "$*" >&2; }
die() { printf 'slurm-from-source: error: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "run as root (it builds and installs Debian packages)"
tarball=${1:?usage: slurm-from-source.sh TARBALL}
[ -f "$tarball" ] || die "TARBALL='$tarball': no such file (expected ../shared/data/slurm-src/slurm-X.Y.Z.tar.xz)"
name=$(basename "$tarball")
version=${name#slurm-}
version=${version%.tar.*}
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] ||
  die "TARBALL='$name': expected slurm-MAJOR.MINOR.MICRO.tar.xz"
export DEBIAN_FRONTEND=noninteractive

CACHE=${SLURM_AI_CACHE:-/var/cache/slurm-ai}
work="$CACHE/slurm-build/$version"   # the .debs; dpkg-buildpackage writes them beside the tree
tree="$work/slurm-$version"
# Only SchedMD's packages of the suite's daemons, clients and headers are installed.
PACKAGES=(slurm-smd slurm-smd-client slurm-smd-slurmctld slurm-smd-slurmd slurm-smd-dev)

build_packages() {
  rm -rf "$work"
  mkdir -p "$work"
  log "unpacking $name"
  tar -C "$work" -xJf "$tarball"
  [ -f "$tree/debian/control" ] || die "$name holds no slurm-$version/debian/control"
  log "installing the build dependencies of slurm-$version/debian/control (log: $work/build-dep.log)"
  apt-get update -qq
  apt-get build-dep -y --no-install-recommends "$tree" >"$work/build-dep.log" 2>&1 ||
    { tail -n 20 "$work/build-dep.log" >&2; die "apt-get build-dep failed; see $work/build-dep.log"; }
  printf 'enable_multiple_slurmd=yes\n' >"$work/config.site"
  log "building SchedMD's packages of Slurm $version (10 to 15 minutes on 2 cores; log: $work/build.log)"
  # Without debug information and at -O1 (dpkg-buildflags' -g -O2 taken out, -O1 added):
  # the optimisation of Slurm's own default build (configure without --disable-debug), in
  # less compile time than -O2 -g; a cluster to test the suite against neither debugs
  # Slurm nor times it.
  local strip="-g -O2" add=-O1
  (cd "$tree" && CONFIG_SITE="$work/config.site" DEB_CFLAGS_STRIP="$strip" \
     DEB_CFLAGS_APPEND="$add" DEB_CXXFLAGS_STRIP="$strip" DEB_CXXFLAGS_APPEND="$add" \
     DEB_BUILD_OPTIONS="nocheck noddebs parallel=$(nproc)" dpkg-buildpackage -B -uc -us) \
    >"$work/build.log" 2>&1 ||
    { tail -n 30 "$work/build.log" >&2; die "dpkg-buildpackage failed; see $work/build.log"; }
  touch "$work/.built"
}

configure_tree() {
  local status
  status=$(find "$tree" -maxdepth 2 -path '*/obj-*/config.status' | head -n1)
  [ -n "$status" ] || die "the package build left no obj-*/config.status in $tree"
  log "configuring $tree in place as the packages were (about a minute)"
  # config.status --config prints the arguments shell-quoted, as configure was given them.
  (cd "$tree" && eval "CONFIG_SITE='$work/config.site' ./configure $("$status" --config)" \
     >"$work/configure.log" 2>&1) ||
    die "configure failed; see $work/configure.log"
  grep -q '^#define MULTIPLE_SLURMD 1' "$tree/config.h" ||
    die "$tree/config.h lacks MULTIPLE_SLURMD: $work/config.site was not read"
  touch "$work/.configured"
}

[ -f "$work/.built" ] || build_packages
[ -f "$work/.configured" ] || configure_tree

installed=$(dpkg-query -W -f='${Version}' slurm-smd-slurmctld 2>/dev/null || true)
if [ "${installed%%-*}" != "$version" ]; then
  debs=()
  for p in "${PACKAGES[@]}"; do
    f=$(find "$work" -maxdepth 1 -name "${p}_${version}-*_*.deb" | head -n1)
    [ -n "$f" ] || die "the package build made no ${p}_${version}-*.deb in $work"
    debs+=("$f")
  done
  log "installing ${PACKAGES[*]} $version"
  apt-get install -y -qq --no-install-recommends "${debs[@]}" >"$work/install.log" 2>&1 ||
    { tail -n 20 "$work/install.log" >&2; die "apt-get install failed; see $work/install.log"; }
fi
slurmctld -V | grep -qx "slurm $version" ||
  die "slurmctld -V says '$(slurmctld -V 2>&1)', not slurm $version"
grep -q "define SLURM_VERSION_STRING \"$version\"" "$tree/config.h" ||
  die "cached tree $tree is not Slurm $version"
mkdir -p "$CACHE/slurm-src"
echo "$tree" >"$CACHE/slurm-src/current"
log "ready: Slurm $version from SchedMD's packages ($(dpkg-query -W -f='${Version}' slurm-smd)), configured source tree below"
echo "$tree"
