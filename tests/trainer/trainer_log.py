#!/usr/bin/env python3
"""Reads the output of toy_trainer.py jobs (all runs appended to one file) and prints, as
JSON, each run of the job and what it lost. ddp_trainer.py's lines have the same form and
are read the same way (its digests are compared by the tests; final_digest_ok is the toy's
chain check only):

  {"runs": [{"start": T, "resume_step": S, "resume_from": PATH, "restart": C, "nodes": [..],
             "committed_before": K,     # highest step committed before the run started
             "checkpoint_before": C,    # newest checkpoint written before it started
             "lost": K - S}],           # committed steps the run had to do again
   "checkpoints": [[T, step, why], ...], "done": [[rank, step, digest], ...],
   "errors": [...], "final_step": S or null, "final_digest_ok": true/false,
   "failures": [{"at": T, "newest_checkpoint_before": S, "committed_before": K}]}

--failure T (repeatable) adds, for each failure time, the newest checkpoint written and the
highest step committed before it, so that a test can check that a restart never resumed
from an older checkpoint and lost no more than the steps done since then.
"""
import argparse
import hashlib
import json
import re

LINE = re.compile(r"^(\d+\.\d+) rank=(\d+) node=(\S+) (.*)$")
SEED = b"slurm-ai toy trainer"


def state_at(step):
    digest = hashlib.sha256(SEED).hexdigest()
    for k in range(1, step + 1):
        digest = hashlib.sha256((digest + ":" + str(k)).encode()).hexdigest()
    return digest


def newest_before(entries, t):
    """The highest step among [time, step, ...] entries earlier than t (0 if none)."""
    return max([0] + [e[1] for e in entries if e[0] < t])


def analyse(path, failures):
    events = []
    with open(path, errors="replace") as f:
        for line in f:
            m = LINE.match(line.strip())
            if m:
                events.append((float(m.group(1)), int(m.group(2)), m.group(3), m.group(4)))
    events.sort(key=lambda e: e[0])
    runs, checkpoints, commits, done, errors = [], [], [], [], []
    committed, last_kind = 0, None
    for t, rank, node, what in events:
        kv = dict(re.findall(r"(\w+)=(\S+)", what))
        kind = what.split()[0] if what else ""
        if kind == "resume":
            if last_kind != "resume":
                runs.append({"start": t, "resume_step": int(kv["step"]), "resume_from": kv["from"],
                             "restart": int(kv["restart"]), "nodes": [],
                             "committed_before": committed,
                             "checkpoint_before": newest_before(checkpoints, t),
                             "lost": committed - int(kv["step"])})
            runs[-1]["nodes"].append(node)
        elif kind.startswith("step="):
            committed = max(committed, int(kv["step"]))
            commits.append((t, int(kv["step"])))
        elif kind == "checkpoint":
            checkpoints.append([t, int(kv["step"]), kv["why"]])
        elif kind == "done":
            done.append([rank, int(kv["step"]), kv["digest"]])
        elif kind == "error":
            errors.append(what)
        last_kind = kind
    for run in runs:
        run["nodes"].sort()
    steps = {d[1] for d in done}
    final = steps.pop() if len(steps) == 1 else None
    out = {"runs": runs, "checkpoints": checkpoints, "done": done, "errors": errors,
           "final_step": final,
           "final_digest_ok": final is not None and all(d[2] == state_at(final) for d in done),
           "failures": []}
    for ft in failures:
        out["failures"].append({
            "at": ft,
            "newest_checkpoint_before": newest_before(checkpoints, ft),
            "committed_before": newest_before(commits, ft)})
    return out


def main():
    p = argparse.ArgumentParser(description="Runs and lost steps of a toy_trainer.py job")
    p.add_argument("output", help="the job's output file (--open-mode=append)")
    p.add_argument("--failure", type=float, action="append", default=[],
                   help="epoch time of a node failure")
    a = p.parse_args()
    print(json.dumps(analyse(a.output, a.failure), indent=1))


if __name__ == "__main__":
    main()
