#!/usr/bin/env bash
# A compute host fails under a running PyTorch job, and the suite's checkpoint-triggered
# recovery brings the job back with nothing lost:
#   node_failure.sh kill     `docker kill` of the container: the host dies with its tasks
#   node_failure.sh netcut   `docker network disconnect`: the host runs on, unreachable
# The 3-node data-parallel trainer (--no-kill, --ai-checkpoint, one node left free) loses
# a node other than its batch host after its first periodic checkpoint. Expected: the
# survivors' all_reduce fails or hangs and they hold their last committed step; the
# node's lease lapses (its ai-lease agent is dead or cut off), or a survivor reports the
# lost peer, and ai-recover, once slurmd's port does not answer either, sets the node
# DOWN naming the signal (well before Slurm's SlurmdTimeout), asks the survivors to checkpoint and requeues the job without the
# node; the job resumes from the newest complete checkpoint on the free node and finishes.
# Its final parameters equal, bit for bit, those of an uninterrupted run with the same
# seed; the steps done again are at most those done since the last complete checkpoint
# before the failure. Then the host comes back and is idle. The seconds from the failure
# to the node DOWN and to the job running again are printed.
# netcut also checks the fencing: the cut-off host, which runs on, froze its trainer
# processes before the job ran again elsewhere and killed them LeaseKill (10 s here)
# later, so that when its network comes back nothing of the old run goes on: no file of
# the checkpoint directory was written there (the trainer names its node in each).
source "$(dirname "$0")/lib.sh"
mode=${1:?usage: node_failure.sh kill|netcut}
TEST_NAME=node_$mode
case $mode in kill | netcut) ;; *) fail "mode '$mode': expected kill or netcut" ;; esac
t_begin=$SECONDS
victim=""
restore() {
    [ -n "$victim" ] || return 0
    case $mode in
        kill) dc start "$victim" >/dev/null 2>&1 ;;
        netcut) docker network connect --alias "$victim" --ip "$victim_ip" "$NETWORK" \
                    "$(container_of "$victim")" >/dev/null 2>&1 ;;
    esac
}
on_exit restore

out=$WORK/job.out
host_out=$HOST_DIR/job.out
steps=200
opts=(--steps $steps --seed 11 --every 25 --step-ms 100)
id=$(ddp_submit "$out" -N3 --exclusive --no-kill --ai-checkpoint="$WORK/ckpt" -- "${opts[@]}" \
    --final "$WORK/final.pt")
wait_until 120 "job $id running with a complete checkpoint" output_has "$host_out" "checkpoint step=25 "

batch=$(job_field "$id" BatchHost)
for n in $(ctl scontrol show hostnames "$(job_field "$id" NodeList)"); do
    [ "$n" = "$batch" ] || victim=$n
done
[ -n "$victim" ] || fail "job $id has no node but its batch host $batch"
container=$(container_of "$victim")
# Its fixed address (docker/compose.yaml), for the network to take it back.
victim_ip=$(docker inspect -f "{{(index .NetworkSettings.Networks \"$NETWORK\").IPAddress}}" "$container")
t_fail=$(date +%s.%N)
case $mode in
    kill) docker kill "$container" >/dev/null ;;
    netcut) docker network disconnect "$NETWORK" "$container" ;;
esac || fail "could not fail $victim ($mode)"
node_down() { [ "$(node_state "$victim")" = down ] || [ "$(node_state "$victim")" = "down*" ]; }
wait_until 60 "$victim DOWN after it failed ($mode)" node_down
t_down=$(date +%s.%N)
reason=$(ctl scontrol -o show node "$victim" | sed -n 's/.* Reason=\(.*\) \[.*/\1/p')
case $reason in  # the lease lapsed, or a survivor's gloo error was reported first
    "ai-lease: "*) ;;
    *) fail "$victim DOWN for '$reason', not by the suite's signal (ai-lease)" ;;
esac
restarted() { [ "$(job_state "$id")" = RUNNING ] && [ "$(job_field "$id" Restarts)" = 1 ]; }
wait_until 120 "job $id requeued and running again after $victim failed ($mode)" restarted
t_run=$(date +%s.%N)
took=$(awk -v f="$t_fail" -v d="$t_down" -v r="$t_run" \
    'BEGIN { printf "DOWN %.1f s, running again %.1f s after the failure", d - f, r - f }')
echo "$mode: $victim $took (reason: $reason); job $id on $(job_field "$id" NodeList)"
if [ "$mode" = netcut ]; then
    # The cut-off host runs on: its trainer processes are frozen (T), then killed. A
    # killed one may stay a zombie (Z) there until the network is back: its slurmstepd
    # waits on the controller.
    trainer_states() {
        docker exec "$container" ps -eo stat=,args= |
            awk '/ddp_trainer/ && !/awk/ && $1 !~ /^Z/ { print substr($1, 1, 1) }' | sort -u | xargs
    }
    states=$(trainer_states)
    case $states in "" | T) ;; *) fail "trainer processes on the cut-off $victim in states '$states', not stopped (T)" ;; esac
    killed() { [ -z "$(trainer_states)" ]; }
    if ! (wait_until 90 "the fenced trainer processes on $victim killed" killed); then
        docker exec "$container" ps -eo pid,stat,wchan:24,args >&2 || true
        fail "the fenced trainer processes on $victim still run (above)"
    fi
    fenced=$(docker logs "$container" 2>&1 | grep "ai-lease: no grant for .* silent: fenced jobs $id " || true)
    [ -n "$fenced" ] || fail "ai-lease on $victim never said it fenced job $id: $(docker logs --tail 20 "$container" 2>&1 | grep ai-lease)"
    echo "fenced on $victim: ${fenced#*ai-lease: }"
fi
# The host comes back while the job finishes elsewhere.
restore
victim_back=$victim
victim=""
wait_until 150 "job $id finished" job_gone "$id"

ref=$(ddp_reference "${opts[@]}")  # the same for both modes: run once
[ -n "$ref" ] || fail "the one-process run printed no digest"
j=$(analyse "$host_out" "$t_fail")
expect_eq "trainer errors" "[]" "$(py "$j" 'd["errors"]')"
expect_eq "end state" COMPLETED "$(job_end_state "$id")"
ddp_expect_recovered "$host_out" "$j" "$victim" $steps
newest=$NEWEST committed=$COMMITTED resumed=$RESUMED redone=$REDONE
[ "$newest" -ge 25 ] || fail "no complete checkpoint before the failure (newest: $newest)"
expect_eq "digest of every rank against an uninterrupted run" "$ref" "$(ddp_digests "$host_out")"
ddp_same_params "$WORK/final.pt" "$(ddp_reference_pt "${opts[@]}")"
# Nothing in the checkpoint directory was written on the failed host (in progress or done).
written=$(grep -l "node $victim_back\$" "$HOST_DIR"/ckpt/step-*/COMPLETE 2>/dev/null || true)
written+=$(ls -a "$HOST_DIR/ckpt" | grep -- "-$victim_back-" || true)
[ -z "$written" ] || fail "the failed $victim_back wrote into the checkpoint directory: $written"
echo "$victim_back failed ($mode) at step $committed (checkpoint $newest): requeued, resumed from $resumed ($redone redone); digest ${ref:0:16} equals the uninterrupted run's"

wait_until 120 "$victim_back idle again" node_idle "$victim_back"
echo "$victim_back idle again; $((SECONDS - t_begin)) s in all"
