#!/usr/bin/env bash
# ctest fixture docker.setup: builds the images (docker/images.sh: cached after the first
# time) from the build tree BUILD_DIR, removes what an earlier run of this project left,
# starts the compose cluster and waits until its health check says every node is idle.
#
#   tests/docker/setup.sh BUILD_DIR
source "$(dirname "$0")/lib.sh"
trap - EXIT
build=$1
series=${SLURM_AI_IMAGE##*:}
t0=$SECONDS
"$REPO/docker/images.sh" --series "$series" --build-dir "$build" >"$HOST_DIR/images.log" 2>&1 ||
    fail "docker/images.sh failed: $(tail -n 30 "$HOST_DIR/images.log")"
grep '^image ' "$HOST_DIR/images.log"
echo "images ready in $((SECONDS - t0)) s"

dc --profile spare down -v --remove-orphans >/dev/null 2>&1 || true
dc up -d >"$HOST_DIR/up.log" 2>&1 || fail "docker-compose up failed: $(cat "$HOST_DIR/up.log")"
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
