#!/usr/bin/env python3
"""The Grafana dashboard in contrib/ asks only for what ai-metrics serves.

Usage: grafana_dashboard.py AI_METRICS DASHBOARD.json

Every panel has at least one PromQL query; every metric a query names (an identifier
beginning slurm_ai_, or any other series name) is a family `ai-metrics --names` prints,
a histogram's family with _bucket, _sum or _count, or Prometheus' own `up`; and every
family the daemon serves appears in some panel.
"""
import json
import re
import subprocess
import sys

PROMQL_WORDS = {
    "sum", "by", "without", "rate", "increase", "histogram_quantile", "on", "ignoring",
    "avg", "max", "min", "count", "le", "topk", "bottomk", "irate", "delta", "group_left",
    "group_right", "and", "or", "unless", "offset",
}


def main():
    tool, path = sys.argv[1], sys.argv[2]
    names = set(subprocess.run([tool, "--names"], check=True, capture_output=True,
                               text=True).stdout.split())
    if not names:
        sys.exit(f"{tool} --names printed nothing")
    dash = json.load(open(path))
    used = set()
    problems = []
    for panel in dash["panels"]:
        exprs = [t["expr"] for t in panel.get("targets", []) if t.get("expr")]
        if not exprs:
            problems.append(f"panel {panel['title']!r}: no query")
        for expr in exprs:
            # Drop label matchers and strings, then read the identifiers left.
            bare = re.sub(r'\{[^}]*\}|"[^"]*"|\[[^\]]*\]|\b(by|without|on|ignoring)\s*\([^)]*\)',
                          " ", expr)
            for ident in re.findall(r"[A-Za-z_:][A-Za-z0-9_:]*", bare):
                if ident in PROMQL_WORDS or re.fullmatch(r"\d.*", ident):
                    continue
                family = re.sub(r"_(bucket|sum|count)$", "", ident)
                if ident in names or family in names:
                    used.add(ident if ident in names else family)
                elif ident != "up":
                    problems.append(f"panel {panel['title']!r}: {ident} is not served "
                                    f"(query {expr!r})")
    unused = sorted(names - used)
    if unused:
        problems.append("families no panel shows: " + ", ".join(unused))
    if problems:
        sys.exit("\n".join(problems))
    print(f"{len(dash['panels'])} panels, {len(used)} of {len(names)} families, all served")


if __name__ == "__main__":
    main()
