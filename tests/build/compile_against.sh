#!/usr/bin/env bash
# The plugins compile against another Slurm's configured source tree (one this machine
# does not run): a build of the select plugin (both builds) and the SPANK plugin only,
# under -Werror, each select plugin exporting exactly the entry points of that release's
# select API and reporting the type and id that release needs (check_select_plugins.sh).
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

cmake -S "$src" -B "$build" -DSLURM_AI_SLURM_SRC_DIR="$tree" -DSLURM_AI_MATCH_INSTALLED_SLURM=OFF \
    -DSLURM_AI_BUILD_TESTS=OFF -DSLURM_AI_WERROR=ON >"$build/configure.log" 2>&1 ||
    { tail -n 20 "$build/configure.log"; fail "configure against Slurm $version failed"; }
cmake --build "$build" -j"$(nproc)" --target slurm_ai_select_plugin slurm_ai_select_as_cons_tres slurm_ai_spank_plugin \
    >"$build/build.log" 2>&1 ||
    { grep -E 'error' "$build/build.log" | head -n 30; fail "the plugins do not compile against Slurm $version"; }

select_so=$build/plugins/select_ai_cons_tres.so
alias_so=$build/plugins/as-cons-tres/select_cons_tres.so
spank_so=$build/plugins/spank_ai.so
[ -f "$spank_so" ] || fail "no spank_ai.so in $build/plugins"
"$(dirname "$0")/check_select_plugins.sh" "$version" "$select_so" "$alias_so" >"$build/identity.log" ||
    fail "$(cat "$build/identity.log")"
nm -D --defined-only "$spank_so" | grep -q ' slurm_spank_init$' ||
    fail "spank_ai.so built against Slurm $version does not export slurm_spank_init"
echo "PASS: Slurm $version: $(sed 's/^PASS: Slurm [^:]*: //' "$build/identity.log"); spank_ai.so"
