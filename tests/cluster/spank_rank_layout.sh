#!/usr/bin/env bash
# Every task of a multi-node step gets a consistent, complete rank layout from the SPANK
# plugin: each rank once, a node's ranks contiguous, LOCAL_RANK/NODE_RANK/WORLD_SIZE
# agreeing, MASTER_ADDR/MASTER_PORT the same everywhere and MASTER_ADDR resolvable and
# the node of rank 0. The node order is the placement's: it matches the rank order in
# the select plugin's record of the job.
source "$(dirname "$0")/lib.sh"

# One line per task: node procid RANK LOCAL_RANK NODE_RANK WORLD_SIZE LOCAL_WORLD_SIZE
# MASTER_ADDR MASTER_PORT AI_NODE_ORDER
report='echo "$SLURMD_NODENAME $SLURM_PROCID $RANK $LOCAL_RANK $NODE_RANK $WORLD_SIZE $LOCAL_WORLD_SIZE $MASTER_ADDR $MASTER_PORT $AI_NODE_ORDER"'

check_layout() {  # FILE EXPECTED-WORLD-SIZE: checks the lines of one step
    local file=$1 world=$2
    python3 - "$file" "$world" <<'PY' || fail "rank layout of $1: see above"
import socket, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
world = int(sys.argv[2])
def bad(msg):
    print("rank layout:", msg, "\n", open(sys.argv[1]).read(), file=sys.stderr); sys.exit(1)
if len(rows) != world: bad(f"{len(rows)} tasks reported, expected {world}")
if any(len(r) != 10 for r in rows): bad("a task lacks a variable")
ranks = sorted(int(r[2]) for r in rows)
if ranks != list(range(world)): bad(f"ranks {ranks} are not 0..{world-1} each once")
if {r[5] for r in rows} != {str(world)}: bad("WORLD_SIZE differs from the task count")
for col, what in ((7, "MASTER_ADDR"), (8, "MASTER_PORT"), (9, "AI_NODE_ORDER")):
    if len({r[col] for r in rows}) != 1: bad(f"{what} differs between tasks")
order = rows[0][9].split(",")
by_node = {}
for r in rows: by_node.setdefault(r[0], []).append(r)
if sorted(order) != sorted(by_node): bad(f"AI_NODE_ORDER {order} is not the step's nodes")
first = 0
for i, node in enumerate(order):
    rs = sorted(by_node[node], key=lambda r: int(r[2]))
    n = len(rs)
    if [int(r[2]) for r in rs] != list(range(first, first + n)): bad(f"ranks of {node} not contiguous from {first}")
    if [int(r[3]) for r in rs] != list(range(n)): bad(f"LOCAL_RANK of {node} not 0..{n-1}")
    if {r[4] for r in rs} != {str(i)}: bad(f"NODE_RANK of {node} is not {i}")
    if {r[6] for r in rs} != {str(n)}: bad(f"LOCAL_WORLD_SIZE of {node} is not {n}")
    first += n
port = int(rows[0][8])
if not 1024 <= port <= 65535: bad(f"MASTER_PORT {port}")
try: socket.getaddrinfo(rows[0][7], port)
except OSError as e: bad(f"MASTER_ADDR {rows[0][7]} does not resolve: {e}")
PY
}

# An interactive step over three nodes of both leaves, uneven task counts.
srun -N3 -w n3,n4,n5 -n7 --ai-comm=allreduce -o "$WORK/srun.out" bash -c "$report"
check_layout "$WORK/srun.out" 7
addr=$(awk '{print $8; exit}' "$WORK/srun.out")
first=$(awk '{print $10; exit}' "$WORK/srun.out" | cut -d, -f1)
expect_eq "MASTER_ADDR is the NodeAddr of rank 0's node $first" \
    "$(scontrol show node "$first" | sed -n 's/.*NodeAddr=\([^ ]*\).*/\1/p')" "$addr"

# A batch job placed by the engine: srun inside it sees the placement's rank order.
id=$(sbatch --parsable -N3 --ntasks-per-node=2 --gpus-per-node=2 --ai-comm=pipeline:stages=3 \
    -o "$WORK/batch.out" --wrap="srun bash -c '$report'")
wait_job_gone "$id" 90
expect_eq "batch job $id end state" COMPLETED "$(job_end_state "$id")"
check_layout "$WORK/batch.out" 6
rec="$STATE_DIR/ai_select/jobs/$id.json"
placed=$(json_get "$rec" gpus | tr ' ' '\n' | sed 's/:.*//' | paste -sd, -)
expect_eq "node order of the tasks vs the select plugin's rank order" \
    "$placed" "$(awk '{print $10; exit}' "$WORK/batch.out")"

# Tasks of a job without GPUs get the rank variables and no GPU/NIC binding.
srun -N2 -n2 bash -c 'echo "${RANK-unset} ${CUDA_VISIBLE_DEVICES-unset} ${NCCL_IB_HCA-unset}"' \
    >"$WORK/nogpu.out"
expect_eq "tasks without GPUs" "0 unset unset
1 unset unset" "$(sort "$WORK/nogpu.out")"
pass "7-task srun and job $id ($placed): ranks complete and contiguous"
