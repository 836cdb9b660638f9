#!/usr/bin/env bash
# An --ai-elastic range beside Slurm's node request, as a user sees it (docs/elastic.md,
# "The elastic range and --nodes"): a job starts with a node count slurmctld accepts for
# it, MIN:MAX clamped into Slurm's range, never fewer nodes than Slurm's minimum.
source "$(dirname "$0")/lib.sh"
trap 'cancel_named ai-range' EXIT

# Submits one job, waits until it runs and prints "<id> <node count>". The job runs until
# cancelled (done_with): one that ends by itself can end between two looks of a loaded
# machine.
run_job() {
    local id count=""
    id=$(sbatch --parsable -J ai-range -o /dev/null "$@" --wrap='sleep 300') ||
        fail "sbatch $* was refused"
    for _ in $(seq 60); do
        count=$(squeue -h -j "$id" -t R -o %D)
        [ -n "$count" ] && break
        sleep 0.5
    done
    [ -n "$count" ] || fail "job $id (sbatch $*) never ran: $(squeue -h -j "$id" -o '%T %r')"
    echo "$id $count"
}

comment_of() { scontrol show job "$1" | sed -n 's/^ *SystemComment=//p'; }
done_with() {
    scancel "$1"
    wait_job_gone "$1" 60
}

# 1. The fuzzer's case on this 8-node cluster: -N14 with --ai-elastic=2:2. Slurm's minimum
#    of 14 stands: the job waits with Slurm's own reason (PartitionNodeLimit; refused at
#    submit where EnforcePartLimits is set) and never runs on 2 nodes.
id=$(sbatch --parsable -N14 --ai-elastic=2:2 -J ai-range -o /dev/null --wrap=true)
sleep 4
expect_eq "state and reason of sbatch -N14 --ai-elastic=2:2 on 8 nodes" \
    "PENDING 14 PartitionNodeLimit" "$(squeue -h -j "$id" -o '%T %D %r')"
done_with "$id"

# 2. -N4 with --ai-elastic=2:2: runs on Slurm's 4, and says why in its SystemComment.
read -r id count < <(run_job -N4 --ai-elastic=2:2)
expect_eq "nodes of sbatch -N4 --ai-elastic=2:2" 4 "$count"
expect_contains "SystemComment of $id" "$(comment_of "$id")" "--ai-elastic=2:2 started as 4:4"
done_with "$id"

# 3. -N2-4 with --ai-elastic=1:8: the intersection 2:4, as large as fits (all nodes free).
read -r id count < <(run_job -N2-4 --ai-elastic=1:8)
expect_eq "nodes of sbatch -N2-4 --ai-elastic=1:8" 4 "$count"
expect_contains "SystemComment of $id" "$(comment_of "$id")" "started as 2:4, within the 2-4 nodes"
done_with "$id"

# 4. --ai-elastic=2:3 with no --nodes: the range as typed, nothing clamped.
read -r id count < <(run_job --ai-elastic=2:3)
expect_eq "nodes of sbatch --ai-elastic=2:3" 3 "$count"
case $(comment_of "$id") in *"started as"*) fail "job $id: a clamp noted where none was made" ;; esac
done_with "$id"

# 5. Tasks bound the node count too: -n8 --ntasks-per-node=2 means 4 nodes, so 2:8 starts
#    as 4:4 with its 8 tasks (before, it ran on 8 nodes and Slurm made it 16 tasks).
read -r id count < <(run_job -n8 --ntasks-per-node=2 --ai-elastic=2:8)
expect_eq "nodes of sbatch -n8 --ntasks-per-node=2 --ai-elastic=2:8" 4 "$count"
expect_eq "tasks of job $id" 8 "$(scontrol show job "$id" | sed -n 's/.*NumTasks=\([0-9]*\).*/\1/p')"
expect_contains "SystemComment of $id" "$(comment_of "$id")" "started as 4:4"
done_with "$id"

pass "-N14 with 2:2 waits for 14 nodes; -N4 with 2:2 ran on 4; -N2-4 with 1:8 on 4 (2:4); 2:3 on 3; -n8 --ntasks-per-node=2 with 2:8 on 4"
