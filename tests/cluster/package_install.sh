#!/usr/bin/env bash
# The .deb works as installed: cpack builds it from this build, dpkg installs it into a
# fresh root, and a mini-cluster of its own runs with nothing but the package's files and
# the installed Slurm: PluginDir is the root's plugin directory before Slurm's, the slurm.conf
# keys are the package's ai-suite.conf fragment, plugstack.conf is its plugstack.conf.d
# line (path under the root, arguments as shipped), ai_select.conf is its example. Then
# slurmctld has the root's select_ai_cons_tres.so mapped and has read ai_select.conf, a
# job's --ai-comm reaches the select plugin, the tasks get the SPANK plugin's rank
# environment, a bad --ai-comm is refused at submission, and the root's ai-explain reads
# the plugin's record. The cluster is torn down whatever happens.
source "$(dirname "$0")/lib.sh"

repo=$(cd "$(dirname "$0")/../.." && pwd)
build=$(dirname "${SLURM_AI_PLUGIN_DIR:?set by ctest to the plugin directory of the build}")
root=$WORK/root
dir=$(mktemp -d /tmp/mc-pkg.XXXXXX)
rmdir "$dir"
cleanup() { "$repo/tools/minicluster" down --dir "$dir" >/dev/null 2>&1 || true; }
trap cleanup EXIT

# --- the package, installed into a fresh root -------------------------------------------
(cd "$build" && cpack -G DEB -B "$WORK/cpack" >"$WORK/cpack.log" 2>&1) ||
    fail "cpack failed: $(tail -n 20 "$WORK/cpack.log")"
deb=$(ls "$WORK"/cpack/slurm-ai_*.deb)
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates"
: >"$root/var/lib/dpkg/status"
# The fresh root has no Slurm: its Depends are checked by build.package_deb against the host.
dpkg --root="$root" --force-depends -i "$deb" >"$WORK/dpkg.log" 2>&1 ||
    fail "dpkg --root could not install $(basename "$deb"): $(tail -n 20 "$WORK/dpkg.log")"
select_so=$(dpkg --root="$root" -L slurm-ai | grep '/select_ai_cons_tres\.so$') ||
    fail "the installed package lists no select_ai_cons_tres.so"
plugin_dir=$root$(dirname "$select_so")
examples=$root/usr/share/slurm-ai/slurm.conf.d
[ -f "$plugin_dir/spank_ai.so" ] || fail "no spank_ai.so beside the select plugin in $plugin_dir"

# --- its configuration ---------------------------------------------------------------
args=(--dir "$dir" --nodes 4 --plugin-dir "$plugin_dir" --extra-conf DebugFlags=SelectType)
# PluginDir is the root's directory (--plugin-dir), PlugStackConfig the cluster's own.
while IFS= read -r line; do
    case ${line%%=*} in
        PluginDir | PlugStackConfig) ;;
        SelectType) args+=(--select "${line#*=}") ;;
        *) args+=(--extra-conf "$line") ;;
    esac
done < <(grep -E '^[A-Za-z]+=' "$examples/ai-suite.conf")
read -r -a spank < <(grep -E '^(required|optional) ' "$examples/plugstack.conf.d/ai.conf")
[ ${#spank[@]} -ge 2 ] || fail "no plugin line in the package's plugstack.conf.d/ai.conf"
args+=(--spank "$root${spank[1]}")
for a in "${spank[@]:2}"; do args+=(--spank-arg "$a"); done
while IFS= read -r line; do args+=(--ai-conf "$line"); done < <(grep -E '^[A-Za-z]+=' "$examples/ai_select.conf")
args+=(--ai-conf "NodeTopology=$repo/tests/inputs/minicluster-node.xml")

"$repo/tools/minicluster" up "${args[@]}" >"$WORK/up.log" 2>&1 ||
    fail "the package's cluster did not come up: $(tail -n 30 "$WORK/up.log")"
export SLURM_CONF=$dir/etc/slurm.conf
state=$(sed -n 's/^state_dir=//p' "$dir/cluster.info")
ctld_log=$dir/log/slurmctld.log

# --- what slurmctld loaded ----------------------------------------------------------
config=$(scontrol show config)
get() { awk -F' = ' -v k="$1" '$1 ~ "^"k" *$" {print $2}' <<<"$config"; }
expect_eq "SelectType" "$(sed -n 's/^SelectType=//p' "$examples/ai-suite.conf")" "$(get SelectType)"
slurm_plugin_dir=$(sed -n 's/^SLURM_AI_SLURM_PLUGIN_DIR:PATH=//p' "$build/CMakeCache.txt")
expect_eq "PluginDir" "$plugin_dir:$slurm_plugin_dir" "$(get PluginDir)"
expect_contains "SchedulerParameters" "$(get SchedulerParameters)" permit_job_expansion
expect_eq "JobRequeue" 1 "$(get JobRequeue)"
ctld_pid=$(cat "$dir/run/slurmctld.pid")
grep -c " $plugin_dir/select_ai_cons_tres\.so\$" "/proc/$ctld_pid/maps" >/dev/null ||
    fail "slurmctld ($ctld_pid) has no $plugin_dir/select_ai_cons_tres.so mapped"
grep -c "select/ai_cons_tres: loaded $dir/etc/ai_select.conf" "$ctld_log" >/dev/null ||
    fail "slurmctld.log does not say the package's ai_select.conf was loaded: $(grep ai_cons_tres "$ctld_log" | tail -n 5)"

# --- a job through the package's plugins ----------------------------------------------
out=$WORK/job.out
id=$(sbatch --parsable -N2 --ntasks-per-node=1 --gpus-per-node=2 \
    --ai-comm=allreduce:bytes=256M -o "$out" \
    --wrap='srun bash -c "echo \$SLURMD_NODENAME \$RANK \$WORLD_SIZE"') ||
    fail "sbatch with --ai-comm failed"
wait_job_gone "$id" 90
expect_eq "job $id end state" COMPLETED \
    "$(sed -n "s/^JobId=$id .*JobState=\([A-Z_]*\).*/\1/p" "$dir/log/jobcomp.log" | tail -n1)"
rec=$state/ai_select/jobs/$id.json
[ -f "$rec" ] || fail "the select plugin wrote no record $rec"
expect_eq "--ai-comm as the select plugin saw it" allreduce "$(json_get "$rec" hints.comm.pattern)"
expect_eq "bytes" $((256 << 20)) "$(json_get "$rec" hints.comm.bytes)"
expect_eq "ranks and world size the tasks got from spank_ai.so" "0 2
1 2" "$(awk '{print $2, $3}' "$out" | sort)"

if sbatch --ai-comm=allgather -o /dev/null --wrap=true >"$WORK/bad.out" 2>&1; then
    fail "sbatch accepted --ai-comm=allgather"
fi
expect_contains "the SPANK plugin's refusal" "$(cat "$WORK/bad.out")" "--ai-comm='allgather'"

explained=$("$root/usr/bin/ai-explain" --state-dir "$state" "$id") ||
    fail "the package's ai-explain failed for job $id"
expect_contains "ai-explain $id" "$explained" "comm allreduce"
pass "$(basename "$deb") from a fresh root: job $id placed, ranks from spank_ai.so"
