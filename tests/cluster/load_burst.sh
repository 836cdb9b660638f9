#!/usr/bin/env bash
# A burst of 500 submissions with mixed --ai-* hints (bench/ai-bench/load.sh, the CI-sized
# run of the 5,000-job benchmark): slurmctld keeps answering `scontrol ping` within 5 s
# through the burst, refuses no submission, and every job ends COMPLETED on nodes or waits
# in the queue with a reason. Prints the sdiag figures.
source "$(dirname "$0")/lib.sh"
repo=$(cd "$(dirname "$0")/../.." && pwd)

out=$WORK/load.out
rc=0
"$repo/bench/ai-bench/load.sh" 500 --dir "$MINICLUSTER_DIR" --wait 240 >"$out" 2>&1 || rc=$?
cat "$out"
[ $rc = 0 ] || fail "the burst left jobs lost, failed or pending without a reason (see above)"
ping_max=$(sed -n 's/.*max \([0-9]*\) ms.*/\1/p' "$out")
ping_failed=$(sed -n 's/.* \([0-9]*\) failed$/\1/p' "$out")
refused=$(sed -n 's/.*s (\([0-9]*\) refused).*/\1/p' "$out")
[ -n "$ping_max" ] || fail "no ping figures in the output"
expect_eq "scontrol pings that failed during the burst" 0 "$ping_failed"
expect_eq "submissions refused" 0 "$refused"
[ "$ping_max" -lt 5000 ] || fail "slurmctld took $ping_max ms to answer a ping under the burst"
pass "500 jobs: max ping ${ping_max} ms; every job completed or queued with a reason"
