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
pass "$select_type from $SLURM_AI_PLUGIN_DIR"
