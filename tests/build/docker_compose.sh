#!/usr/bin/env bash
# The dockerized mini-cluster's files hold together (no Docker engine runs here, so their
# structure is checked instead): compose.yaml has a controller and the N compute
# containers c1..cN that its SLURM_AI_COMPUTE_NODES announces, all of one image built from
# docker/Dockerfile, all sharing the munge key and /etc/slurm volumes, each with its role
# as command and its name as hostname; the Dockerfile's every RUN is a step of
# docker/build-image.sh (the script CI runs on the host) and its entrypoint is the one
# build-image.sh installs.
#
#   docker_compose.sh SOURCE_DIR
set -euo pipefail
src=$1
# Debian's python3 with python3-yaml (tools/setup.sh), whatever python3 is first in PATH.
/usr/bin/python3 - "$src" <<'PY'
import re, subprocess, sys, yaml

src = sys.argv[1]
failures = []
def check(ok, what):
    if not ok:
        failures.append(what)

with open(f"{src}/docker/compose.yaml") as f:
    compose = yaml.safe_load(f)

services = compose.get("services") or {}
check("controller" in services, f"no controller service, services are {sorted(services)}")
ctl = services.get("controller", {})
env = ctl.get("environment") or {}
if isinstance(env, list):
    env = dict(e.split("=", 1) for e in env)
n = int(env.get("SLURM_AI_COMPUTE_NODES", "0"))
computes = sorted((s for s in services if s != "controller"), key=lambda s: (len(s), s))
check(n >= 2, f"controller's SLURM_AI_COMPUTE_NODES is {n}, expected at least 2 computes")
check(computes == [f"c{i}" for i in range(1, n + 1)],
      f"compute services {computes}, expected c1..c{n} as SLURM_AI_COMPUTE_NODES={n} says")

volumes = compose.get("volumes") or {}
for v in ("munge-key", "slurm-etc"):
    check(v in volumes, f"top-level volume {v} is not declared")

def mounts(svc):
    return {m.split(":")[1]: m.split(":")[0] for m in svc.get("volumes", []) if isinstance(m, str)}

for name, svc in services.items():
    role = "controller" if name == "controller" else "compute"
    check(svc.get("command") == [role], f"{name}: command {svc.get('command')}, expected ['{role}']")
    check(svc.get("hostname") == name, f"{name}: hostname {svc.get('hostname')}, expected {name}")
    m = mounts(svc)
    check(m.get("/etc/munge-shared") == "munge-key",
          f"{name}: the munge key volume is not at /etc/munge-shared (mounts: {m})")
    check(m.get("/etc/slurm") == "slurm-etc", f"{name}: slurm-etc is not at /etc/slurm (mounts: {m})")
    b = svc.get("build") or {}
    check(b.get("dockerfile") == "docker/Dockerfile" and b.get("context") == "..",
          f"{name}: build {b}, expected docker/Dockerfile with the source tree as context")
    check(svc.get("image") == ctl.get("image"), f"{name}: image {svc.get('image')} is not the controller's")
    if role == "compute":
        deps = svc.get("depends_on") or []
        check("controller" in deps, f"{name}: does not depend on the controller")
check(mounts(ctl).get("/var/spool/slurmctld") is not None,
      "controller: StateSaveLocation /var/spool/slurmctld is not a volume")

# The Dockerfile: every RUN is build-image.sh with known steps; the entrypoint exists.
steps = set(subprocess.run([f"{src}/docker/build-image.sh", "--list-steps"], check=True,
                           capture_output=True, text=True).stdout.split())
with open(f"{src}/docker/Dockerfile") as f:
    lines = [l.strip() for l in f if l.strip() and not l.lstrip().startswith("#")]
runs = [l[4:] for l in lines if l.startswith("RUN ")]
check(len(runs) >= 3, f"only {len(runs)} RUN lines in docker/Dockerfile")
used = set()
for r in runs:
    first = r.split("&&")[0].split()
    check(first[0].endswith("docker/build-image.sh"), f"RUN '{r}' is not a build-image.sh step")
    used.update(w for w in first[1:] if not w.startswith("-") and not w.startswith("/"))
check(used - steps == set(), f"Dockerfile runs unknown steps {sorted(used - steps)}")
check(steps <= used, f"Dockerfile skips the steps {sorted(steps - used)}")
entry = [l for l in lines if l.startswith("ENTRYPOINT")]
check(entry == ['ENTRYPOINT ["/opt/slurm-ai/entrypoint.sh"]'], f"entrypoint is {entry}")
check(any(re.match(r"COPY tests/inputs/minicluster-node\.xml ", l) for l in lines),
      "the compute nodes' topology (tests/inputs/minicluster-node.xml) is not copied")

if failures:
    print("FAIL: docker/ files:\n  " + "\n  ".join(failures))
    sys.exit(1)
print(f"PASS: controller + {n} computes (c1..c{n}) sharing munge-key and slurm-etc; "
      f"{len(runs)} RUN steps, all build-image.sh ({', '.join(sorted(used))})")
PY
