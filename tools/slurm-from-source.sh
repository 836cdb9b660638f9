#!/usr/bin/env bash
# Builds and installs Slurm from one of SchedMD's release tarballs (../shared/data/slurm-src)
# for a release no Debian archive here serves (25.11, 26.05). tools/setup.sh runs it inside
# the Debian root tools/slurm-root.sh makes, after installing the build dependencies.
#
#   tools/slurm-from-source.sh TARBALL
#
# Configured as SchedMD's own debian/rules configures its slurm-smd packages: prefix /usr,
# libdir /usr/lib/<arch> (PluginDir /usr/lib/<arch>/slurm), sysconfdir /etc/slurm,
# localstatedir /var, --disable-debug, --enable-pam; plus --enable-multiple-slurmd, which
# the mini-cluster needs (Debian's 22.05 and 24.11 packages have it too). The built tree
# stays configured under ${SLURM_AI_CACHE:-/var/cache/slurm-ai}/slurm-src/<version>/: the
# select plugin is built against its config.h and internal headers. Idempotent: a second
# run finds the installed release and only prints the tree's path (its last line, also
# written to .../slurm-src/current as tools/setup.sh does).
set -euo pipefail

log() { printf 'slurm-from-source: %s\n' "$*" >&2; }
die() { printf 'slurm-from-source: error: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "run as root (it installs Slurm into /usr)"
tarball=${1:?usage: slurm-from-source.sh TARBALL}
[ -f "$tarball" ] || die "TARBALL='$tarball': no such file (expected ../shared/data/slurm-src/slurm-X.Y.Z.tar.xz)"
name=$(basename "$tarball")
version=${name#slurm-}
version=${version%.tar.*}
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] ||
  die "TARBALL='$name': expected slurm-MAJOR.MINOR.MICRO.tar.xz"

CACHE=${SLURM_AI_CACHE:-/var/cache/slurm-ai}
tree="$CACHE/slurm-src/$version"
arch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)

if [ ! -f "$tree/.configured" ]; then
  rm -rf "$tree" "$tree.tmp"
  mkdir -p "$tree.tmp"
  log "unpacking $name"
  tar -C "$tree.tmp" -xJf "$tarball"
  [ -f "$tree.tmp/slurm-$version/configure" ] || die "$name holds no slurm-$version/configure"
  # Configured where it stays: the Makefiles hold the tree's absolute path.
  mv "$tree.tmp/slurm-$version" "$tree"
  rm -rf "$tree.tmp"
  log "configuring Slurm $version (about half a minute)"
  (cd "$tree" && ./configure --prefix=/usr --libdir="/usr/lib/$arch" --sysconfdir=/etc/slurm \
      --localstatedir=/var --runstatedir=/run --disable-debug --enable-pam \
      --enable-multiple-slurmd >configure.log 2>&1) ||
    die "configure failed; see $tree/configure.log"
  touch "$tree/.configured"
fi

if [ ! -f "$tree/.installed" ] || ! slurmctld -V 2>/dev/null | grep -qx "slurm $version"; then
  log "building Slurm $version (4 to 8 minutes on 2 cores; log: $tree/make.log)"
  make -C "$tree" -j"$(nproc)" >"$tree/make.log" 2>&1 ||
    { tail -n 30 "$tree/make.log" >&2; die "make failed; see $tree/make.log"; }
  make -C "$tree" install >"$tree/install.log" 2>&1 ||
    { tail -n 30 "$tree/install.log" >&2; die "make install failed; see $tree/install.log"; }
  ldconfig
  touch "$tree/.installed"
fi
slurmctld -V | grep -qx "slurm $version" ||
  die "slurmctld -V says '$(slurmctld -V 2>&1)', not slurm $version"
grep -q "define SLURM_VERSION_STRING \"$version\"" "$tree/config.h" ||
  die "cached tree $tree is not Slurm $version"
mkdir -p "$CACHE/slurm-src"
echo "$tree" >"$CACHE/slurm-src/current"
log "ready: Slurm $version built from $name, configured source tree below"
echo "$tree"
