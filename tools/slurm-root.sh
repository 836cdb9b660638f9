#!/usr/bin/env bash
# A Debian root with another Slurm series than the host's, for building and testing the
# suite against it: Debian 13 (trixie) with Debian's own Slurm 24.11 packages, or with
# SchedMD's own packages of Slurm 25.11 or 26.05, built from the release tarball in
# ../shared/data/slurm-src (no archive here serves those; tools/slurm-from-source.sh); and
# the configured source tree of exactly that Slurm (tools/setup.sh, run inside the root).
#
#   tools/slurm-root.sh [SERIES]        prepare (idempotent; cached), print the root's path
#   tools/slurm-root.sh SERIES -- CMD   run CMD inside the root (the checkout is /src there)
#
# SERIES: 24.11 (Debian's packages), 25.11 (25.11.7) or 26.05 (26.05.3), each in a Debian 13
# root of its own. The roots live in ${SLURM_AI_CACHE:-/var/cache/slurm-ai}/roots/ and are
# made with debootstrap --variant=minbase from deb.debian.org, as root. Building SchedMD's
# packages takes 10 to 15 minutes more the first time (then cached in the root).
set -euo pipefail

log() { printf 'slurm-root: %s\n' "$*" >&2; }
die() { printf 'slurm-root: error: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "run as root (debootstrap, chroot, mounts)"
cd "$(dirname "$0")/.."
repo=$PWD
series=${1:-24.11}
shift || true
tarball=""  # a release of ../shared/data/slurm-src, as the root sees it (/shared)
case "$series" in
  24.11) suite=trixie ;;
  25.11) suite=trixie tarball=slurm-25.11.7.tar.xz ;;
  26.05) suite=trixie tarball=slurm-26.05.3.tar.xz ;;
  *) die "SERIES '$series': expected 24.11, 25.11 or 26.05 (the host's own Slurm needs no root)" ;;
esac
if [ -n "$tarball" ] && [ ! -f "$repo/../shared/data/slurm-src/$tarball" ]; then
  die "Slurm $series is built from ../shared/data/slurm-src/$tarball, which is missing"
fi
CACHE=${SLURM_AI_CACHE:-/var/cache/slurm-ai}
root="$CACHE/roots/debian-$suite-slurm$series"
MIRROR=${SLURM_AI_DEBIAN_MIRROR:-http://deb.debian.org/debian}

# One user of the root at a time: each mounts /proc, /dev and the checkout into it and
# unmounts them when it ends. tools/run-tests.sh prepares the root in the background while
# the suite compiles; the tests that use it wait here until that is done.
mkdir -p "$CACHE/roots"
exec 9>"$CACHE/roots/.debian-$suite-slurm$series.lock"
if ! flock -n 9; then
  log "waiting for another user of $root"
  flock 9
fi

# /proc, /sys, /dev and the checkout inside the root, for as long as this script runs.
mounted=()
mount_in() {  # mount_in SOURCE TARGET [OPTIONS...]
  local target=$root$2
  mkdir -p "$target"
  mountpoint -q "$target" && return 0
  mount "${@:3}" "$1" "$target"
  mounted=("$target" "${mounted[@]}")
}
unmount_all() {
  for m in "${mounted[@]}"; do umount -l "$m" 2>/dev/null || true; done
}
trap unmount_all EXIT
enter() {
  mount_in proc /proc -t proc
  mount_in sysfs /sys -t sysfs
  mount_in /dev /dev --bind
  mount_in devpts /dev/pts -t devpts
  mount_in "$repo" /src --bind
  [ -d "$repo/../shared" ] && mount_in "$(cd "$repo/../shared" && pwd)" /shared --bind
  cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
  # The host's name must resolve inside as outside: slurmctld 24.11 resolves the submit
  # host's name to answer srun, retrying for 10 s with its locks held, and in the
  # meantime marks every node of the mini-cluster not responding.
  cp /etc/hosts "$root/etc/hosts" 2>/dev/null || true
  local host
  host=$(hostname)
  chroot "$root" getent hosts "$host" >/dev/null || echo "127.0.0.1 $host" >>"$root/etc/hosts"
}

if [ ! -f "$root/.debootstrapped" ]; then
  command -v debootstrap >/dev/null || apt-get install -y -qq debootstrap >/dev/null
  log "debootstrap $suite into $root (a minute or two)"
  rm -rf "$root"
  mkdir -p "$root"
  debootstrap --variant=minbase "$suite" "$root" "$MIRROR" >"$CACHE/roots/$suite.debootstrap.log" 2>&1 ||
    die "debootstrap failed; see $CACHE/roots/$suite.debootstrap.log"
  # Packages must not start daemons in the root: the mini-cluster starts its own.
  printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
  chmod +x "$root/usr/sbin/policy-rc.d"
  touch "$root/.debootstrapped"
fi

enter
# tools/setup.sh inside: Debian's Slurm packages, the suite's dependencies, the configured
# source tree. Idempotent there too; its last line is the tree's path inside the root.
tree=$(chroot "$root" env SLURM_AI_CACHE=/var/cache/slurm-ai \
       ${tarball:+SLURM_AI_SLURM_TARBALL=/shared/data/slurm-src/$tarball} \
       bash /src/tools/setup.sh | tail -n1)
[ -n "$tree" ] || die "tools/setup.sh inside $root printed no source tree"

if [ "${1:-}" = "--" ]; then
  shift
  # The root's own cache, whatever the host's SLURM_AI_CACHE says.
  # Without the lock's descriptor: a daemon the command leaves behind must not hold it.
  chroot "$root" env -C /src SLURM_AI_CACHE=/var/cache/slurm-ai SLURM_AI_SLURM_TREE="$tree" "$@" 9>&-
else
  echo "$root"
fi
