#!/usr/bin/env bash
# Gang allocation (--ai-gang): members wait, with the reason in their SystemComment, until
# all of them are pending; a gang of 3 never starts partially when only 2 fit; once the
# 3 fit they start together, in one scheduling pass, placed jointly (one leaf, as the
# engine places a single 3-node job).
source "$(dirname "$0")/lib.sh"
trap 'cancel_named gang-trio gang-blocker' EXIT

comment_of() { scontrol show job "$1" | sed -n 's/.*SystemComment=\(.*\)/\1/p'; }
states() { for j in "$@"; do squeue -h -j "$j" -o %T; done | sort | uniq -c | tr -s ' ' | tr '\n' ';'; }

# Six of eight nodes busy: two can take a member.
blocker=$(sbatch --parsable -J gang-blocker -w n[1-6] -N6 --gpus-per-node=4 -o /dev/null --wrap='sleep 300')
for _ in $(seq 60); do [ "$(squeue -h -j "$blocker" -o %T)" = RUNNING ] && break; sleep 0.5; done
expect_eq "the job that keeps n[1-6] busy" RUNNING "$(squeue -h -j "$blocker" -o %T)"
member() { sbatch --parsable -J gang-trio -N1 --gpus-per-node=4 --ai-gang=trio:3:10m -o /dev/null --wrap='sleep 60'; }
a=$(member)
b=$(member)
for _ in $(seq 20); do
    case $(comment_of "$b") in *"2 of 3 members submitted"*) break ;; esac
    sleep 0.5
done
expect_contains "reason of a member while 2 of 3 are submitted" "$(comment_of "$b")" \
    "gang trio waits: 2 of 3 members submitted"
expect_eq "members with 2 of 3 submitted, 2 nodes free" " 2 PENDING;" "$(states "$a" "$b")"

c=$(member)
# Three members, two nodes: nobody starts, for several scheduling passes.
for _ in $(seq 20); do
    case $(comment_of "$c") in *"do not fit together"*) break ;; esac
    sleep 0.5
done
sleep 4
expect_eq "members with 3 submitted and 2 nodes free" " 3 PENDING;" "$(states "$a" "$b" "$c")"
expect_contains "reason when they do not fit" "$(comment_of "$a")" "do not fit together"

scancel "$blocker"
for _ in $(seq 60); do
    [ "$(states "$a" "$b" "$c")" = " 3 RUNNING;" ] && break
    sleep 0.5
done
expect_eq "members once 3 fit" " 3 RUNNING;" "$(states "$a" "$b" "$c")"
starts=$(for j in "$a" "$b" "$c"; do date -d "$(squeue -h -j "$j" -o %S)" +%s; done | sort -n)
spread=$(($(tail -n1 <<<"$starts") - $(head -n1 <<<"$starts")))
[ "$spread" -le 2 ] || fail "members started $spread s apart: $(tr '\n' ' ' <<<"$starts")"
nodes=$(for j in "$a" "$b" "$c"; do squeue -h -j "$j" -o %N; done | sort -u)
expect_eq "distinct nodes of the members" 3 "$(grep -c . <<<"$nodes")"
leaves=$(sed 's/^n//' <<<"$nodes" | awk '{print ($1 <= 4) ? 1 : 2}' | sort -u | grep -c .)
expect_eq "leaves used by the gang ($(tr '\n' ' ' <<<"$nodes"))" 1 "$leaves"
expect_contains "record of a member" "$(json_get "$STATE_DIR/ai_select/jobs/$b.json" decision.policy)" "-gang"
scancel "$a" "$b" "$c"
pass "waited at 2/3 and at 3 members for 2 nodes; started together ($spread s) on $(tr '\n' ' ' <<<"$nodes")"
