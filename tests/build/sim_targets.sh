#!/usr/bin/env bash
# `ai-sim targets` (issue 32's placement targets on a scenario the report does not run), on
# one Pollux workload: the six variants with Slurm's four policies, the engine, the suite
# and the ideal; every verdict recomputed from the figures beside it (the engine's mean and
# p99 against the best Slurm policy, the gap closed, the fabrics' 10% and 20% with
# --fabric-targets only); the count printed is the JSON's; with --traces, two workloads
# judged as one scenario, each figure the mean of theirs; a missing node file is refused
# with its name and no output, and a --json that cannot be written is an error naming it.
#
#   sim_targets.sh AI_SIM DATA_DIR SOURCE_DIR
set -euo pipefail
sim=$1 data=$2 src=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
args=(--trace "$data/comm-measurements/workloads/workload-1.csv" --one-switch --hosts 16
      --host-gbps 50 --duration-scale 0.0333333333333)
"$sim" targets --name w1 "${args[@]}" --node "$src/tests/inputs/g4dn-12xlarge-topo.xml" \
    --json "$tmp/plain.json" >"$tmp/plain.out" 2>&1 ||
    { tail -n 20 "$tmp/plain.out"; echo "FAIL: ai-sim targets failed"; exit 1; }
"$sim" targets --name w1 --fabric-targets "${args[@]}" \
    --node "$src/tests/inputs/g4dn-12xlarge-topo.xml" --json "$tmp/fabric.json" \
    >"$tmp/fabric.out" 2>&1 ||
    { tail -n 20 "$tmp/fabric.out"; echo "FAIL: ai-sim targets --fabric-targets failed"; exit 1; }
w2=(--traces "$data/comm-measurements/workloads/workload-1.csv"
    "$data/comm-measurements/workloads/workload-2.csv" --one-switch --hosts 16 --host-gbps 50
    --duration-scale 0.0333333333333 --node "$src/tests/inputs/g4dn-12xlarge-topo.xml")
"$sim" targets --name w12 "${w2[@]}" --json "$tmp/both.json" >"$tmp/both.out" 2>&1 ||
    { tail -n 20 "$tmp/both.out"; echo "FAIL: ai-sim targets --traces failed"; exit 1; }
"$sim" targets --name w2 "${w2[@]:0:1}" "${w2[@]:2}" --json "$tmp/second.json" \
    >"$tmp/second.out" 2>&1 ||
    { tail -n 20 "$tmp/second.out"; echo "FAIL: ai-sim targets on workload 2 failed"; exit 1; }
if "$sim" targets "${args[@]}" --node "$tmp/missing.xml" --json "$tmp/bad.json" \
    >"$tmp/bad.out" 2>&1; then
    echo "FAIL: a missing node file was accepted"; exit 1
fi
grep -q "missing.xml" "$tmp/bad.out" || { cat "$tmp/bad.out"; echo "FAIL: error names no file"; exit 1; }
[ ! -e "$tmp/bad.json" ] || { echo "FAIL: a refused run wrote its JSON"; exit 1; }
if "$sim" targets "${args[@]}" --node "$src/tests/inputs/g4dn-12xlarge-topo.xml" \
    --json "$tmp/no/such/dir.json" >"$tmp/unwritable.out" 2>&1; then
    echo "FAIL: an unwritable --json was not an error"; exit 1
fi
grep -q "no/such/dir.json" "$tmp/unwritable.out" ||
    { tail -n 3 "$tmp/unwritable.out"; echo "FAIL: the error names no file"; exit 1; }
python3 - "$tmp" <<'PY'
import json, re, sys

tmp = sys.argv[1]
errors = []
def check(ok, what):
    if not ok:
        errors.append(what)

tie = 0.005
slurm = ("slurm-default", "tree-bestfit", "block-bestfit", "block-segment")
for run, fabric in (("plain", False), ("fabric", True)):
    d = json.load(open(f"{tmp}/{run}.json"))
    s, verdicts = d["scenario"], d["placement_targets"]
    check(s["name"] == "w1", f"{run}: name {s['name']}")
    variants = {(v["contention"], v["elastic_share"]): v for v in s["variants"]}
    check(sorted(variants) == sorted((c, e) for c in (False, True) for e in (0.0, 0.5, 1.0)),
          f"{run}: variants {sorted(variants)}")
    for key, v in variants.items():
        pols = {p["policy"]: p for p in v["policies"]}
        check(set(slurm) | {"engine", "suite", "ideal"} == set(pols), f"{run} {key}: {sorted(pols)}")
        check(all(p["finished"] == p["jobs"] == 160 for p in v["policies"]), f"{run} {key}: jobs")
    kinds = {}
    for t in verdicts:
        key = (t["contention"], t["elastic_share"])
        kinds.setdefault(t["target"], []).append(key)
        pols = {p["policy"]: p for p in variants[key]["policies"]}
        best = min((pols[p] for p in slurm), key=lambda p: p["mean_jct_h"])
        engine, ideal = pols["engine"], pols["ideal"]
        mean = (engine["mean_jct_h"] - best["mean_jct_h"]) / best["mean_jct_h"]
        if t["target"] == "engine_parity":
            p99 = (engine["p99_jct_h"] - best["p99_jct_h"]) / best["p99_jct_h"]
            check(t["best_slurm"] == best["policy"] and abs(t["mean_jct_change"] - mean) < 1e-12
                  and abs(t["p99_jct_change"] - p99) < 1e-12, f"{run} {key}: parity {t}")
            check(t["met"] == (mean <= tie and p99 <= tie), f"{run} {key}: parity met {t}")
        elif t["target"] == "gap_closed":
            gap = best["mean_jct_h"] - ideal["mean_jct_h"]
            if gap > tie * best["mean_jct_h"]:
                g = (best["mean_jct_h"] - engine["mean_jct_h"]) / gap
                check(abs(t["gap_closed"] - g) < 1e-12 and t["met"] == (g >= 0.5),
                      f"{run} {key}: gap {t} vs {g}")
            else:
                check(t["gap_closed"] is None and t["met"] == (mean <= tie), f"{run} {key}: {t}")
        else:
            who = "engine" if t["target"] == "engine_below_slurm" else "suite"
            d = (pols[who]["mean_jct_h"] - best["mean_jct_h"]) / best["mean_jct_h"]
            check(abs(t["mean_jct_change"] - d) < 1e-12 and t["met"] == (d <= t["bound"]),
                  f"{run} {key}: {t}")
    check(sorted(kinds.get("engine_parity", [])) == [(False, 0.0), (True, 0.0)],
          f"{run}: parity verdicts {kinds.get('engine_parity')}")
    check(len(kinds.get("gap_closed", [])) == 6, f"{run}: gap verdicts {kinds.get('gap_closed')}")
    want = {"engine_below_slurm": [(True, 0.0)], "suite_below_slurm": [(True, 0.5)]} if fabric else {}
    check({k: v for k, v in kinds.items() if k.endswith("_below_slurm")} == want,
          f"{run}: fabric verdicts {kinds}")
    out = open(f"{tmp}/{run}.out").read()
    met = sum(t["met"] for t in verdicts)
    check(f"{met} of {len(verdicts)} verdicts met" in out, f"{run}: count line")
    check(len(re.findall(r": (met|MISSED)$", out, re.M)) == len(verdicts), f"{run}: verdict lines")
# Two traces as one scenario: every figure the mean of the two runs' (jobs: their sum).
def variants_of(run):
    return {(v["contention"], v["elastic_share"]): {p["policy"]: p for p in v["policies"]}
            for v in json.load(open(f"{tmp}/{run}.json"))["scenario"]["variants"]}
one, two, both = variants_of("plain"), variants_of("second"), variants_of("both")
for key, pols in both.items():
    for name, p in pols.items():
        a, b = one[key][name], two[key][name]
        check(p["jobs"] == a["jobs"] + b["jobs"], f"both {key} {name}: jobs {p['jobs']}")
        for f in ("mean_jct_h", "p99_jct_h"):
            check(abs(p[f] - (a[f] + b[f]) / 2) < 1e-9, f"both {key} {name}: {f} {p[f]}")
check(one[(False, 0.0)]["engine"]["mean_jct_h"] != two[(False, 0.0)]["engine"]["mean_jct_h"],
      "workloads 1 and 2 gave the same figures")
if errors:
    print("\n".join("FAIL: " + e for e in errors))
    sys.exit(1)
print("ok: ai-sim targets")
PY
