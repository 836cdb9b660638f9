#!/usr/bin/env bash
# ctest fixture docker.setup: builds the images (docker/images.sh: cached after the first
# time) from the build tree BUILD_DIR, removes what an earlier run of this project left,
# starts the compose cluster and waits until its health check says every node is idle.
#
#   tests/docker/setup.sh BUILD_DIR
given_net=${SLURM_AI_NET:-}  # before lib.sh reads an earlier run's choice
source "$(dirname "$0")/lib.sh"
trap - EXIT
build=$1
series=${SLURM_AI_IMAGE##*:}
t0=$SECONDS
"$REPO/docker/images.sh" --series "$series" --build-dir "$build" >"$HOST_DIR/images.log" 2>&1 ||
    fail "docker/images.sh failed: $(tail -n 30 "$HOST_DIR/images.log")"
grep '^image ' "$HOST_DIR/images.log"
echo "images ready in $((SECONDS - t0)) s"

# The cluster's /24: SLURM_AI_NET when the caller names one, else the first of 10.213.7,
# 10.213.8, ... that no other Docker network on this engine holds (a site's own, or another
# checkout's cluster); later tests read the choice back (lib.sh).
up() {
    dc --profile spare down -v --remove-orphans >/dev/null 2>&1 || true
    dc up -d >"$HOST_DIR/up.log" 2>&1
}
if [ -n "$given_net" ]; then
    export SLURM_AI_NET=$given_net
    up || fail "docker-compose up failed on SLURM_AI_NET=$SLURM_AI_NET: $(cat "$HOST_DIR/up.log")"
else
    for third in $(seq 7 254); do
        export SLURM_AI_NET=10.213.$third
        up && break
        grep -q 'Pool overlaps' "$HOST_DIR/up.log" ||
            fail "docker-compose up failed: $(cat "$HOST_DIR/up.log")"
        echo "$SLURM_AI_NET.0/24 is taken by another Docker network; trying the next"
        [ "$third" -lt 254 ] || fail "no free /24 in 10.213.7.0-10.213.254.0 for the cluster"
    done
fi
echo "SLURM_AI_NET=$SLURM_AI_NET" >"$NET_FILE"
t1=$SECONDS
health() { [ "$(docker inspect -f '{{.State.Health.Status}}' "$(container_of controller)")" = healthy ]; }
until health; do
    if [ $((SECONDS - t1)) -ge 180 ]; then
        dc logs --no-color --tail 30 >&2 || true
        fail "the cluster is not healthy (every node idle) after 180 s"
    fi
    sleep 2
done
echo "cluster healthy $((SECONDS - t1)) s after up"
ctl sinfo -N
