#!/usr/bin/env bash
# The two builds of the select plugin for one Slurm release give Slurm what that release
# expects (select_api_expect.sh): every select_p_ entry point of its select API, and the
# identity each build is loaded under: select/ai_cons_tres with the generation's plugin
# id, and the as-cons-tres build as select/cons_tres with cons_tres's id, 109.
#
#   check_select_plugins.sh VERSION SELECT_AI_CONS_TRES_SO AS_CONS_TRES_SO
set -euo pipefail
version=$1 ai_so=$2 alias_so=$3
here=$(dirname "$0")
fail() { echo "FAIL: $*"; exit 1; }

read -r entry_points plugin_id < <("$here/select_api_expect.sh" "$version") ||
    fail "Slurm $version: no select API generation is known for it"
for f in "$ai_so" "$alias_so"; do [ -f "$f" ] || fail "no plugin $f"; done
got_ai=$(python3 "$here/plugin_identity.py" "$ai_so") || fail "cannot read $ai_so: $got_ai"
got_alias=$(python3 "$here/plugin_identity.py" "$alias_so") || fail "cannot read $alias_so: $got_alias"
[ "$got_ai" = "select/ai_cons_tres $plugin_id $entry_points" ] ||
    fail "Slurm $version: $ai_so is '$got_ai' (type, id, entry points), expected 'select/ai_cons_tres $plugin_id $entry_points'"
[ "$got_alias" = "select/cons_tres 109 $entry_points" ] ||
    fail "Slurm $version: $alias_so is '$got_alias' (type, id, entry points), expected 'select/cons_tres 109 $entry_points'"
echo "PASS: Slurm $version: $(basename "$ai_so") is '$got_ai', $(basename "$alias_so") is '$got_alias' (type, id, entry points)"
