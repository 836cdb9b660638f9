#!/usr/bin/env bash
# ai-topo on topograph's models, end to end: `convert` of large.yaml gives exactly the block
# and tree topology.conf that topograph's own CI expects from it (block names from
# ^srv([0-9]{2}) -> rack${1}, BlockSizes=8,16,32, as its values file sets; switches named
# switch.<level>.<n> as its OCI simulation names them), a block topology.conf read back
# converts to itself, topology.yaml carries both, `show --json nvl72.yaml` reports 4 NVLink
# domains of 18 nodes and example.out 4 rails, and `draw` shows both.
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
# topology.yaml: large.yaml written as one file with both forms reads back as both configs.
"$tool" convert --to yaml --switch-names levels --block-name '^srv([0-9]{2})' 'rack${1}' \
    --block-sizes 8,16,32 "$dir/large.yaml" -o "$tmp/topology.yaml" >/dev/null
"$tool" convert --no-header "$tmp/topology.yaml" >"$tmp/yaml-tree.conf"
diff -u <(grep -v '^#' "$dir/expected.slinky-oci-sim-tree.conf") "$tmp/yaml-tree.conf" ||
    fail "the tree of large.yaml's topology.yaml differs from expected.slinky-oci-sim-tree.conf"
"$tool" convert --to block --no-header "$tmp/topology.yaml" >"$tmp/yaml-block.conf"
diff -u <(grep -v '^#' "$dir/expected.slinky-dra-block.conf") "$tmp/yaml-block.conf" ||
    fail "the blocks of large.yaml's topology.yaml differ from expected.slinky-dra-block.conf"

# Rails and domains: show --json counts them, draw shows them.
"$tool" show --json "$dir/example.out" >"$tmp/example.json"
python3 - "$tmp/example.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))[0]["topology"]
assert t["rails"] == 4, t["rails"]
assert sorted(len(r) for r in t["rail_leaves"]) == [7, 8, 8, 8], t["rail_leaves"]
PY
"$tool" draw "$dir/example.out" -o "$tmp/example.dot" >/dev/null
for r in 0 1 2 3; do
    n=$(grep -c "^rail $r\", shape=box" "$tmp/example.dot" || true)  # a leaf label's last line
    [ "$n" -ge 7 ] || fail "draw example.out: $n leaves marked rail $r, expected 7 or 8"
done
"$tool" draw "$dir/nvl72.yaml" -o "$tmp/nvl72.dot" >/dev/null
[ "$(grep -c 'NVLink nvl-[12]-[12] (18 hosts)' "$tmp/nvl72.dot")" = 4 ] ||
    fail "draw nvl72.yaml does not show its 4 NVLink domains of 18 hosts"

"$tool" convert --to block "$dir/large.yaml" --block-name '([a-z' x 2>"$tmp/err" && fail "a bad --block-name pattern was accepted"
grep -q "block name pattern='(\[a-z'" "$tmp/err" || fail "no clear error for a bad pattern: $(cat "$tmp/err")"
echo "PASS: large.yaml -> expected block and tree configs, also through topology.yaml; block file round trip; nvl72.yaml: 4 NVLink domains of 18 nodes, drawn; example.out: 4 rails, drawn"
