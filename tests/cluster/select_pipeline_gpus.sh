#!/usr/bin/env bash
# A pipeline job's consecutive stages land on neighbouring nodes (one leaf change in rank
# order), and a GPU job gets NVLink-linked GPUs (pairs 0-1 and 2-3 of the emulated node),
# as the plugin's record and ai-explain show.
source "$(dirname "$0")/lib.sh"
explain=$SLURM_AI_BIN_DIR/ai-explain

# Occupy n1 (leaf1) and n5, n6 (leaf2): three free nodes on leaf1, two on leaf2.
hold=()
for n in n1 n5 n6; do
    hold+=("$(sbatch --parsable -w "$n" --exclusive -o /dev/null --wrap='sleep 120')")
done
trap 'scancel "${hold[@]}" 2>/dev/null || true' EXIT
id=$(sbatch --parsable -N4 --gpus-per-node=2 --ai-comm=pipeline:stages=4,bytes=256M \
    -o /dev/null --wrap='sleep 2')
wait_job_gone "$id" 90
rec=$("$explain" --json "$id")
ranks=$(json_get <(echo "$rec") decision.ranks)
# n2-n4 are leaf1, n7/n8 leaf2: the stages may cross the spine once, not more.
leaf_seq=$(tr ' ' '\n' <<<"$ranks" | sed 's/:.*//; s/^n//' | awk '{print ($1 <= 4) ? 1 : 2}' | uniq | grep -c .)
expect_eq "leaf runs in the pipeline's rank order ($ranks)" 2 "$leaf_seq"
expect_eq "pattern" pipeline "$(json_get <(echo "$rec") decision.pattern)"
"$explain" "$id" | grep -q "rank order:  $ranks" || fail "ai-explain does not show the rank order"

# GPU 0 of n8 busy: a 2-GPU job there must get the linked pair 2,3, not 1,2.
g0=$(sbatch --parsable -w n8 --gpus=1 -o /dev/null --wrap='sleep 60')
hold+=("$g0")
for _ in $(seq 20); do [ "$(squeue -h -j "$g0" -o %T)" = RUNNING ] && break; sleep 1; done
id2=$(sbatch --parsable -w n8 --gpus=2 -o /dev/null --wrap='sleep 1')
wait_job_gone "$id2" 60
gpus=$(json_get "$STATE_DIR/ai_select/jobs/$id2.json" gpus)
expect_eq "GPUs of the 2-GPU job" "n8:2,3" "$gpus"
pass "pipeline ranks $ranks; GPUs $gpus"
