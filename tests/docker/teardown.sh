#!/usr/bin/env bash
# ctest fixture docker.teardown: `down -v` removes the containers, the network and the
# volumes (state, munge key, configuration); the shared folder goes too. The images stay.
source "$(dirname "$0")/lib.sh"
trap - EXIT
dc --profile spare down -v --remove-orphans
rm -rf "$SLURM_AI_SHARED_DIR"
