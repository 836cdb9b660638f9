#!/usr/bin/env python3
"""The layout that docs/development.md describes is the tree's (issue 15):

- every folder at the top, under src/, daemons/, tools/ and bench/ is in the layout
  table, and every path the table names exists;
- no source file under src/ is longer than 600 lines;
- no function in src/, daemons/, tools/ or bench/ is longer than 120 lines (counted from
  the line of its opening brace to its closing one);
- headers are included by library ("slurm_ai/<library>/<file>"), each such header exists
  in that library's include folder, and the libraries' includes form no cycle.

Usage: layout.py REPO. Prints each problem; exits 1 if there is any.
"""
import os
import re
import sys

repo = sys.argv[1]
problems = []
doc = open(os.path.join(repo, "docs/development.md"), encoding="utf-8").read()
table = doc[doc.index("## Layout"):doc.index("\n## ", doc.index("## Layout") + 1)]
rows = {}
for line in table.splitlines():
    m = re.match(r"\| `([^`]+)` \|(.*)", line)
    if m:
        rows[m.group(1)] = m.group(2)

for path in rows:
    if not os.path.exists(os.path.join(repo, path)):
        problems.append(f"docs/development.md names {path}, which is not in the tree")

ignored = {"build", ".git", ".ci"}
for top in sorted(os.listdir(repo)):
    full = os.path.join(repo, top)
    if not os.path.isdir(full) or top in ignored or top.startswith("build"):
        continue
    if not any(path.startswith(top + "/") for path in rows):
        problems.append(f"{top}/ has no row in docs/development.md's layout table")
for parent in ("src", "daemons", "tools", "bench"):
    for sub in sorted(os.listdir(os.path.join(repo, parent))):
        if not os.path.isdir(os.path.join(repo, parent, sub)):
            continue
        path = f"{parent}/{sub}/"
        if path in rows:
            continue
        if f"`{sub}/`" not in rows.get(parent + "/", ""):
            problems.append(f"{path} is not described in docs/development.md's layout table")

libs = sorted(d for d in os.listdir(os.path.join(repo, "src"))
              if os.path.isdir(os.path.join(repo, "src", d)))
include = re.compile(r'#include "slurm_ai/([a-z_]+)/([A-Za-z0-9_.]+)"')
uses = {lib: set() for lib in libs}
for lib in libs:
    for root, _, files in os.walk(os.path.join(repo, "src", lib)):
        for name in files:
            if not re.search(r"\.(c|cpp|h|hpp)$", name):
                continue
            path = os.path.join(root, name)
            text = open(path, encoding="utf-8").read()
            rel = os.path.relpath(path, repo)
            lines = text.count("\n")
            if lines > 600:
                problems.append(f"{rel}: {lines} lines (at most 600 under src/)")
            for m in include.finditer(text):
                target, header = m.groups()
                if not os.path.exists(os.path.join(repo, "src", target, "include", "slurm_ai",
                                                   target, header)):
                    problems.append(f"{rel}: includes slurm_ai/{target}/{header}, "
                                    f"which src/{target}/include/slurm_ai/{target}/ lacks")
                elif target != lib:
                    uses[lib].add(target)
for root, _, files in os.walk(repo):
    if "/build" in root or "/.git" in root:
        continue
    for name in files:
        if re.search(r"\.(c|cpp|h|hpp)$", name):
            text = open(os.path.join(root, name), encoding="utf-8", errors="replace").read()
            for m in re.finditer(r'#include "slurm_ai/([A-Za-z0-9_.]+)"', text):
                problems.append(f"{os.path.relpath(os.path.join(root, name), repo)}: includes "
                                f"slurm_ai/{m.group(1)} without its library's folder")

# Function bodies: a '{' opened where every enclosing brace is a namespace, class, struct,
# union, enum or extern "C" block, and that is not an initializer (= {, ] = {), starts a
# function; it ends at its matching '}'. Comments, strings and characters are blanked
# first, so braces inside them do not count.
SCOPE = re.compile(r'\s*(namespace\b|extern\s+""|(template\s*<[^>]*>\s*)?(struct|class|union|enum)\b[^;(]*$|'
                   r'(typedef\s+)?(struct|enum|union)\b[^;(]*\{)')
MAX_FUNCTION_LINES = 120

def function_lengths(text):
    """(first line, length) of each function body in a C or C++ text."""
    text = re.sub(r"/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.S)
    out, stack, start, prev = [], [], 0, ""
    for number, line in enumerate(text.split("\n"), 1):
        code = re.sub(r"//.*", "", line)
        code = re.sub(r'"(\\.|[^"\\])*"', '""', code)
        code = re.sub(r"'(\\.|[^'\\])'", "''", code)
        for ch in code:
            if ch == "{":
                if any(kind != "scope" for kind in stack):
                    stack.append("inner")
                elif SCOPE.match(code) or (code.strip() == "{" and SCOPE.match(prev)):
                    stack.append("scope")
                elif re.search(r"=\s*\{|\]\s*=", code):
                    stack.append("inner")
                else:
                    stack.append("function")
                    start = number
            elif ch == "}" and stack:
                if stack.pop() == "function":
                    out.append((start, number - start + 1))
        if code.strip():
            prev = code
    return out

for parent in ("src", "daemons", "tools", "bench"):
    for root, _, files in os.walk(os.path.join(repo, parent)):
        for name in sorted(files):
            if not re.search(r"\.(c|cpp|h|hpp)$", name):
                continue
            path = os.path.join(root, name)
            text = open(path, encoding="utf-8", errors="replace").read()
            for first, length in function_lengths(text):
                if length > MAX_FUNCTION_LINES:
                    problems.append(f"{os.path.relpath(path, repo)}:{first}: a function of "
                                    f"{length} lines (at most {MAX_FUNCTION_LINES})")

state = {}
def visit(lib, trail):
    if state.get(lib) == "done":
        return
    if state.get(lib) == "open":
        problems.append("libraries include each other in a cycle: " +
                        " -> ".join(trail[trail.index(lib):] + [lib]))
        return
    state[lib] = "open"
    for dep in sorted(uses[lib]):
        visit(dep, trail + [lib])
    state[lib] = "done"
for lib in libs:
    visit(lib, [])

for p in problems:
    print(p)
print(f"layout: {len(rows)} table rows, {len(libs)} libraries under src/, "
      f"{len(problems)} problem(s)")
sys.exit(1 if problems else 0)
