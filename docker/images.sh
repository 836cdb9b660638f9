#!/usr/bin/env bash
# Builds the mini-cluster's images from nothing but Debian's archive, as root, on a host
# with a Docker engine and no registry:
#
#   1. the base image slurm-ai/debian:<suite>: debootstrap --variant=minbase into a folder,
#      then `docker import` (kept: later runs reuse it; --rebuild-base makes it again);
#   2. the suite's .deb from the native build, the way the native rig builds it
#      (tools/build.sh for the host's Slurm; tools/slurm-root.sh for another series);
#   3. the suite's image slurm-ai-minicluster:<series> on that base (docker/Dockerfile):
#      Slurm's daemons, munge, python3-torch, the .deb, the entrypoint and the trainers.
#      Docker's layer cache keeps the package layer while only the suite changes.
#
#   docker/images.sh [--series 22.05|24.11] [--build-dir DIR] [--rebuild-base] [--runtime-only]
#
# Prints the images and their sizes at the end. Logs go to DIR/docker-images/.
#   --series S       22.05 (default): Debian 12 (bookworm) and its Slurm, the host's own;
#                    24.11: Debian 13 (trixie) and its Slurm, built in tools/slurm-root.sh
#   --build-dir DIR  the native build to package (default: build, or build-slurm24.11
#                    inside the 24.11 root)
#   --rebuild-base   debootstrap the base image again even when it exists
#   --runtime-only   only the base image and the Dockerfile's stage of Debian packages,
#                    which need no build of the suite (tools/run-tests.sh starts this
#                    at its beginning, so that it runs while the suite builds)
# Environment: SLURM_AI_DEBIAN_MIRROR (default http://deb.debian.org/debian),
# SLURM_AI_CACHE (default /var/cache/slurm-ai: the debootstrap folder while importing).
set -euo pipefail

PROG=images.sh
log() { printf '%s: %s\n' "$PROG" "$*" >&2; }
die() { printf '%s: error: %s\n' "$PROG" "$*" >&2; exit 1; }
usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; }

here=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$here/.." && pwd)
SERIES=22.05
REBUILD_BASE=0
RUNTIME_ONLY=0
BUILD=""
MIRROR=${SLURM_AI_DEBIAN_MIRROR:-http://deb.debian.org/debian}
CACHE=${SLURM_AI_CACHE:-/var/cache/slurm-ai}

while [ $# -gt 0 ]; do
  case $1 in
    --series) [ $# -ge 2 ] || die "--series needs a value"; SERIES=$2; shift 2 ;;
    --build-dir) [ $# -ge 2 ] || die "--build-dir needs a value"; BUILD=$2; shift 2 ;;
    --rebuild-base) REBUILD_BASE=1; shift ;;
    --runtime-only) RUNTIME_ONLY=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
case $SERIES in
  22.05) SUITE=bookworm; BUILD=${BUILD:-build} ;;
  24.11) SUITE=trixie; BUILD=${BUILD:-build-slurm24.11} ;;
  *) die "--series '$SERIES': expected 22.05 (Debian 12) or 24.11 (Debian 13)" ;;
esac
[ "$(id -u)" = 0 ] || die "run as root (debootstrap, docker)"
command -v docker >/dev/null || die "no docker command: install docker.io"
docker info >/dev/null 2>&1 || die "the Docker engine does not answer (docker info)"

BASE=slurm-ai/debian:$SUITE
IMAGE=slurm-ai-minicluster:$SERIES
cd "$SRC"
BUILD=$(realpath -m -- "$BUILD")   # relative to the source tree
LOGS=$BUILD/docker-images
mkdir -p "$LOGS"
# One run at a time: a second waits for the first and then finds its images cached.
exec 9>"$LOGS/.lock"
flock 9

# -----------------------------------------------------------------------------------------
# 1. The base image. The folder gets the same apt sources as a Debian host (the suite's
# .deb depends on exactly the Slurm of the point release and its security updates), and
# no documentation or recommends, which keeps the image small.
base_image() {
  if [ "$REBUILD_BASE" = 0 ] && docker image inspect "$BASE" >/dev/null 2>&1; then
    log "base image $BASE exists (--rebuild-base makes it again)"
    return
  fi
  command -v debootstrap >/dev/null || apt-get install -y -qq debootstrap >/dev/null
  local root=$CACHE/docker/rootfs-$SUITE t0=$SECONDS
  rm -rf "$root"
  mkdir -p "$root"
  log "debootstrap --variant=minbase $SUITE (log: $LOGS/debootstrap.log)"
  debootstrap --variant=minbase "$SUITE" "$root" "$MIRROR" >"$LOGS/debootstrap.log" 2>&1 ||
    { tail -n 20 "$LOGS/debootstrap.log" >&2; die "debootstrap $SUITE failed"; }
  cat >"$root/etc/apt/sources.list" <<EOF
deb $MIRROR $SUITE main
deb $MIRROR $SUITE-updates main
deb ${MIRROR%/debian}/debian-security $SUITE-security main
EOF
  cat >"$root/etc/apt/apt.conf.d/90slurm-ai" <<'EOF'
APT::Install-Recommends "false";
APT::Install-Suggests "false";
Acquire::Languages "none";
EOF
  cat >"$root/etc/dpkg/dpkg.cfg.d/90slurm-ai" <<'EOF'
path-exclude /usr/share/doc/*
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
EOF
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
  tar -C "$root" --numeric-owner -c . |
    docker import -c 'ENV DEBIAN_FRONTEND=noninteractive' -c 'CMD ["bash"]' - "$BASE" >/dev/null
  rm -rf "$root"
  log "imported $BASE ($((SECONDS - t0)) s)"
}

# 2. The .deb, from the native build (configured and built when it is not yet).
suite_deb() {
  local out=$LOGS/deb
  rm -rf "$out"
  mkdir -p "$out"
  if [ "$SERIES" = 22.05 ]; then
    [ -f "$BUILD/CMakeCache.txt" ] || BUILD_DIR=$BUILD tools/build.sh >&2
    docker/build-image.sh --build-dir "$BUILD" --out "$out" build
  else
    [[ $BUILD == "$SRC"/* ]] || die "--build-dir $BUILD: must be inside $SRC (the root sees it as /src)"
    tools/slurm-root.sh "$SERIES" >/dev/null
    [ -f "$BUILD/CMakeCache.txt" ] || tools/slurm-root.sh "$SERIES" -- tests/slurm-root/run.sh "$SERIES" build >&2
    tools/slurm-root.sh "$SERIES" -- docker/build-image.sh --build-dir "/src/${BUILD#"$SRC"/}" \
      --out "/src/${out#"$SRC"/}" build
  fi
  DEB=$(ls "$out"/slurm-ai_*.deb)
}

# 3. The suite's image. The context is a folder of just what the image holds, not the
# source tree (whose build folders are large). --runtime-only: its first stage only.
suite_image() {
  local ctx=$LOGS/context t0=$SECONDS what=$IMAGE
  rm -rf "$ctx"
  mkdir -p "$ctx/deb" "$ctx/docker" "$ctx/tests/inputs" "$ctx/tests/trainer"
  if [ "$RUNTIME_ONLY" = 1 ]; then
    what="the runtime stage of $IMAGE"
  else
    cp "$DEB" "$ctx/deb/"
  fi
  cp docker/build-image.sh docker/entrypoint.sh docker/Dockerfile "$ctx/docker/"
  cp tests/inputs/minicluster-node.xml "$ctx/tests/inputs/"
  cp tests/trainer/*.py tests/trainer/*.sh "$ctx/tests/trainer/"
  log "docker build $what FROM $BASE (log: $LOGS/docker-build.log)"
  if [ "$RUNTIME_ONLY" = 1 ]; then
    docker build --force-rm --build-arg BASE="$BASE" --target runtime -f "$ctx/docker/Dockerfile" "$ctx"
  else
    docker build --force-rm --build-arg BASE="$BASE" -t "$IMAGE" -f "$ctx/docker/Dockerfile" "$ctx"
  fi >"$LOGS/docker-build.log" 2>&1 ||
    { tail -n 30 "$LOGS/docker-build.log" >&2; die "docker build of $what failed"; }
  log "built $what ($((SECONDS - t0)) s)"
}

base_image
[ "$RUNTIME_ONLY" = 1 ] || suite_deb
suite_image
docker image ls --format '{{.Repository}}:{{.Tag}}\t{{.Size}}' |
  grep -E "^($BASE|$IMAGE)\b" | sort | sed 's/^/image /'
