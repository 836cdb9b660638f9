#!/usr/bin/env bash
# Runs one golden case of a command-line tool and compares what it printed (stdout, then
# stderr, then its exit status) with tests/golden/cases/<case>.out.
#
#   run_golden.sh TOOL CASE DATA_DIR
#
# cases/<case>.args holds the tool's arguments, one per line; @DATA@ stands for the
# shared data directory, @INPUTS@ for tests/inputs and @TMP@ for a scratch directory. Paths under them are written
# back as @DATA@ and @TMP@ in the output, so the golden files do not depend on where the
# checkout is.
#
# To regenerate every golden file after an intended change, run the tests with
# SLURM_AI_UPDATE_GOLDEN=1 (e.g. SLURM_AI_UPDATE_GOLDEN=1 ctest -L golden) and review the
# diff before committing it.
set -euo pipefail
tool=$1 case=$2 data=$3
here=$(cd "$(dirname "$0")" && pwd)
args_file=$here/cases/$case.args
golden=$here/cases/$case.out
inputs=$(cd "$here/../inputs" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

args=()
while IFS= read -r line || [ -n "$line" ]; do
    [ -n "$line" ] || continue
    line=${line//@DATA@/$data}
    line=${line//@TMP@/$tmp}
    line=${line//@INPUTS@/$inputs}
    args+=("$line")
done <"$args_file"

rc=0
"$tool" "${args[@]}" >"$tmp/stdout" 2>"$tmp/stderr" || rc=$?
{
    cat "$tmp/stdout"
    if [ -s "$tmp/stderr" ]; then
        echo "--- stderr"
        cat "$tmp/stderr"
    fi
    echo "--- exit $rc"
} | sed -e "s|$data|@DATA@|g" -e "s|$inputs|@INPUTS@|g" -e "s|$tmp|@TMP@|g" >"$tmp/actual"

if [ "${SLURM_AI_UPDATE_GOLDEN:-}" = 1 ]; then
    cp "$tmp/actual" "$golden"
    echo "updated $golden"
    exit 0
fi
[ -f "$golden" ] || { echo "FAIL: no golden file $golden (run with SLURM_AI_UPDATE_GOLDEN=1)"; exit 1; }
if ! diff -u "$golden" "$tmp/actual"; then
    echo "FAIL: $case differs from $golden (intended? rerun with SLURM_AI_UPDATE_GOLDEN=1)"
    exit 1
fi
echo "PASS: $case"
