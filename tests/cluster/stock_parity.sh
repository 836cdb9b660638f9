#!/usr/bin/env bash
# Where the suite must behave like stock Slurm, it does: the same jobs, submitted to the
# test cluster (select/ai_cons_tres) and to a stock cluster of the same shape brought up
# beside it (select/cons_tres, no suite plugins), give the same results. Compared per job
# kind: end states and exit codes, node/CPU/task counts, memory per node, whole nodes for
# --exclusive, array tasks, hetjob components, dependency order and states (afterok,
# afterany, an afternotok that never runs), the submit-time rejection of a job that can
# never run, and the GPU count of a GPU job without hints. Node names are not compared:
# the suite may pick other nodes for the same job.
source "$(dirname "$0")/lib.sh"

repo=$(cd "$(dirname "$0")/../.." && pwd)
t0=$SECONDS
info() { sed -n "s/^$1=//p" "$2/cluster.info" | head -n1; }
nodes=$(info nodes "$MINICLUSTER_DIR")
gpus=$(info gpus "$MINICLUSTER_DIR")
gpu_type=$(info gpu_type "$MINICLUSTER_DIR")
sel_a=$(info select "$MINICLUSTER_DIR")
name_a=$(info cluster_name "$MINICLUSTER_DIR")
[[ $nodes =~ ^[0-9]+$ && $gpus =~ ^[0-9]+$ ]] ||
    fail "no nodes=/gpus= in $MINICLUSTER_DIR/cluster.info"
[ "$nodes" -ge 4 ] || fail "the test cluster has $nodes nodes; the jobs here need 4"
[ "$gpus" -ge 2 ] || fail "the test cluster has $gpus GPUs per node; the GPU job needs 2"

second=$(mktemp -d /tmp/slurm-ai-stock.XXXXXX)
rmdir "$second"
declare -A ID=()
cleanup() {  # a failed run leaves no job of ours queued on the test cluster
    local k
    for k in "${!ID[@]}"; do
        if [[ $k == *.A ]]; then scancel "${ID[$k]}" 2>/dev/null || true; fi
    done
    "$repo/tools/minicluster" down --dir "$second" >/dev/null 2>&1 || true
}
trap cleanup EXIT
"$repo/tools/minicluster" up --dir "$second" --nodes "$nodes" --gpus "$gpus" \
    --gpu-type "${gpu_type:-v100}" --select select/cons_tres >"$WORK/up.log" 2>&1 ||
    fail "stock cluster did not come up: $(tail -n 20 "$WORK/up.log")"
name_b=$(info cluster_name "$second")

declare -A CONF=([A]=$MINICLUSTER_DIR/etc/slurm.conf [B]=$second/etc/slurm.conf)
declare -A JOBCOMP=([A]=$MINICLUSTER_DIR/log/jobcomp.log [B]=$second/log/jobcomp.log)
declare -A LABEL=([A]="suite cluster $name_a ($sel_a)"
                  [B]="stock cluster $name_b (select/cons_tres)")
on() { local c=$1; shift; SLURM_CONF=${CONF[$c]} "$@"; }

# same KIND WHAT VALUE_A VALUE_B: every comparison ends here.
same() {
    [ "$3" = "$4" ] ||
        fail "$1: $2 differs: '$3' on the ${LABEL[A]} vs '$4' on the ${LABEL[B]}"
}
# want KIND WHAT EXPECTED VALUE_A VALUE_B: the same on both, and what stock Slurm gives
# (so that a test that broke on both clusters alike does not pass).
want() {
    same "$1" "$2" "$4" "$5"
    [ "$3" = "$5" ] || fail "$1: $2 is '$5' on both clusters, expected '$3'"
}

# --- submissions: identical arguments, same order, on both clusters -------------------
cat >"$WORK/het.sh" <<'JOB'
#!/bin/bash
#SBATCH -N1 -n2 -o /dev/null
#SBATCH hetjob
#SBATCH -N2 -n4 -c2
srun --het-group=0,1 hostname >/dev/null
sleep 1
JOB
# sub KIND SBATCH_ARGS...: submits to A, then B; "@KIND2" in an argument stands for the
# id of that cluster's job KIND2 (dependencies name ids, which differ between clusters).
sub() {
    local kind=$1 c out a k; shift
    for c in A B; do
        local args=()
        for a in "$@"; do
            while [[ $a =~ @([a-z_0-9]+) ]]; do
                k=${BASH_REMATCH[1]}
                a=${a/"@$k"/${ID[$k.$c]}}
            done
            args+=("$a")
        done
        out=$(on $c sbatch --parsable "${args[@]}" 2>&1) ||
            fail "$kind: sbatch ${args[*]} refused on the ${LABEL[$c]}: $out"
        ID[$kind.$c]=${out%%;*}
    done
}
sub exclusive -N2 --exclusive -o /dev/null --wrap='hostname; sleep 1'
sub cpu_1node -N1 -n4 -c2 -o /dev/null --wrap='hostname; sleep 1'
sub cpu_multinode -N3 -n6 -c2 -o /dev/null --wrap='srun hostname >/dev/null; sleep 1'
sub mem -N2 --ntasks-per-node=1 --mem=3000 -o /dev/null --wrap='hostname; sleep 1'
sub mem_per_cpu -N1 -n4 --mem-per-cpu=1500 -o /dev/null --wrap='hostname; sleep 1'
sub array --array=0-3 -o /dev/null --wrap='hostname; sleep 1'
sub hetjob "$WORK/het.sh"
# shellcheck disable=SC2016  # $CUDA_VISIBLE_DEVICES expands in the job
sub gpu --gpus=2 -o "$WORK/gpu.%j.out" --wrap='echo "gpus=$CUDA_VISIBLE_DEVICES"; sleep 1'
sub dep_a -o /dev/null --wrap='sleep 2'
sub dep_b --dependency=afterok:@dep_a -o /dev/null --wrap='sleep 1; exit 3'
sub dep_c --dependency=afterany:@dep_b -o /dev/null --wrap='sleep 1'
sub dep_never --dependency=afternotok:@dep_a -o /dev/null --wrap=true

# A job that can never run (more memory than any node has) is refused at submit.
declare -A REJ=()
for c in A B; do
    rc=0
    out=$(on $c sbatch --parsable --mem=100000 -o /dev/null --wrap=true 2>&1) || rc=$?
    REJ[$c]="rc=$rc: $(sed "s/$name_a/CLUSTER/g; s/$name_b/CLUSTER/g" <<<"$out" | tr '\n' ' ' | sed 's/ $//')"
done
same "never-runnable job (--mem=100000)" "sbatch result" "${REJ[A]}" "${REJ[B]}"
[[ ${REJ[B]} == rc=1:* ]] || fail "never-runnable job: stock sbatch accepted it: ${REJ[B]}"

# --- wait: everything but dep_never leaves the queue -----------------------------------
ids() {  # ids CLUSTER: our job ids on it, but dep_never's
    local k out=""
    for k in "${!ID[@]}"; do
        [[ $k == *.$1 && $k != dep_never.* ]] && out+=${out:+,}${ID[$k]}
    done
    echo "$out"
}
deadline=$((SECONDS + 60))
for c in A B; do
    while on $c squeue -h -j "$(ids $c)" -o %i 2>/dev/null | grep -q .; do
        [ $SECONDS -lt $deadline ] ||
            fail "jobs still queued on the ${LABEL[$c]} after 60s: $(on $c squeue -h -j "$(ids $c)" -o '%i %T %r' | tr '\n' ';')"
        sleep 1
    done
done

# --- what each job got, from `scontrol -o show job -d` (kept MinJobAge after the end) -
cat >"$WORK/summary.py" <<'PY'
import re, sys, datetime
def hosts(expr):  # number of hosts in a Slurm hostlist such as n[1-2,4],m3
    n = 0
    for m in re.finditer(r'[^,\[]+(?:\[([^\]]*)\])?', expr):
        if m.group(1) is None:
            n += 1
            continue
        for part in m.group(1).split(','):
            lo, _, hi = part.partition('-')
            n += int(hi or lo) - int(lo) + 1
    return n
def ids(expr):  # number of CPU ids in 0-5,8
    return sum(int(p.partition('-')[2] or p) - int(p.partition('-')[0]) + 1
               for p in expr.split(',') if p)
def epoch(s):
    try:
        return int(datetime.datetime.strptime(s, '%Y-%m-%dT%H:%M:%S').timestamp())
    except ValueError:
        return -1
for line in sys.stdin:
    f = dict(re.findall(r'(?:^| )([A-Za-z/:_]+)=(\S*)', line))
    per = []
    for nodes, cpus, mem in re.findall(
            r'(?<![A-Za-z])Nodes=(\S+) CPU_IDs=(\S+) Mem=(\d+)', line):
        per += ['%dc/%sM' % (ids(cpus), mem)] * hosts(nodes)
    tres = dict(kv.split('=', 1) for kv in f.get('TRES', '').split(',') if '=' in kv)
    # Per-node GRES lines empty at the end of a job; JOB_GRES keeps the allocation.
    jgres = re.sub(r'\(IDX:[^)]*\)', '', f.get('JOB_GRES', '(null)'))
    print('id=%s offset=%s state=%s exit=%s reason=%s nodes=%s cpus=%s tasks=%s mem=%s '
          'gres=%s oversubscribe=%s pernode=%s start=%d end=%d' % (
              f.get('JobId'), f.get('HetJobOffset', '-'), f.get('JobState'),
              f.get('ExitCode'), f.get('Reason'), f.get('NumNodes'), f.get('NumCPUs'),
              f.get('NumTasks'), tres.get('mem', '-'), jgres, f.get('OverSubscribe'),
              '+'.join(sorted(per)) or '-', epoch(f.get('StartTime', '')),
              epoch(f.get('EndTime', ''))))
PY
declare -A REC=()
record() {  # record KIND: REC[KIND.A], REC[KIND.B], one line per job/component/task
    local c
    for c in A B; do
        REC[$1.$c]=$(on $c scontrol -o show job -d "${ID[$1.$c]}" | python3 "$WORK/summary.py") ||
            fail "$1: scontrol show job ${ID[$1.$c]} failed on the ${LABEL[$c]}"
        [ -n "${REC[$1.$c]}" ] || fail "$1: no record of job ${ID[$1.$c]} on the ${LABEL[$c]}"
    done
}
get() {  # get KIND CLUSTER KEY: the values of KEY over the job's lines, space-separated
    tr ' ' '\n' <<<"${REC[$1.$2]}" | sed -n "s/^$3=//p" | tr '\n' ' ' | sed 's/ $//'
}
cmp() {  # cmp KIND KEY...: KEY agrees on both clusters
    local kind=$1 k; shift
    for k in "$@"; do same "$kind" "$k" "$(get "$kind" A "$k")" "$(get "$kind" B "$k")"; done
}
endstate() {  # endstate KIND CLUSTER: JobState in that cluster's jobcomp log
    sed -n "s/^JobId=${ID[$1.$2]} .*JobState=\([A-Z_]*\).*/\1/p" "${JOBCOMP[$2]}" | tail -n1
}
cmp_end() {  # cmp_end KIND EXPECTED
    want "$1" "end state in jobcomp.log" "$2" "$(endstate "$1" A)" "$(endstate "$1" B)"
}

for kind in exclusive cpu_1node cpu_multinode mem mem_per_cpu gpu dep_a dep_b dep_c; do
    record "$kind"
done
summary=()

# Plain CPU jobs: counts, not node names; single-node also the CPUs and memory it got.
cmp_end cpu_1node COMPLETED
cmp cpu_1node state exit nodes cpus tasks mem gres pernode
cmp_end cpu_multinode COMPLETED
cmp cpu_multinode state exit nodes cpus tasks mem
summary+=("cpu $(get cpu_multinode B nodes)N/$(get cpu_multinode B cpus)c")

# Memory: --mem is per node, --mem-per-cpu times the CPUs of the node.
cmp_end mem COMPLETED
cmp mem state nodes cpus mem pernode
want mem "memory per node" "3000M 3000M" \
    "$(get mem A pernode | tr '+' '\n' | cut -d/ -f2 | tr '\n' ' ' | sed 's/ $//')" \
    "$(get mem B pernode | tr '+' '\n' | cut -d/ -f2 | tr '\n' ' ' | sed 's/ $//')"
cmp_end mem_per_cpu COMPLETED
cmp mem_per_cpu state nodes cpus mem pernode
want mem_per_cpu "memory of the node" 4c/6000M \
    "$(get mem_per_cpu A pernode)" "$(get mem_per_cpu B pernode)"
summary+=("mem $(get mem B pernode),$(get mem_per_cpu B pernode)")

# --exclusive: whole nodes, all their CPUs.
cores=$(on B scontrol -o show node n1 | sed -n 's/.* CPUTot=\([0-9]*\).*/\1/p')
cmp_end exclusive COMPLETED
cmp exclusive state nodes cpus mem gres pernode oversubscribe
want exclusive "CPUs" $((2 * cores)) "$(get exclusive A cpus)" "$(get exclusive B cpus)"
for c in A B; do
    for n in $(get exclusive $c pernode | tr '+' ' '); do
        [ "${n%%c/*}" = "$cores" ] ||
            fail "exclusive: a node with ${n%%c/*} of $cores CPUs ($n) on the ${LABEL[$c]}"
    done
done
summary+=("exclusive $(get exclusive B pernode)")

# Job array: the same number of tasks, all COMPLETED.
declare -A ARR=()
for c in A B; do
    ARR[$c]=$(sed -n "s/^JobId=[0-9]* .*JobState=\([A-Z_]*\) .*ArrayJobId=${ID[array.$c]} .*/\1/p" \
        "${JOBCOMP[$c]}" | sort | uniq -c | awk '{print $2 "x" $1}' | tr '\n' ' ')
done
want array "task end states" "COMPLETEDx4 " "${ARR[A]}" "${ARR[B]}"

# Hetjob: the same components with the same counts and states.
record hetjob
cmp hetjob offset state exit nodes cpus tasks mem
want hetjob "components" "0 1" "$(get hetjob A offset)" "$(get hetjob B offset)"
declare -A HET=()
for c in A B; do
    HET[$c]=$(sed -n "s/^JobId=[0-9]* .*JobState=\([A-Z_]*\) .*NodeCnt=\([0-9]*\) ProcCnt=\([0-9]*\) .*HetJobId=${ID[hetjob.$c]} HetJobOffset=\([0-9]*\).*/+\4:\1:\2N:\3c/p" \
        "${JOBCOMP[$c]}" | sort | tr '\n' ' ')
done
want hetjob "jobcomp components" "+0:COMPLETED:1N:2c +1:COMPLETED:2N:8c " "${HET[A]}" "${HET[B]}"
summary+=("hetjob ${HET[B]% }")

# GPU job without hints: one node, 2 GPUs, and the job sees 2.
cmp_end gpu COMPLETED
cmp gpu state exit nodes cpus tasks mem
want gpu "GRES of the job" "gpu:${gpu_type:-v100}:2" "$(get gpu A gres)" "$(get gpu B gres)"
seen() { sed -n 's/^gpus=//p' "$WORK/gpu.${ID[gpu.$1]}.out" 2>/dev/null | tr ',' '\n' | grep -c . || true; }
want gpu "GPUs in CUDA_VISIBLE_DEVICES" 2 "$(seen A)" "$(seen B)"

# Dependencies: states, and each dependent job starts no earlier than its parent ended.
cmp_end dep_a COMPLETED
cmp_end dep_b FAILED
cmp_end dep_c COMPLETED
cmp dep_b exit
order() {  # order CLUSTER PARENT CHILD: "after" when CHILD started at/after PARENT ended
    local e s
    e=$(get "$2" "$1" end); s=$(get "$3" "$1" start)
    if [ "$e" -gt 0 ] && [ "$s" -ge "$e" ]; then echo after; else echo "before(start=$s,parent_end=$e)"; fi
}
want "dependency afterok" "dep_b start vs dep_a end" after "$(order A dep_a dep_b)" "$(order B dep_a dep_b)"
want "dependency afterany" "dep_c start vs dep_b end" after "$(order A dep_b dep_c)" "$(order B dep_b dep_c)"

# afternotok on a job that succeeded: never runs; same state and reason on both.
declare -A NEVER=()
deadline=$((SECONDS + 20))
for c in A B; do
    while :; do
        NEVER[$c]=$(on $c squeue -h -j "${ID[dep_never.$c]}" -o '%T/%r' 2>/dev/null || true)
        [ "${NEVER[$c]}" = PENDING/DependencyNeverSatisfied ] && break
        if [[ ${NEVER[$c]} != PENDING/* ]] || [ $SECONDS -ge $deadline ]; then break; fi
        sleep 1
    done
done
want "dependency afternotok" "state/reason" PENDING/DependencyNeverSatisfied "${NEVER[A]}" "${NEVER[B]}"
for c in A B; do on $c scancel "${ID[dep_never.$c]}"; done
deadline=$((SECONDS + 20))
for c in A B; do
    until [ -n "$(endstate dep_never $c)" ]; do
        [ $SECONDS -lt $deadline ] || break
        sleep 1
    done
done
cmp_end dep_never CANCELLED

pass "suite = stock for ${summary[*]}, array 4xCOMPLETED, deps COMPLETED/FAILED/COMPLETED/never, gpus 2, rejected ${REJ[B]%% sbatch: error: Batch*} ($((SECONDS - t0))s)"
