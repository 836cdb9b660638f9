#!/usr/bin/env bash
# The steps that make the mini-cluster image, as a script: docker/images.sh runs `build`
# on the host (packaging the native build), docker/Dockerfile runs `install check` in the
# image, and CI runs all three on a host without Docker too (tests/build/
# docker_build_steps.sh), so that what CI checks is what the image does.
#
#   docker/build-image.sh [options] STEP...
#
# Steps:
#   deps     tools/setup.sh: Debian's Slurm packages, the build dependencies and the
#            configured Slurm source tree of exactly the installed version (as a native build)
#   build    configure (when --build-dir holds no build yet: Release, no tests) and build
#            the suite, then make the .deb with cpack into --out
#   install  install Slurm's daemons, munge and the .deb from --out with apt, which checks
#            the .deb's Depends (exactly the Slurm it was built for), then drop apt's
#            caches; put the entrypoint, the compute nodes' topology and the trainers
#            (tests/trainer/: the PyTorch one and its batch script) into /opt/slurm-ai
#   check    the installed suite: each tool answers --help, both plugins are in Slurm's
#            PluginDir, the contrib examples are in /usr/share/slurm-ai, and
#            docker/entrypoint.sh renders a configuration that slurmd accepts
#
# Options:
#   --src DIR        the source tree (default: this script's parent)
#   --build-dir DIR  build directory for `build` (default /tmp/slurm-ai-build)
#   --out DIR        where `build` puts the .deb and `install` takes it from (default /out)
#   --root DIR       install into DIR instead of this system, for hosts that must not
#                    change: `install` only simulates apt (the Depends are still resolved
#                    against this host's packages) and dpkg installs into DIR; `check`
#                    looks there. The Dockerfile never passes it.
set -euo pipefail

PROG=build-image.sh
log() { printf '%s: %s\n' "$PROG" "$*" >&2; }
die() { printf '%s: error: %s\n' "$PROG" "$*" >&2; exit 1; }
usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; }

here=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$here/.." && pwd)
BUILD=/tmp/slurm-ai-build
OUT=/out
ROOT=""
# What a node of the mini-cluster runs; slurm-client gives sbatch/srun on the controller.
RUNTIME_PACKAGES=(slurmctld slurmd slurm-client munge)
STEPS=(deps build install check)

steps=()
while [ $# -gt 0 ]; do
  case $1 in
    --src | --build-dir | --out | --root)
      [ $# -ge 2 ] || die "$1 needs a value"
      case $1 in
        --src) SRC=$(realpath -- "$2") ;;
        --build-dir) BUILD=$(realpath -m -- "$2") ;;
        --out) OUT=$(realpath -m -- "$2") ;;
        --root) ROOT=$(realpath -m -- "$2") ;;
      esac
      shift 2 ;;
    --list-steps) printf '%s\n' "${STEPS[@]}"; exit 0 ;;
    -h | --help) usage; exit 0 ;;
    -*) die "unknown option $1 (see --help)" ;;
    *) [[ " ${STEPS[*]} " == *" $1 "* ]] || die "unknown step '$1': expected ${STEPS[*]}"
       steps+=("$1"); shift ;;
  esac
done
[ ${#steps[@]} -gt 0 ] || { usage >&2; exit 2; }
[ "$(id -u)" = 0 ] || die "run as root (apt, dpkg)"
export DEBIAN_FRONTEND=noninteractive

the_deb() {
  local debs=("$OUT"/slurm-ai_*.deb)
  [ -f "${debs[0]}" ] || die "no slurm-ai_*.deb in $OUT (run the build step first)"
  [ ${#debs[@]} = 1 ] || die "several .deb files in $OUT: ${debs[*]}"
  echo "${debs[0]}"
}

step_deps() {
  bash "$SRC/tools/setup.sh" >/dev/null
}

step_build() {
  mkdir -p "$OUT"
  if [ ! -f "$BUILD/CMakeCache.txt" ]; then
    cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DSLURM_AI_BUILD_TESTS=OFF \
      >"$OUT/configure.log" 2>&1 ||
      { tail -n 30 "$OUT/configure.log" >&2; die "configure failed"; }
  fi
  cmake --build "$BUILD" -j"$(nproc)" >"$OUT/build.log" 2>&1 ||
    { tail -n 30 "$OUT/build.log" >&2; die "build failed"; }
  rm -f "$OUT"/slurm-ai_*.deb
  # cpack's staging goes under --out too, so that a build directory in use is left alone.
  (cd "$BUILD" && cpack -G DEB -B "$OUT/cpack" >"$OUT/cpack.log" 2>&1) ||
    { tail -n 30 "$OUT/cpack.log" >&2; die "cpack failed"; }
  mv "$OUT"/cpack/slurm-ai_*.deb "$OUT/"
  rm -rf "$OUT/cpack"
  log "built $(the_deb)"
}

step_install() {
  local deb; deb=$(the_deb)
  if [ -n "$ROOT" ]; then
    # apt resolves the .deb's Depends against this host's packages without changing them.
    apt-get install -s -y "${RUNTIME_PACKAGES[@]}" "$deb" >"$OUT/apt-simulate.log" 2>&1 ||
      { cat "$OUT/apt-simulate.log" >&2; die "apt cannot install $deb here"; }
    mkdir -p "$ROOT/var/lib/dpkg/info" "$ROOT/var/lib/dpkg/updates"
    touch "$ROOT/var/lib/dpkg/status"
    # The fresh root has no Slurm; the Depends were checked against the host just above.
    dpkg --root="$ROOT" --force-depends -i "$deb" >"$OUT/dpkg.log" 2>&1 ||
      { cat "$OUT/dpkg.log" >&2; die "dpkg --root $ROOT -i $deb failed"; }
  else
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${RUNTIME_PACKAGES[@]}" "$deb" >/dev/null
    apt-get clean
    rm -rf /var/lib/apt/lists/*
  fi
  # The entrypoint, the compute nodes' topology (the 4-GPU node the tests use), the trainer.
  install -D -m 0755 "$here/entrypoint.sh" "$ROOT/opt/slurm-ai/entrypoint.sh"
  install -D -m 0644 "$SRC/tests/inputs/minicluster-node.xml" "$ROOT/opt/slurm-ai/node.xml"
  install -D -m 0755 -t "$ROOT/opt/slurm-ai/trainer" "$SRC/tests/trainer/ddp_trainer.py" \
    "$SRC/tests/trainer/ddp_job.sh"
  log "installed $(basename "$deb")${ROOT:+ into $ROOT}"
}

# Stops the munged of PIDFILE and waits (up to 10 s) until it has ended: kill only asks.
stop_munged() {
  local pid i
  pid=$(cat "$1") && kill "$pid" 2>/dev/null || return 0
  for ((i = 0; i < 100; i++)); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
}

step_check() {
  local r=$ROOT t plugin_dir
  for t in ai-topo ai-place ai-explain ai-fit ai-bench-placement ai-minicluster; do
    [ -x "$r/usr/bin/$t" ] || die "check: $r/usr/bin/$t is missing"
    "$r/usr/bin/$t" --help >/dev/null || die "check: $t --help failed"
  done
  plugin_dir=$(dpkg-deb -c "$(the_deb)" | awk '{print $6}' |
               sed -n 's|^\.\(/.*\)/select_ai_cons_tres\.so$|\1|p')
  [ -n "$plugin_dir" ] || die "check: the .deb holds no select_ai_cons_tres.so"
  for t in select_ai_cons_tres.so spank_ai.so; do
    [ -f "$r$plugin_dir/$t" ] || die "check: $r$plugin_dir/$t is missing"
  done
  [ -f "$plugin_dir/select_cons_tres.so" ] ||
    die "check: Debian's select_cons_tres.so is not in $plugin_dir, where the plugin looks first"
  for t in ai-suite.conf ai_select.conf gres.conf topology.conf plugstack.conf.d/ai.conf; do
    [ -f "$r/usr/share/slurm-ai/slurm.conf.d/$t" ] || die "check: example $t is missing"
  done

  # The configuration a controller starts with, for two compute nodes; then slurmd, with the
  # installed select plugin loaded, reads it as compute node c1 and prints its GPUs.
  local tmp out gpus
  tmp=$(mktemp -d)
  mkdir -p "$tmp/dev"
  SLURM_AI_ROOT=$r SLURM_AI_CONF_DIR=$tmp/etc SLURM_AI_DEV_DIR=$tmp/dev \
    SLURM_AI_NODE_XML=$r/opt/slurm-ai/node.xml SLURM_AI_COMPUTE_NODES=2 \
    "$r/opt/slurm-ai/entrypoint.sh" render 2>"$tmp/render.log" ||
    { cat "$tmp/render.log" >&2; die "check: entrypoint.sh render failed"; }
  gpus=$(grep -c ' File=' "$tmp/etc/gres.conf")
  # Character devices as on a compute container; a plain file where the build may not
  # make devices (slurmd then also complains, but reads the same GPUs).
  for ((t = 0; t < gpus; t++)); do
    mknod "$tmp/dev/nvidia$t" c 195 "$t" 2>/dev/null || : >"$tmp/dev/nvidia$t"
  done
  # Since Slurm 23.02 slurmd -G opens an auth context: a munged of its own, for the check.
  mungekey -c -k "$tmp/munge.key"
  munged --force --key-file "$tmp/munge.key" --socket "$tmp/munge.sock" \
    --pid-file "$tmp/munged.pid" --seed-file "$tmp/munge.seed" --log-file "$tmp/munged.log" ||
    die "check: munged does not start: $(cat "$tmp/munged.log" 2>/dev/null)"
  echo "AuthInfo=socket=$tmp/munge.sock" >>"$tmp/etc/slurm.conf"
  out=$(cd "$tmp" && slurmd -G -f "$tmp/etc/slurm.conf" -N c1 2>&1) ||
    { stop_munged "$tmp/munged.pid"; echo "$out" >&2
      die "check: slurmd -G does not accept the rendered configuration"; }
  # munged removes its socket and writes its seed as it ends: gone before $tmp goes.
  stop_munged "$tmp/munged.pid"
  [ "$(grep -o 'Links=[-0-9,]*' <<<"$out")" = "$(grep -o 'Links=[-0-9,]*' "$tmp/etc/gres.conf")" ] ||
    { echo "$out" >&2; die "check: slurmd's GPUs differ from gres.conf's: $(cat "$tmp/etc/gres.conf")"; }
  rm -rf "$tmp"
  log "checked the installed suite${ROOT:+ in $ROOT}: slurmd reads $gpus GPUs of c1"
}

for s in "${steps[@]}"; do
  log "step $s"
  "step_$s"
done
