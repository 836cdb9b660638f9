#!/usr/bin/env bash
# The man pages (docs/man/*.1) format without a groff warning and say what the tools'
# --help says: every option --help lists is in the page, and every option the page's
# OPTIONS and COMMANDS sections describe is one --help lists (so a renamed or removed
# option fails here). A tool with subcommands (its --help lists "Subcommands:") has a
# COMMANDS entry for each, and each subcommand's --help counts as the tool's; so do
# ai-minicluster's commands. Page NAME.1 documents bin/NAME, except ai-minicluster.1:
# tools/minicluster, which cmake installs under that name.
#
#   man_pages.sh SOURCE_DIR BIN_DIR
set -euo pipefail
src=$1 bin=$2
/usr/bin/python3 - "$src" "$bin" <<'PY'
import glob, os, re, subprocess, sys

src, bin_dir = sys.argv[1], sys.argv[2]
failures = []
OPT = re.compile(r"(?<![\w-])--[a-z][a-z0-9]*(?:-[a-z0-9]+)*")
# Tools whose --help must list subcommands (so a change of its format cannot skip them).
WITH_SUBCOMMANDS = {"ai-topo", "ai-sim", "ai-resize", "ai-recover", "ai-lease"}

def help_text(args):
    r = subprocess.run(args + ["--help"], capture_output=True, text=True)
    if r.returncode != 0:
        failures.append(f"{' '.join(args)} --help exits {r.returncode}")
    return r.stdout + r.stderr

def plain(roff):
    # Font and size escapes out, escaped minus signs as '-'.
    roff = re.sub(r"\\f(\[[^]]*\]|.)", "", roff)
    return roff.replace("\\-", "-").replace("\\e", "\\").replace("\\&", "")

def sections(roff):
    out, name = {}, None
    for line in roff.splitlines():
        m = re.match(r'\.SH\s+"?([^"]+)"?', line)
        if m:
            name = m.group(1).strip()
            continue
        if name:
            out.setdefault(name, []).append(line)
    return {k: "\n".join(v) for k, v in out.items()}

pages = sorted(glob.glob(f"{src}/docs/man/*.1"))
if not pages:
    failures.append("no man pages in docs/man")
for page in pages:
    name = os.path.basename(page)[:-2]
    warn = subprocess.run(["groff", "-man", "-ww", "-z", page], capture_output=True, text=True)
    if warn.returncode != 0 or warn.stderr.strip():
        failures.append(f"{name}.1: groff warns: {warn.stderr.strip()}")
    with open(page) as f:
        text = plain(f.read())
    secs = sections(text)
    for s in ("NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "SEE ALSO"):
        if s not in secs:
            failures.append(f"{name}.1: no {s} section")
    if name == "ai-minicluster":
        cmd = [f"{src}/tools/minicluster"]
    else:
        cmd = [f"{bin_dir}/{name}"]
        if not os.access(cmd[0], os.X_OK):
            failures.append(f"{name}.1: no tool {cmd[0]}")
            continue
    helps = help_text(cmd)
    entries = secs.get("OPTIONS", "") + "\n" + secs.get("COMMANDS", "")
    if "Subcommands:" in helps:
        # CLI11's list: a name two spaces in, its description on the line or below it.
        block = helps.split("Subcommands:", 1)[1]
        subs = re.findall(r"^  ([a-z][a-z-]*)(?=\s|$)", block, re.M)
        if not subs:
            failures.append(f"{name} --help lists no subcommands")
        for sub in subs:
            helps += help_text(cmd + [sub])
            if not re.search(rf"^\.B {re.escape(sub)}\b", secs.get("COMMANDS", ""), re.M):
                failures.append(f"{name}.1: no COMMANDS entry for '{sub}'")
    elif name in WITH_SUBCOMMANDS:
        failures.append(f"{name} --help lists no subcommands")
    if name == "ai-minicluster":
        for sub in sorted(set(re.findall(r"tools/minicluster ([a-z][a-z-]*)", helps))):
            if not re.search(rf"^\.B {re.escape(sub)}\b", secs.get("COMMANDS", ""), re.M):
                failures.append(f"ai-minicluster.1: no COMMANDS entry for '{sub}'")
    in_help = set(OPT.findall(helps)) - {"--help"}
    in_page = set(OPT.findall(text))
    for o in sorted(in_help - in_page):
        failures.append(f"{name}.1 does not document {o}, which --help lists")
    for o in sorted(set(OPT.findall(entries)) - in_help):
        failures.append(f"{name}.1 describes {o}, which --help does not list")

if failures:
    print("FAIL: man pages:\n  " + "\n  ".join(failures))
    sys.exit(1)
print(f"PASS: {len(pages)} man pages agree with --help: "
      + ", ".join(os.path.basename(p) for p in pages))
PY
