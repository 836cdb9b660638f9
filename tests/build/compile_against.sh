#!/usr/bin/env bash
# The plugins compile against another Slurm's configured source tree (one this machine
# does not run): a build of the select and SPANK plugins only, under -Werror, with the
# select plugin exporting exactly the entry points of that release's select API and
# reporting the plugin id that release needs (cons_tres's from 25.05, where slurmctld
# loads only the configured plugin and asks its id whether cons_tres runs).
#
#   compile_against.sh SOURCE_DIR SLURM_TREE [BUILD_DIR]
#
# SLURM_TREE: a Slurm source tree, ./configure'd (config.h present).
set -euo pipefail
src=$1 tree=$2
fail() { echo "FAIL: $*"; exit 1; }
[ -f "$tree/config.h" ] || fail "$tree is not a configured Slurm tree (no config.h)"
version=$(sed -n 's/^#define SLURM_VERSION_STRING "\(.*\)"$/\1/p' "$tree/config.h")
[ -n "$version" ] || fail "no SLURM_VERSION_STRING in $tree/config.h"
build=${3:-$(mktemp -d /tmp/slurm-ai-compile.XXXXXX)}
mkdir -p "$build"

# What select_api.h must give for this release.
read -r entry_points plugin_id < <("$(dirname "$0")/select_api_expect.sh" "$version") ||
    fail "Slurm $version: no select API generation is known for it"

cmake -S "$src" -B "$build" -DSLURM_AI_SLURM_SRC_DIR="$tree" -DSLURM_AI_MATCH_INSTALLED_SLURM=OFF \
    -DSLURM_AI_BUILD_TESTS=OFF -DSLURM_AI_WERROR=ON >"$build/configure.log" 2>&1 ||
    { tail -n 20 "$build/configure.log"; fail "configure against Slurm $version failed"; }
cmake --build "$build" -j"$(nproc)" --target slurm_ai_select_plugin slurm_ai_spank_plugin \
    >"$build/build.log" 2>&1 ||
    { grep -E 'error' "$build/build.log" | head -n 30; fail "the plugins do not compile against Slurm $version"; }

select_so=$build/plugins/select_ai_cons_tres.so
spank_so=$build/plugins/spank_ai.so
[ -f "$select_so" ] && [ -f "$spank_so" ] || fail "no plugins in $build/plugins"
n=$(nm -D --defined-only "$select_so" | grep -c ' select_p_')
[ "$n" = "$entry_points" ] ||
    fail "Slurm $version: the select plugin exports $n select_p_ entry points, expected $entry_points"
# plugin_id is a const uint32_t in .rodata: read its four bytes.
read -r addr size < <(nm -D -S --defined-only "$select_so" | awk '$4 == "plugin_id" {print $1, $2}')
[ "$size" = 0000000000000004 ] || fail "plugin_id is not a uint32_t (size $size)"
id=$(python3 - "$select_so" "$addr" <<'PY'
import struct, subprocess, sys
so, addr = sys.argv[1], int(sys.argv[2], 16)
out = subprocess.run(['readelf', '-SW', so], capture_output=True, text=True).stdout
for line in out.splitlines():
    f = line.replace('[ ', '[').split()
    if len(f) > 6 and f[0].startswith('[') and f[1].startswith('.'):
        vaddr, off, size = int(f[3], 16), int(f[4], 16), int(f[5], 16)
        if vaddr <= addr < vaddr + size and f[2] != 'NOBITS':
            with open(so, 'rb') as fh:
                fh.seek(off + addr - vaddr)
                print(struct.unpack('<I', fh.read(4))[0])
            break
PY
)
[ "$id" = "$plugin_id" ] || fail "Slurm $version: plugin_id is '$id', expected $plugin_id"
nm -D --defined-only "$spank_so" | grep -q ' slurm_spank_init$' ||
    fail "spank_ai.so built against Slurm $version does not export slurm_spank_init"
echo "PASS: Slurm $version: select plugin with $n entry points and plugin_id $id; spank_ai.so"
