#!/usr/bin/env bash
# Trains the learned placement scorers whose judgement `ai-sim report` prints (section 8)
# into contrib/slurm.conf.d/placement-model-<scenario>[-nosrr].json: for nvl72,
# nvl72-rails and rail-h100 (the report's fabrics and node files, host links of 400 Gb/s,
# contention on), with SCALE's SRR terms (weight 0.1) and without, each trained at one
# size on Philly from 2017-09-24 and judged at 2, 4 and 16 times it (ai-sim(1),
# train-place). Two trainings at a time; each log goes beside its model as .log under
# BUILD_DIR. Builds ai-sim first, as evaluate.sh does. About 10 minutes on 2 cores.
#
#   bench/ai-sim/train-placement-models.sh [SCENARIO...]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$root/build}
data=$(realpath "${SLURM_AI_SHARED_DATA:-$root/../shared/data}")
if [ ! -f "$build/CMakeCache.txt" ]; then
    cmake -S "$root" -B "$build" -DSLURM_AI_BUILD_PLUGINS=OFF >/dev/null
fi
cmake --build "$build" --target ai-sim -j"$(nproc)" >/dev/null
scenarios=("$@")
[ ${#scenarios[@]} -gt 0 ] || scenarios=(nvl72 nvl72-rails rail-h100)

# The report's fabric of each scenario (bench/ai-sim/report.cpp) at its training size.
cluster() {
    case $1 in
        nvl72) echo "--shape-of $data/fabric/topograph/nvl72.yaml --node $root/tests/inputs/gb200-tray-topo.xml --hosts 36" ;;
        nvl72-rails) echo "--shape-of $root/tests/inputs/gb200-nvl72-rails.conf --node $root/tests/inputs/gb200-tray-topo.xml --hosts 36" ;;
        rail-h100) echo "--shape-of $data/fabric/topograph/example.out --node $root/tests/inputs/dgx-h100-topo.xml --hosts 16" ;;
        *) echo "train-placement-models: unknown scenario '$1' (nvl72, nvl72-rails, rail-h100)" >&2; return 1 ;;
    esac
}

train() {  # train SCENARIO WEIGHT SUFFIX
    local out=$root/contrib/slurm.conf.d/placement-model-$1$3.json
    # shellcheck disable=SC2046  # the cluster's options are words
    "$build/bin/ai-sim" train-place $(cluster "$1") --host-gbps 400 --contention \
        --windows 8 --validation 2 --held-out 2 --sizes 2 4 16 --imitation-epochs 60 \
        --rounds 30 --temperature 1 --learning-rate 0.01 --regularizer "$2" --threads 1 \
        --out "$out" >"$build/placement-model-$1$3.log" 2>&1 ||
        { tail -n 5 "$build/placement-model-$1$3.log" >&2; return 1; }
    tail -n 3 "$build/placement-model-$1$3.log"
}

for s in "${scenarios[@]}"; do
    cluster "$s" >/dev/null
    train "$s" 0.1 "" &
    with=$!
    train "$s" 0 -nosrr &
    without=$!
    wait "$with"
    wait "$without"
done
