#!/usr/bin/env bash
# Each plugin exports exactly Slurm's plugin interface: nothing of the suite's C++ (or of
# the C++ runtime) may leak into slurmctld's or slurmstepd's symbol namespace.
set -euo pipefail
plugin=$1 allowed=$2
exported=$(nm -D --defined-only "$plugin" | awk '{print $3}' | sort)
[ -n "$exported" ] || { echo "FAIL: $plugin exports nothing"; exit 1; }
extra=$(grep -Ev "^($allowed)\$" <<<"$exported" || true)
if [ -n "$extra" ]; then
    echo "FAIL: $plugin exports symbols outside its interface:"
    echo "$extra" | head -20
    exit 1
fi
echo "PASS: $(basename "$plugin") exports $(wc -l <<<"$exported") symbols: $(tr '\n' ' ' <<<"$exported")"
