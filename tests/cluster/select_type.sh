#!/usr/bin/env bash
# The controller runs the suite's select plugin, loaded from the build directory.
source "$(dirname "$0")/lib.sh"

config=$(scontrol show config)
select_type=$(awk -F' = ' '$1 ~ /^SelectType +$/ {print $2}' <<<"$config")
expect_eq "SelectType" "select/ai_cons_tres" "$select_type"
plugin_dir=$(awk -F' = ' '$1 ~ /^PluginDir +$/ {print $2}' <<<"$config")
expect_contains "PluginDir" "$plugin_dir" "$SLURM_AI_PLUGIN_DIR"
# Loaded, and forwarding to cons_tres (not merely configured).
grep -q 'select/ai_cons_tres: forwarding to .*select_cons_tres.so' \
    "$MINICLUSTER_DIR/log/slurmctld.log" ||
    fail "slurmctld.log has no sign that select/ai_cons_tres loaded cons_tres"

# What Slurm allows only where cons_tres runs, slurmctld asks the plugin: from 25.05 its id
# (running_cons_tres(), which the plugin answers with cons_tres's 109), before that its
# SELECT_CR_PLUGIN info (forwarded to cons_tres). CPUs and memory per GPU are such a case.
if slurm_at_least 25 5; then
    grep -c 'select/ai_cons_tres: loading as select/ai_cons_tres (plugin id 109)' \
        "$MINICLUSTER_DIR/log/slurmctld.log" >/dev/null ||
        fail "slurmctld.log has no 'loading as select/ai_cons_tres (plugin id 109)'"
fi
id=$(sbatch --parsable -N1 --gpus=2 --cpus-per-gpu=2 --mem-per-gpu=100 -o /dev/null \
    --wrap='sleep 1' 2>&1) || fail "sbatch --cpus-per-gpu --mem-per-gpu refused: $id"
wait_job_gone "$id"
expect_eq "job $id end state" COMPLETED "$(job_end_state "$id")"
tres=$(scontrol -o show job "$id" | grep -oE '(Alloc)?TRES=[^ ]*' | head -n1)
for want in cpu=4, mem=200M; do
    expect_contains "job $id (--gpus=2 --cpus-per-gpu=2 --mem-per-gpu=100)" "$tres" "$want"
done
pass "$select_type from $SLURM_AI_PLUGIN_DIR; as cons_tres for Slurm: $tres"
