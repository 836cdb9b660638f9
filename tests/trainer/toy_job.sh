#!/bin/bash
# The batch script of the toy trainer's jobs:
#   sbatch --no-kill --ai-checkpoint=DIR ... toy_job.sh /abs/path/toy_trainer.py TRAINER_ARGS...
# Runs the trainer as one srun step with a task on each node the job holds now, and starts
# the step again when it was killed without finishing: that is how an elastic job goes on
# after a node failure (ai-recover asks the survivors to checkpoint, ends the step, and the
# new, smaller step resumes from the newest complete checkpoint). --no-kill on srun keeps
# a node failure from killing the step's other tasks before they can checkpoint.
trainer=$1
shift
for attempt in 1 2 3 4 5 6 7 8; do
    nodes=$(scontrol show job "$SLURM_JOB_ID" | grep -oE ' NumNodes=[0-9]+' | cut -d= -f2)
    # A test's hook: while the file TOY_JOB_HOLD names exists, wait between reading the
    # job's size and starting the step (a node can then fail in between, on purpose).
    if [ -n "${TOY_JOB_HOLD:-}" ] && [ -e "$TOY_JOB_HOLD" ]; then
        echo "toy_job: restart ${SLURM_RESTART_COUNT:-0}: holding the step on $nodes nodes"
        while [ -e "$TOY_JOB_HOLD" ]; do sleep 0.1; done
    fi
    # The allocation's size at submit time; srun must use the job's current one.
    unset SLURM_NNODES SLURM_JOB_NUM_NODES SLURM_NODELIST SLURM_JOB_NODELIST SLURM_NTASKS \
        SLURM_NPROCS SLURM_TASKS_PER_NODE SLURM_JOB_CPUS_PER_NODE
    srun --no-kill -N"$nodes" --ntasks-per-node=1 python3 "$trainer" "$@"
    rc=$?
    # 137/143: the step was killed (SIGKILL/SIGTERM); anything else is the trainer's verdict.
    [ $rc = 137 ] || [ $rc = 143 ] || exit $rc
    echo "toy_job: step ended with $rc (attempt $attempt); starting it again"
done
exit 1
