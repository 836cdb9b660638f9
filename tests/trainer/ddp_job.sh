#!/bin/bash
# The batch script of ddp_trainer.py's jobs, one task per node:
#   sbatch -N3 --no-kill [--ai-checkpoint=DIR] [--ai-elastic=MIN:MAX:signal=USR2] \
#       ddp_job.sh /abs/path/ddp_trainer.py --steps 300 [TRAINER OPTIONS...]
# It needs only Slurm's commands and the trainer's path (the repository need not be on the
# nodes); DDP_PYTHON names the interpreter that has torch (default /usr/bin/python3).
#
# It runs the trainer as one srun step on every node the job holds now, and starts the
# step again when it ended without finishing:
#   - killed (exit status 137 or 143): ai-recover ended a step that spanned a failed node
#     (an elastic job that shrank around it), or the step was stopped for a resize; or
#     its rendezvous failed (4: a peer died while the step started);
#   - after a resize: the job's elastic signal (SLURM_AI_ELASTIC_SIGNAL, else USR2) asks
#     the step's tasks to stop with SIGTERM (ddp_trainer.py then checkpoints at a step
#     boundary, or its last committed step when a peer is gone, and exits 143), re-sources
#     the view's env file (SLURM_AI_ELASTIC_ENV: node list, SLURM_NNODES, WORLD_SIZE,
#     MASTER_ADDR) and starts a new step, whose process group has the new world size.
# --no-kill on srun keeps a node failure from killing the step's other tasks before they
# can checkpoint. A requeued job starts this script afresh.
trainer=${1:?usage: ddp_job.sh TRAINER.py [TRAINER OPTIONS...]}
shift
python=${DDP_PYTHON:-/usr/bin/python3}
resize_signal=${SLURM_AI_ELASTIC_SIGNAL:-USR2}
say() { echo "ddp_job: $*"; }

# The job's size now: the view after a resize, checked against slurmctld (a view can be
# stale: a requeued job's nodes change without a resize); slurmctld's count wins. Read
# by a pipe into `read` (lastpipe: in this shell), not by $(...), which a resize signal
# can break (see docs/elastic.md).
shopt -s lastpipe
size_step() {
    local want="" gen=""
    scontrol show job "$SLURM_JOB_ID" | grep -oE ' NumNodes=[0-9]+' | cut -d= -f2 | read -r want
    if [ -n "${SLURM_AI_ELASTIC_ENV:-}" ] && [ -r "$SLURM_AI_ELASTIC_ENV" ]; then
        # shellcheck disable=SC1090
        source "$SLURM_AI_ELASTIC_ENV"
        gen=" (view generation ${SLURM_AI_ELASTIC_GENERATION:-?})"
    fi
    if [ "${SLURM_NNODES:-}" != "$want" ]; then
        [ -z "$gen" ] || say "the view says ${SLURM_NNODES:-?} nodes, slurmctld $want: using $want"
        # The allocation's size at submit time, or a stale view's: srun takes the job's.
        unset SLURM_NNODES SLURM_JOB_NUM_NODES SLURM_NODELIST SLURM_JOB_NODELIST SLURM_NTASKS \
            SLURM_NPROCS SLURM_TASKS_PER_NODE SLURM_JOB_CPUS_PER_NODE
        nodes=$want gen=""
    else
        nodes=$SLURM_NNODES
        unset SLURM_NTASKS SLURM_NPROCS SLURM_TASKS_PER_NODE SLURM_JOB_CPUS_PER_NODE
    fi
    say "step $attempt on $nodes nodes$gen"
}

# A resize: end the running step by SIGTERM to its tasks (srun itself would SIGKILL them).
step_pid=""
resized=0
on_resize() {
    resized=1
    [ -n "$step_pid" ] && kill -0 "$step_pid" 2>/dev/null || return 0
    local step
    step=$(squeue -h -s -j "$SLURM_JOB_ID" -o %i 2>/dev/null |
        grep -E "^$SLURM_JOB_ID\.[0-9]+$" | sort -t. -k2 -n | tail -n1)
    say "resized: stopping step ${step:-(not started: srun)}"
    if [ -n "$step" ]; then
        # After a grow (22.05.8) scancel delivers the signal and still says "Kill job
        # error ... Invalid job id specified" (the merged expansion job): not an error.
        # Any other refusal is said in the job's output and tried again: a rank whose peer
        # the shrink took waits for this signal (ddp_trainer.py, "stalled") for minutes.
        local try err
        for try in 1 2 3; do
            err=$(scancel --signal=TERM "$step" 2>&1) && break
            case $err in *"Invalid job id"*) break ;; esac
            say "resized: scancel --signal=TERM $step (try $try): $err"
            sleep 2
        done
    else
        kill -TERM "$step_pid"
    fi
}
trap on_resize "$resize_signal"

for ((attempt = 1; attempt <= 20; attempt++)); do  # no $(...) here: see docs/elastic.md
    resized=0
    size_step
    srun --no-kill -N"$nodes" --ntasks-per-node=1 "$python" "$trainer" "$@" &
    step_pid=$!
    [ $resized = 0 ] || on_resize  # a resize while the step was being sized
    # wait returns early (above 128) when a trapped signal comes: wait until srun is gone.
    rc=0
    wait "$step_pid" || rc=$?
    while kill -0 "$step_pid" 2>/dev/null; do
        rc=0
        wait "$step_pid" || rc=$?
    done
    step_pid=""
    [ "$rc" = 0 ] && exit 0
    # 137/143: the step was killed or stopped; 4: its rendezvous failed (a peer died or
    # was stopped while the step started); after a resize, whatever it said (a step
    # started just before a shrink fails for want of nodes). Anything else (3: a bad
    # checkpoint) is the trainer's verdict.
    case $rc in 137 | 143 | 4) ;; *) [ $resized = 1 ] || exit "$rc" ;; esac
    say "step ended with $rc (attempt $attempt); starting it again"
done
exit 1
