#!/usr/bin/env bash
# The as-cons-tres build (docs/admin-guide.md, "Installing as select/cons_tres"): the
# suite's select plugin as select/cons_tres, from a directory first in PluginDir, with
# select_ai_cons_tres.so and Slurm's own plugins after it, as the package lays them out.
# On a cluster of its own, beside a stock cluster of the same shape:
# - slurmctld runs the suite's plugin under cons_tres's name and id (scontrol show config,
#   the plugin's log lines), and it forwards to Slurm's own cons_tres, never to a build of
#   the suite (select_ai_cons_tres.so is loaded beside it up to 24.11 and must skip it);
# - a job with --ai-comm hints is placed by the engine;
# - what Slurm gates on cons_tres's id works as on stock: `scontrol create reservation
#   CoreCnt=4`, which Slurm 22.05's scontrol refuses for select/ai_cons_tres, gives the
#   same reservation as on stock, and a job inside it runs on the reservation's nodes.
source "$(dirname "$0")/lib.sh"

repo=$(cd "$(dirname "$0")/../.." && pwd)
t0=$SECONDS
alias_dir=$SLURM_AI_PLUGIN_DIR/as-cons-tres
[ -f "$alias_dir/select_cons_tres.so" ] || fail "no as-cons-tres build at $alias_dir"

side_by_side alias
declare -A LABEL=([A]="suite cluster (as select/cons_tres)" [B]="stock cluster (select/cons_tres)")

"$repo/tools/minicluster" up --dir "$base/suite" --nodes 4 \
    --plugin-dir "$alias_dir:$SLURM_AI_PLUGIN_DIR" --select select/cons_tres \
    --spank "$SLURM_AI_PLUGIN_DIR/spank_ai.so" --extra-conf DebugFlags=SelectType \
    --ai-conf "NodeTopology=$repo/tests/inputs/minicluster-node.xml" >"$WORK/up-suite.log" 2>&1 ||
    fail "the as-cons-tres cluster did not come up: $(tail -n 20 "$WORK/up-suite.log")"
"$repo/tools/minicluster" up --dir "$base/stock" --nodes 4 --select select/cons_tres \
    >"$WORK/up-stock.log" 2>&1 ||
    fail "the stock cluster did not come up: $(tail -n 20 "$WORK/up-stock.log")"

# --- the suite's plugin, under cons_tres's name, forwarding to Slurm's own -------------------
expect_eq "SelectType of the ${LABEL[A]}" select/cons_tres \
    "$(on A scontrol show config | sed -n 's/^SelectType *= *//p')"
log=$base/suite/log/slurmctld.log
grep -c "select/ai_cons_tres: loaded $base/suite/etc/ai_select.conf" "$log" >/dev/null ||
    fail "slurmctld did not run the suite's plugin (no 'loaded ai_select.conf' line in $log)"
grep -c "select/ai_cons_tres: loading as select/cons_tres (plugin id 109)" "$log" >/dev/null ||
    fail "no 'loading as select/cons_tres (plugin id 109)' in $log"
targets=$(sed -n 's/.*select\/ai_cons_tres: forwarding to \([^ ]*\).*/\1/p' "$log" | sort -u)
[ -n "$targets" ] || fail "no 'forwarding to' line in $log"
for t in $targets; do  # the as-cons-tres build lies under the suite's plugin directory too
    case $t in
        "$SLURM_AI_PLUGIN_DIR"/*) fail "a build of the suite forwards to a file of the suite's: $t" ;;
    esac
done
if ! slurm_at_least 25 5; then  # up to 24.11 every select plugin in PluginDir is loaded
    grep -c "select/ai_cons_tres: skipping .*as-cons-tres/select_cons_tres.so is" "$log" >/dev/null ||
        fail "select_ai_cons_tres.so, loaded beside the as-cons-tres build, did not skip it (no 'skipping' line)"
fi

# --- a hinted job is placed by the engine -----------------------------------------------------
id=$(on A sbatch --parsable -N2 --ai-comm=allreduce:bytes=1G -o /dev/null --wrap='sleep 1' 2>&1) ||
    fail "sbatch --ai-comm refused on the ${LABEL[A]}: $id"
deadline=$((SECONDS + 60))
while on A squeue -h -j "$id" -o %i 2>/dev/null | grep . >/dev/null; do
    [ $SECONDS -lt $deadline ] || fail "job $id still queued after 60 s: $(on A squeue -h -j "$id" -o '%T %r')"
    sleep 1
done
record=$(on A scontrol -o show job "$id")
expect_contains "job $id" "$record" "JobState=COMPLETED"
expect_contains "job $id's SystemComment (what the select plugin decided)" "$record" "ai: engine placed"

# --- CoreCnt=: the reservation stock makes, and a job inside it -------------------------------
for c in A B; do
    out=$(on $c scontrol create reservation ReservationName=alias_cores StartTime=now \
        Duration=10 Users=root CoreCnt=4 2>&1) ||
        fail "reservation CoreCnt=4 refused on the ${LABEL[$c]}: $out"
done
resv_a=$(resv_fields "${CONF[A]}" alias_cores)
expect_eq "reservation CoreCnt=4 (scontrol show reservation, suite vs stock)" \
    "$(resv_fields "${CONF[B]}" alias_cores)" "$resv_a"
expect_contains "reservation CoreCnt=4 on the ${LABEL[A]}" "$resv_a" "CoreCnt=4 "
id=$(on A sbatch --parsable --reservation=alias_cores -N1 -n1 -o /dev/null --wrap='hostname' 2>&1) ||
    fail "sbatch --reservation=alias_cores refused on the ${LABEL[A]}: $id"
deadline=$((SECONDS + 60))
while on A squeue -h -j "$id" -o %i 2>/dev/null | grep . >/dev/null; do
    [ $SECONDS -lt $deadline ] || fail "job $id in alias_cores still queued after 60 s"
    sleep 1
done
record=$(on A scontrol -o show job "$id")
expect_contains "job $id in alias_cores" "$record" "JobState=COMPLETED"
ran=$(sed -n 's/.* NodeList=\([^ ]*\) .*/\1/p' <<<"$record")
held=$(on A scontrol -o show reservation alias_cores | sed -n 's/.* Nodes=\([^ ]*\) .*/\1/p')
on A scontrol show hostnames "$held" | grep -xF "$ran" >/dev/null ||
    fail "job $id ran on $ran, outside alias_cores's nodes $held"

pass "Slurm $SLURM_SERIES: as select/cons_tres (id 109) the suite placed job with hints by the engine, forwarded to $(tr '\n' ' ' <<<"$targets")and made the same CoreCnt=4 reservation as stock ($resv_a), job inside on $ran ($((SECONDS - t0))s)"
