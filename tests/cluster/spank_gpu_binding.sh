#!/usr/bin/env bash
# Each task gets its own GPU (CUDA_VISIBLE_DEVICES), the InfiniBand NIC nearest that GPU
# (NCCL_IB_HCA) and the CPUs of that GPU's socket, following the topology each node was
# given: n1-n4 have one NIC (mlx5_0, socket 0, CPUs 0-7), n5-n8 one NIC per socket
# (mlx5_0 with GPUs 0-1 on CPU 0, mlx5_1 with GPUs 2-3 on CPU 1); see tests/inputs/.
source "$(dirname "$0")/lib.sh"

srun -N2 -w n1,n5 --ntasks-per-node=4 --gpus-per-node=4 -o "$WORK/bind.out" bash -c \
    'echo "$SLURMD_NODENAME $LOCAL_RANK $CUDA_VISIBLE_DEVICES $NCCL_IB_HCA $(sed -n "s/^Cpus_allowed_list:\s*//p" /proc/self/status)"'
sort "$WORK/bind.out" >"$WORK/bind.sorted"
# Ring order of the linked pairs (0,1) and (2,3) is 0 1 2 3 on both kinds of node.
allowed=$(sed -n 's/^Cpus_allowed_list:\s*//p' /proc/self/status)
expected="n1 0 0 =mlx5_0 $allowed
n1 1 1 =mlx5_0 $allowed
n1 2 2 =mlx5_0 $allowed
n1 3 3 =mlx5_0 $allowed
n5 0 0 =mlx5_0 0
n5 1 1 =mlx5_0 0
n5 2 2 =mlx5_1 1
n5 3 3 =mlx5_1 1"
expect_eq "node, local rank, GPU, NIC and CPUs of every task" "$expected" "$(cat "$WORK/bind.sorted")"

# Two tasks per node share the GPUs along the ring: linked pairs stay together.
srun -N1 -w n6 -n2 --gpus-per-node=4 -o "$WORK/pairs.out" bash -c \
    'echo "$LOCAL_RANK $CUDA_VISIBLE_DEVICES $NCCL_IB_HCA"'
expect_eq "two tasks on n6" "0 0,1 =mlx5_0
1 2,3 =mlx5_1" "$(sort "$WORK/pairs.out")"

# The user's own per-task GPU binding (Slurm's --gpus-per-task) stands; the NIC and the
# CPUs follow the GPU Slurm gave each task.
srun -N1 -w n7 -n4 --gpus-per-task=1 -o "$WORK/user.out" bash -c \
    'echo "$SLURM_STEP_GPUS $CUDA_VISIBLE_DEVICES $NCCL_IB_HCA $(sed -n "s/^Cpus_allowed_list:\s*//p" /proc/self/status)"'
expect_eq "tasks bound by Slurm's --gpus-per-task" "0 0 =mlx5_0 0
1 1 =mlx5_0 0
2 2 =mlx5_1 1
3 3 =mlx5_1 1" "$(sort "$WORK/user.out")"
pass "GPU, NIC and CPU binding per node topology"
