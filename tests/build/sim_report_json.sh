#!/usr/bin/env bash
# `ai-sim report --json` (issue 18's, 19's and 32's figures as JSON), on the quick scenarios:
# the stable scenario names, each with its elastic share stated and the six variants
# (contention off/on x none, the assumed share, all elastic), every policy with its
# figures; the headline targets computed from the headline variant's own figures; the
# failures section with a win rate per regime for engine and engine-learned, each one
# wins / (wins + losses); per variant best_slurm, ideal and gap_closed recomputed from the
# policies' own figures, and the placement targets judged on theirs; the learned placement
# scorers' judgement; and the page.
#
#   sim_report_json.sh AI_SIM
set -euo pipefail
sim=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$sim" report --quick --threads 2 --out "$tmp/eval.md" --img "$tmp/img" --json "$tmp/eval.json" \
    >"$tmp/log" 2>&1 || { tail -n 20 "$tmp/log"; echo "FAIL: ai-sim report --quick failed"; exit 1; }
python3 - "$tmp/eval.json" "$tmp/eval.md" <<'PY'
import json, math, sys

d = json.load(open(sys.argv[1]))
page = open(sys.argv[2]).read()
errors = []
def check(ok, what):
    if not ok:
        errors.append(what)

names = [s["name"] for s in d["scenarios"]]
check(sorted(names) == sorted(["philly-gpus", "philly-whole-nodes", "pollux", "rail-h100", "nvl72",
                               "nvl72-rails"]),
      f"scenario names {names}")
figures = ["mean_jct_h", "p99_jct_h", "mean_wait_h", "gpu_util", "useful_util", "jobs", "finished"]
for s in d["scenarios"]:
    n = s["name"]
    check(0 < s["elastic_share"] < 1 and s["could_be_elastic"] >= s["elastic_jobs"] >= 0,
          f"{n}: elastic share {s['elastic_share']}, {s['elastic_jobs']} of {s['could_be_elastic']}")
    variants = sorted((v["contention"], v["elastic_share"]) for v in s["variants"])
    check(variants == sorted((c, e) for c in (False, True) for e in (0.0, s["elastic_share"], 1.0)),
          f"{n}: variants {variants}")
    for v in s["variants"] + [s]:
        pols = {p["policy"]: p for p in v["policies"]}
        check({"slurm-default", "tree-bestfit", "engine", "suite"} <= set(pols),
              f"{n}: policies {sorted(pols)}")
        for p in v["policies"]:
            for f in figures:
                x = p.get(f)
                check(isinstance(x, (int, float)) and math.isfinite(x) and x >= 0,
                      f"{n} {p['policy']}: {f}={x}")
            check(p["finished"] == p["jobs"] > 0, f"{n} {p['policy']}: {p['finished']} of {p['jobs']} done")
            check(p["p99_jct_h"] >= p["mean_wait_h"], f"{n} {p['policy']}: p99 JCT below mean wait")
    # The limits of placement, per variant: best_slurm is the best of Slurm's policies by
    # mean JCT, ideal is the policy "ideal", gap_closed recomputes from them (null: no gap).
    slurm = ("slurm-default", "tree-bestfit", "block-bestfit", "block-segment")
    for v in s["variants"]:
        pols = {p["policy"]: p for p in v["policies"]}
        check({"block-bestfit", "block-segment", "ideal"} <= set(pols), f"{n}: policies {sorted(pols)}")
        best = min((pols[p] for p in slurm if p in pols), key=lambda p: p["mean_jct_h"])
        b, i = v.get("best_slurm", {}), v.get("ideal", {})
        check(b.get("policy") == best["policy"] and b.get("mean_jct_h") == best["mean_jct_h"]
              and b.get("p99_jct_h") == best["p99_jct_h"], f"{n}: best_slurm {b} vs {best['policy']}")
        check(i.get("mean_jct_h") == pols["ideal"]["mean_jct_h"], f"{n}: ideal {i}")
        gap = best["mean_jct_h"] - pols["ideal"]["mean_jct_h"]
        for who in ("engine", "suite"):
            g = v.get("gap_closed", {}).get(who, "missing")
            if gap > 0.005 * best["mean_jct_h"]:
                want = (best["mean_jct_h"] - pols[who]["mean_jct_h"]) / gap
                check(isinstance(g, float) and abs(g - want) < 1e-9, f"{n}: gap_closed.{who} {g} vs {want}")
            else:
                check(g is None, f"{n}: gap_closed.{who} {g} with no gap")
    check(all(k in s for k in ("best_slurm", "ideal", "gap_closed")), f"{n}: headline limits")
    # The scenario's own figures are its headline variant's: contention on, the assumed share.
    head = [v for v in s["variants"] if v["contention"] and v["elastic_share"] == s["elastic_share"]]
    check(len(head) == 1 and head[0]["policies"] == s["policies"], f"{n}: headline figures")

by_name = {s["name"]: {p["policy"]: p for p in s["policies"]} for s in d["scenarios"]}
targets = {t["scenario"]: t for t in d["targets"]}
for n in ("philly-gpus", "philly-whole-nodes", "pollux"):
    t, pol = targets.get(n), by_name[n]
    if t is None:
        check(False, f"no target for {n}")
        continue
    change = pol["suite"]["mean_jct_h"] / pol["tree-bestfit"]["mean_jct_h"] - 1
    check(abs(t["mean_jct_change"] - change) < 1e-9, f"{n}: target change {t['mean_jct_change']} vs {change}")
    check(t["mean_met"] == (change <= -0.25), f"{n}: mean_met {t['mean_met']} at {change}")

# The placement targets: each entry judged by its own figures.
kinds = set()
for t in d["placement_targets"]:
    kinds.add(t["target"])
    if t["target"] == "engine_parity":
        want = t["mean_jct_change"] <= 0.005 and t["p99_jct_change"] <= 0.005
    elif t["target"] == "gap_closed":
        want = None if t["gap_closed"] is None else t["gap_closed"] >= 0.5
    else:
        want = t["mean_jct_change"] <= t["bound"]
    check(want is None or t["met"] == want, f"placement target {t}")
check({"engine_parity", "gap_closed", "engine_below_slurm", "suite_below_slurm"} <= kinds,
      f"placement target kinds {sorted(kinds)}")
check(any(t["scenario"] == "nvl72-rails" and t["target"] == "engine_below_slurm"
          for t in d["placement_targets"]), "no nvl72-rails target")

wr = d["failures"]["win_rate"]
for policy in ("engine", "engine-learned"):
    for regime in ("cyclic", "tree", "single"):
        r = wr.get(policy, {}).get(regime)
        if r is None:
            check(False, f"failures.win_rate.{policy}.{regime} missing")
            continue
        decided = r["wins"] + r["losses"]
        want = r["wins"] / decided if decided else None
        check(r["win_rate"] == want or (want is not None and abs(r["win_rate"] - want) < 1e-12),
              f"failures.win_rate.{policy}.{regime} = {r['win_rate']}, {r['wins']} wins {r['losses']} losses")
lm = d["failures"]["learned_model"]
check(lm["format"] == "slurm-ai learned risk model" and len(lm["parameters"]) == 217 and lm["version"] == 2,
      f"learned model: {lm.get('format')}, {len(lm.get('parameters', []))} parameters")

judged = d["failures"]["learned_judged"]
check(len(judged) >= 2 and all(
          0 <= j["auc"] <= 1 and j["pairs"] >= 0 and
          all(j[k] is None or 0 <= j[k] <= 1 for k in ("pairs_accuracy", "pairs_accuracy_hand_written")) and
          (j["pairs_accuracy"] is None) == (j["pairs"] == 0)
          for j in judged),
      f"learned model judged: {judged}")

# The learned placement scorers (issue 38), as their files in contrib record them: each of
# nvl72, nvl72-rails and rail-h100 with and without the SRR terms, judged at 2, 4 and 16
# times its training size; the verdicts recomputed from the figures (a win is more than
# 0.5% below the engine at every size; the goal 5%).
learned = d.get("learned_placement", [])
check(sorted((m["scenario"], m["regularizer"] > 0) for m in learned)
      == sorted((s, r) for s in ("nvl72", "nvl72-rails", "rail-h100") for r in (False, True)),
      f"learned_placement: {[(m['scenario'], m['regularizer']) for m in learned]}")
for m in learned:
    j = m["judged"]
    check([x["hosts"] for x in j] == [m["trained_hosts"] * f for f in (2, 4, 16)],
          f"{m['file']}: judged at {[x['hosts'] for x in j]}")
    for x in j:
        check(math.isclose(x["change"], x["mean_jct_h"] / x["engine_mean_jct_h"] - 1, abs_tol=1e-12)
              and x["windows"] > 0, f"{m['file']}: {x}")
    check(m["beats_engine"] == all(x["mean_jct_h"] < x["engine_mean_jct_h"] * 0.995 for x in j),
          f"{m['file']}: beats_engine {m['beats_engine']}")
    check(m["five_percent_below_engine"] == all(x["change"] <= -0.05 for x in j),
          f"{m['file']}: five_percent_below_engine")
for heading in ("## The targets", "## The limits of placement", "## 6. Failures as they happen",
                "## 8. A learned placement scorer", "## Where the suite wins, ties and loses"):
    check(heading in page, f"page lacks '{heading}'")

if errors:
    print("FAIL: " + "\n      ".join(errors))
    sys.exit(1)
print(f"ok: {len(names)} scenarios x 6 variants, targets and failures consistent")
PY
