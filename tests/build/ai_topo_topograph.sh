#!/usr/bin/env bash
# ai-topo on topograph's models, end to end: `convert` of large.yaml gives exactly the block
# and tree topology.conf that topograph's own CI expects from it (block names from
# ^srv([0-9]{2}) -> rack${1}, BlockSizes=8,16,32, as its values file sets; switches named
# switch.<level>.<n> as its OCI simulation names them), a block topology.conf read back
# converts to itself, and `show --json nvl72.yaml` reports 4 NVLink domains of 18 nodes.
#
#   ai_topo_topograph.sh AI_TOPO DATA_DIR
set -euo pipefail
tool=$1 dir=$2/fabric/topograph
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$tool" convert --to block --block-name '^srv([0-9]{2})' 'rack${1}' --block-sizes 8,16,32 \
    --no-header "$dir/large.yaml" >"$tmp/block.conf"
diff -u "$dir/expected.slinky-dra-block.conf" "$tmp/block.conf" ||
    fail "ai-topo convert --to block large.yaml differs from expected.slinky-dra-block.conf"
"$tool" convert --switch-names levels --no-header "$dir/large.yaml" -o "$tmp/tree.conf" >/dev/null
diff -u "$dir/expected.slinky-oci-sim-tree.conf" "$tmp/tree.conf" ||
    fail "ai-topo convert --switch-names levels large.yaml differs from expected.slinky-oci-sim-tree.conf"

# The block file read back (comments are not part of the model) writes the same blocks.
"$tool" convert --to block --no-header "$dir/expected.slinky-dra-block.conf" >"$tmp/again.conf"
diff -u <(grep -v '^#' "$dir/expected.slinky-dra-block.conf") "$tmp/again.conf" ||
    fail "a block topology.conf read and written again changed"

"$tool" show --json "$dir/nvl72.yaml" >"$tmp/nvl72.json"
python3 - "$tmp/nvl72.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))[0]["topology"]
d = t["nvlink_domains"]
assert [x["size"] for x in d] == [18] * 4, [(x["name"], x["size"]) for x in d]
assert len({n for x in d for n in x["nodes"]}) == 72, "a node in two domains"
assert len(t["hosts"]) == 72 and t["max_level"] == 2, (len(t["hosts"]), t["max_level"])
PY
"$tool" convert --to block "$dir/large.yaml" --block-name '([a-z' x 2>"$tmp/err" && fail "a bad --block-name pattern was accepted"
grep -q "block name pattern='(\[a-z'" "$tmp/err" || fail "no clear error for a bad pattern: $(cat "$tmp/err")"
echo "PASS: large.yaml -> expected block and tree configs; block file round trip; nvl72.yaml: 4 NVLink domains of 18 nodes"
