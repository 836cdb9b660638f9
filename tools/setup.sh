#!/usr/bin/env bash
# Installs everything the suite needs to build and test on Debian 12, as root, with no
# prompts. Idempotent: a second run checks and returns quickly.
#
# It also fetches Debian's source package of exactly the installed Slurm version and
# configures it once: the select plugin needs slurmctld's internal headers and config.h,
# which no binary package ships. The configured tree is cached under
#   ${SLURM_AI_CACHE:-/var/cache/slurm-ai}/slurm-src/<version>/
# and its path is printed on the last line (also written to .../slurm-src/current).
#
# With SLURM_AI_SLURM_TARBALL (a release of ../shared/data/slurm-src, in the roots
# tools/slurm-root.sh makes for 25.11 and 26.05) it builds and installs SchedMD's packages
# of that release instead of Debian's (tools/slurm-from-source.sh) and prints the
# configured tree.
set -euo pipefail

log() { printf 'setup: %s\n' "$*" >&2; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "run as root (it installs Debian packages)"
export DEBIAN_FRONTEND=noninteractive

CACHE=${SLURM_AI_CACHE:-/var/cache/slurm-ai}

. /etc/os-release
case "${VERSION_CODENAME:-}" in
  bookworm)  # Debian 12: Slurm 22.05, the host CI runs on
    BOOST=libboost1.81-dev
    # Catch2 2 (unit tests), libFuzzer, and debootstrap for tools/slurm-root.sh
    # and the PyTorch trainer of the tests (tests/trainer/ddp_trainer.py: gloo on CPU)
    # and Prometheus (promtool) and headless Chromium for ai-metrics' endpoint and map
    EXTRA=(catch2 clang libclang-rt-14-dev debootstrap python3-torch prometheus chromium)
    ;;
  trixie)  # Debian 13: Slurm 24.11, in the root tools/slurm-root.sh makes
    BOOST=libboost1.83-dev
    EXTRA=(curl ca-certificates)  # its Catch2 is 3: no unit tests there (the host runs them)
    ;;
  *) die "Debian ${VERSION_CODENAME:-?}: expected bookworm (12) or trixie (13)" ;;
esac

TARBALL=${SLURM_AI_SLURM_TARBALL:-}
if [ -n "$TARBALL" ]; then
  # Slurm from SchedMD's tarball, as SchedMD's own packages (tools/slurm-from-source.sh
  # installs their build dependencies from the tarball's debian/control)
  SLURM=(munge libmunge-dev bzip2 xz-utils)
else
  # Debian's Slurm daemons, clients and headers
  SLURM=(slurmctld slurmd slurm-client munge libmunge-dev libslurm-dev slurm-wlm-basic-plugins-dev)
fi
PACKAGES=(
  "${SLURM[@]}"
  # topology sources
  libhwloc-dev hwloc libxml2-dev libyaml-dev libibverbs-dev libibumad-dev libibmad-dev libibnetdisc-dev infiniband-diags
  # C++ libraries
  "$BOOST" libfmt-dev libcli11-dev nlohmann-json3-dev
  # build and test tools
  build-essential cmake pkg-config dpkg-dev graphviz
  python3 procps iproute2 util-linux
  # packaging (cpack's shlibdeps needs file), compose.yaml parsing, man page formatting
  file python3-yaml groff-base
  "${EXTRA[@]}"
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed' ||
    missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  log "installing: ${missing[*]}"
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The Debian packages start daemons where an init system exists; the suite runs its own.
for svc in slurmctld slurmd munge; do
  if command -v service >/dev/null && [ -d /run/systemd/system ]; then
    service "$svc" stop >/dev/null 2>&1 || true
  fi
done

if [ -n "$TARBALL" ]; then
  exec bash "$(dirname "$0")/slurm-from-source.sh" "$TARBALL"
fi

version=$(dpkg-query -W -f='${Version}' slurmctld)   # e.g. 22.05.8-4+deb12u3
upstream=${version%%-*}                               # 22.05.8
tree="$CACHE/slurm-src/$version"

if [ ! -f "$tree/.configured" ]; then
  if ! apt-get source --print-uris -qq "slurm-wlm=$version" >/dev/null 2>&1; then
    # Debian's images ship only binary sources; add deb-src entries for the same suites.
    if [ -f /etc/apt/sources.list.d/debian.sources ]; then
      sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources \
        >/etc/apt/sources.list.d/slurm-ai-deb-src.sources
    elif [ -f /etc/apt/sources.list ]; then
      grep -E '^deb ' /etc/apt/sources.list | sed 's/^deb /deb-src /' \
        >/etc/apt/sources.list.d/slurm-ai-deb-src.list
    else
      die "no apt source found to derive a deb-src entry from"
    fi
    apt-get update -qq
  fi
  rm -rf "$tree" "$tree.tmp"
  mkdir -p "$tree.tmp"
  log "fetching Debian's source of slurm-wlm $version"
  if ! (cd "$tree.tmp" && apt-get source -qq "slurm-wlm=$version" >/dev/null 2>&1); then
    # Some mirrors serve a release's orig tarball but not its .dsc (seen for 24.11.5):
    # the upstream source, without Debian's patches (none of them touches the headers
    # or structures the plugin is built against).
    orig="slurm-wlm_$upstream.orig.tar.gz"
    log "apt-get source failed; fetching $orig from the pool"
    curl -fsS -o "$tree.tmp/$orig" \
      "${SLURM_AI_DEBIAN_MIRROR:-http://deb.debian.org/debian}/pool/main/s/slurm-wlm/$orig" ||
      die "neither apt-get source slurm-wlm=$version nor $orig could be fetched"
    tar -C "$tree.tmp" -xzf "$tree.tmp/$orig"
  fi
  src=$(find "$tree.tmp" -maxdepth 1 -type d \( -name "slurm-wlm-$upstream*" -o \
        -name "slurm-slurm-${upstream//./-}*" \) | head -n1)
  [ -n "$src" ] || die "unpacked source of slurm-wlm $upstream not found in $tree.tmp"
  log "configuring $src (about a minute)"
  (cd "$src" && ./configure --prefix=/usr --sysconfdir=/etc/slurm \
      --enable-multiple-slurmd >"$tree.tmp/configure.log" 2>&1) ||
    die "configure failed; see $tree.tmp/configure.log"
  mv "$src" "$tree"
  mv "$tree.tmp/configure.log" "$tree/"
  rm -rf "$tree.tmp"
  touch "$tree/.configured"
fi
grep -q "define SLURM_VERSION_STRING \"$upstream\"" "$tree/config.h" ||
  die "cached tree $tree is not Slurm $upstream"
mkdir -p "$CACHE/slurm-src"
echo "$tree" >"$CACHE/slurm-src/current"
log "ready: Slurm $version, configured source tree below"
echo "$tree"
