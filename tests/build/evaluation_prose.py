#!/usr/bin/env python3
"""docs/evaluation.md holds the prose of bench/ai-sim/evaluation_template.md as it is.

`ai-sim report` writes the page from the template, filling each `{{name}}` with figures;
docs/development.md says to edit prose in the template. A paragraph written into the page
alone is lost at the next report, and one written into the template alone is not on the
page until then. So every run of template lines without a slot must stand in the page,
line for line and in the template's order; what a slot line writes (any number of lines)
may come between two runs. A line added to the page beside a slot's lines is not seen.

Usage: evaluation_prose.py REPO. Prints where the two part; exits 1 if they do.
"""
import os
import sys


def runs(lines):
    """The template's runs of lines without a slot: (first line number, lines)."""
    out, start = [], None
    for i, line in enumerate(lines + ["{{end}}"]):
        if "{{" in line:
            if start is not None:
                out.append((start + 1, lines[start:i]))
            start = None
        elif start is None:
            start = i
    return out


def matched(page, at, run):
    """How many of `run`'s lines stand in `page` from line `at` on."""
    n = 0
    while n < len(run) and at + n < len(page) and page[at + n] == run[n]:
        n += 1
    return n


def main(repo):
    template_path = "bench/ai-sim/evaluation_template.md"
    page_path = "docs/evaluation.md"
    with open(os.path.join(repo, template_path), encoding="utf-8") as f:
        template = f.read().splitlines()
    with open(os.path.join(repo, page_path), encoding="utf-8") as f:
        page = f.read().splitlines()
    at = 0
    for first, run in runs(template):
        found = next((i for i in range(at, len(page) - len(run) + 1)
                      if matched(page, i, run) == len(run)), None)
        if found is not None:
            at = found + len(run)
            continue
        # Where the run goes furthest before the two part.
        best = max(range(at, len(page)), key=lambda i: matched(page, i, run), default=at)
        n = matched(page, best, run)
        line = first + n
        print(f"{template_path}:{line}: {run[n]!r}")
        shown = page[best + n] if best + n < len(page) else "(the end of the page)"
        print(f"{page_path}:{best + n + 1}: {shown!r}")
        print("the page and its template part here: write the prose in the template "
              "and the page alike, or rerun `ai-sim report` (docs/development.md)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
