#!/usr/bin/env bash
# ShapeProfile= on the real daemons: measured step times by shape change how a job that
# lets Slurm split its GPUs is spread, and slurmctld allocates the engine's split, not
# cons_tres's. The profile says 4 GPUs on one 4-GPU node run twice as long as 2 + 2 (the
# kind of thing the Pollux testbed measured for two nodes against three or four).
#  1. Without it, sbatch -N1-4 -c16 --gpus=4 runs on one node with its 4 GPUs.
#  2. With it and ShapeHistory=0 (scontrol reconfigure), the same job runs on two nodes
#     of one leaf with 2 GPUs each, as the job's record of gres_bit_alloc shows. cons_tres
#     alone fills the first node first (3 + 1: with -c16 a task's cores span both
#     sockets, so every GPU of a node is near them); the plugin moves the counts, and the
#     log says so.
# ShapeHistory=0 keeps the earlier tests out of it: with a day of history the engine also
# keeps room for the sizes every test before this one submitted, and for some sizes (-N4
# --gpus-per-node=1, for one) a spread keeps more room than a packed node, so what the day
# decides depends on the tests that ran before (in CI's order it still spread the job).
# The unit test "ShapeProfile= is read once" ([service]) shows the history on a known one.
source "$(dirname "$0")/lib.sh"

conf=$MINICLUSTER_DIR/etc/ai_select.conf
cp "$conf" "$WORK/good.conf"
restore() {
    cancel_named ai-shape
    cp "$WORK/good.conf" "$conf"
    scontrol reconfigure >/dev/null 2>&1 || true
}
trap restore EXIT

# Submits the job, waits until it runs, prints "<id> <record's GPUs>", then cancels it. It
# runs until cancelled: a job that ends by itself can end between two looks of a loaded
# machine.
run_split() {
    local id gpus=""
    id=$(sbatch --parsable -J ai-shape -N1-4 -c16 --gpus=4 -o /dev/null --wrap='sleep 300') ||
        fail "sbatch -N1-4 -c16 --gpus=4 was refused"
    for _ in $(seq 60); do
        [ "$(squeue -h -j "$id" -o %T)" = RUNNING ] &&
            gpus=$(json_get "$STATE_DIR/ai_select/jobs/$id.json" gpus 2>/dev/null || true)
        [ -n "$gpus" ] && break
        sleep 0.5
    done
    [ -n "$gpus" ] || fail "job $id never ran with a record: $(squeue -h -j "$id" -o '%T %r')"
    scancel "$id"
    wait_job_gone "$id" 60
    echo "$id $gpus"
}

# GPUs per node of a record's "n1:0,1 n2:2,3", sorted: "2 2".
counts() {
    tr ' ' '\n' <<<"$1" | awk -F: 'NF == 2 {print split($2, g, ",")}' | sort -n | tr '\n' ' ' |
        sed 's/ $//'
}
# Leaf of each node of the record (n1-n4 leaf 1, n5-n8 leaf 2), distinct.
leaves() {
    tr ' ' '\n' <<<"$1" | sed -n 's/^n\([0-9]*\):.*/\1/p' | awk '{print ($1 <= 4) ? 1 : 2}' |
        sort -u | grep -c .
}

read -r plain plain_gpus < <(run_split)
expect_eq "GPUs per node of job $plain without a profile ($plain_gpus)" "4" \
    "$(counts "$plain_gpus")"

printf 'gpus_per_host,shape,step\n4,4,2.0\n4,2+2,1.0\n4,3+1,1.6\n4,1+1+1+1,1.4\n' \
    >"$MINICLUSTER_DIR/etc/ai_shapes.csv"
printf 'ShapeProfile=ai_shapes.csv\nShapeHistory=0\n' >>"$conf"
reconfigure_until "$MINICLUSTER_DIR/log/slurmctld.log" "4 measured shapes rate placements" ||
    fail "slurmctld.log does not say the profile was read"

read -r spread spread_gpus < <(run_split)
expect_eq "GPUs per node of job $spread with the profile ($spread_gpus)" "2 2" \
    "$(counts "$spread_gpus")"
expect_eq "leaves of job $spread ($spread_gpus)" 1 "$(leaves "$spread_gpus")"
grep -q "JobId=$spread: the engine's GPUs on .* and its GPU counts per node" \
    "$MINICLUSTER_DIR/log/slurmctld.log" ||
    fail "slurmctld's log does not say the engine's GPU counts replaced cons_tres's"

# A profile that does not read is refused at reconfigure, naming its line.
printf 'gpus_per_host,shape,step\n4,2+2,fast\n' >"$MINICLUSTER_DIR/etc/ai_shapes.csv"
reconfigure_until "$MINICLUSTER_DIR/log/slurmctld.log" "ai_shapes.csv:2: step='fast'" ||
    fail "slurmctld.log does not name line 2 of the bad profile"
scontrol ping | grep -q UP || fail "slurmctld is not up"
pass "without a profile: $plain_gpus; with it: $spread_gpus (one leaf); a bad profile refused"
