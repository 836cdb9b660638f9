#!/usr/bin/env bash
# scontrol reconfigure rereads ai_select.conf: an invalid new file is rejected naming the
# line and the key, and the last good configuration keeps placing jobs.
source "$(dirname "$0")/lib.sh"

conf=$MINICLUSTER_DIR/etc/ai_select.conf
cp "$conf" "$WORK/good.conf"
trap 'cp "$WORK/good.conf" "$conf"; scontrol reconfigure >/dev/null 2>&1 || true' EXIT
printf 'Policy=engine\nColour=red\n' >"$conf"
reconfigure_until "$MINICLUSTER_DIR/log/slurmctld.log" "ai_select.conf:2: Colour='red'" ||
    fail "slurmctld.log does not name line 2 and the key Colour"
id=$(sbatch --parsable -N2 --ai-comm=allreduce -o /dev/null --wrap='sleep 1')
wait_job_gone "$id"
expect_eq "policy that placed the job after the bad reconfigure" engine \
    "$(json_get "$STATE_DIR/ai_select/jobs/$id.json" decision.policy)"
scontrol ping | grep -q UP || fail "slurmctld is not up"
pass "bad file rejected at line 2; job $id still placed by the engine"
