#!/usr/bin/env bash
# A job's --ai-* options are decoded once, however often slurmctld tests it, and again
# after a requeue (docs/design.md, "The select plugin"). The plugin logs every decoding with
# Debug=yes and DebugFlags=SelectType (the test cluster has both).
source "$(dirname "$0")/lib.sh"
trap 'cancel_named ai-cache-block ai-cache-probe' EXIT
log="$MINICLUSTER_DIR/log/slurmctld.log"

decodes_of() { grep -c "JobId=$1: options decoded" "$log" || true; }
waits_of() { grep -c "JobId=$1 waits: hard locality" "$log" || true; }

# One node taken whole under each leaf switch: a 4-node job with hard locality waits, and every
# scheduling pass tests it again.
b1=$(sbatch --parsable -J ai-cache-block --exclusive -w n1 -o /dev/null --wrap='sleep 120')
b2=$(sbatch --parsable -J ai-cache-block --exclusive -w n5 -o /dev/null --wrap='sleep 120')
for _ in $(seq 30); do
    [ "$(squeue -h -n ai-cache-block -t R | wc -l)" -eq 2 ] && break
    sleep 0.5
done
# It runs until cancelled (the trap above): the requeue below needs it running, and a job
# that ends by itself can end between two looks of a loaded machine.
probe=$(sbatch --parsable -J ai-cache-probe -N4 --ai-locality=hard --ai-comm=allreduce:bytes=1G \
    -o /dev/null --wrap='sleep 300')
# Each update of the job makes slurmctld run its scheduler, which tests the job again; on a
# loaded machine a pass can be skipped, so it goes on until three tests or a minute.
for i in $(seq 60); do
    [ "$(waits_of "$probe")" -ge 3 ] && break
    scontrol update JobId="$probe" Comment="pass $i"
    sleep 1
done
[ "$(waits_of "$probe")" -ge 3 ] ||
    fail "job $probe was tested $(waits_of "$probe") time(s), expected 3 or more to prove anything"
expect_eq "decodings of job $probe while pending ($(waits_of "$probe") tests)" 1 "$(decodes_of "$probe")"

# Once the blockers go it starts on one leaf; a requeue ends that run (the decoding is
# dropped with it), and the job is decoded once more when it is tested again.
scancel "$b1" "$b2"
for _ in $(seq 60); do
    [ -n "$(squeue -h -j "$probe" -t R -o %i)" ] && break
    sleep 0.5
done
[ -n "$(squeue -h -j "$probe" -t R -o %i)" ] || fail "job $probe did not start once the nodes were free"
scontrol requeue "$probe"
# Slurm holds a requeued job back for a while (its credential's lifetime); lift that, as
# ai-recover does, once the old run is cleaned up.
for _ in $(seq 60); do
    [ "$(squeue -h -j "$probe" -o %T)" = PENDING ] && break
    sleep 0.5
done
scontrol update JobId="$probe" StartTime=now+1
for _ in $(seq 120); do
    [ "$(decodes_of "$probe")" -ge 2 ] && break
    sleep 0.5
done
expect_eq "decodings of job $probe after its requeue" 2 "$(decodes_of "$probe")"
pass "$(waits_of "$probe") tests of a pending job, 1 decoding; decoded again after a requeue"
