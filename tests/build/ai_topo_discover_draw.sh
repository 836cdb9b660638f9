#!/usr/bin/env bash
# ai-topo's two host-dependent subcommands, which golden files cannot pin down:
# `discover --json` describes this host (at least one PU; without an HCA it says so in
# fabric_error rather than failing; without libnvidia-ml or nvidia-smi it says so in
# gpu_fabric_error), reads the GPUs' fabric from nvidia-smi -q -x where NVML does not
# load (a stand-in nvidia-smi on PATH printing a real GB200 tray's capture), and `draw`
# renders real SVG and PNG pictures and the HTML map of a fabric.
set -euo pipefail
tool=$1 data=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$tool" discover --json >"$tmp/discover.json"
python3 - "$tmp/discover.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["node"]["pus"] > 0, d["node"]
assert d["node"]["format"] == "live", d["node"]["format"]
if "fabric_error" in d:
    assert "HCA" in d["fabric_error"] or "InfiniBand" in d["fabric_error"], d["fabric_error"]
else:
    assert d["fabric"]["hosts"] or d["fabric"]["switches"], d["fabric"]
PY

# The GPU fabric, live: no NVML here (CI has no GPU), so nvidia-smi's XML, or an error
# naming both.
mkdir -p "$tmp/bin"
if ! command -v nvidia-smi >/dev/null && ! ldconfig -p | grep -q libnvidia-ml.so.1; then
    python3 - "$tmp/discover.json" <<'PY'
import json, sys
e = json.load(open(sys.argv[1]))["gpu_fabric_error"]
assert "libnvidia-ml.so.1" in e and "nvidia-smi is not on PATH" in e, e
PY
    cat >"$tmp/bin/nvidia-smi" <<SH
#!/bin/sh
[ "\$*" = "-q -x" ] && exec cat "$data/gpu-fabric/nvidia-smi-qx-gb200.xml"
exit 9
SH
    chmod +x "$tmp/bin/nvidia-smi"
    PATH="$tmp/bin:$PATH" "$tool" discover --json >"$tmp/gb200.json"
    python3 - "$tmp/gb200.json" <<'PY'
import json, sys
g = json.load(open(sys.argv[1]))["gpu_fabric"]
assert g["format"] == "nvidia-smi-xml" and g["source"] == "nvidia-smi", g
assert len(g["gpus"]) == 4, g["gpus"]
assert g["nvlink_domain"] == {"cluster_uuid": "00000001-0000-0000-0000-000000000001",
                              "clique_id": 2}, g["nvlink_domain"]
PY
    printf '#!/bin/sh\nexit 9\n' >"$tmp/bin/nvidia-smi"
    PATH="$tmp/bin:$PATH" "$tool" discover --json >"$tmp/fail.json"
    grep -q 'nvidia-smi -q -x failed (exit status 9)' "$tmp/fail.json" ||
        { echo "FAIL: a failing nvidia-smi is not named"; cat "$tmp/fail.json"; exit 1; }
    # Through NVML: a stand-in libnvidia-ml.so.1 (tests/build/fake_nvml.c), first choice
    # where it loads; nvidia-smi is not asked then.
    mkdir -p "$tmp/nvml"
    cc -shared -fPIC -o "$tmp/nvml/libnvidia-ml.so.1" "$(dirname "$0")/fake_nvml.c"
    nvml() { FAKE_NVML=$1 LD_LIBRARY_PATH="$tmp/nvml" PATH="$tmp/bin:$PATH" "$tool" discover --json; }
    nvml gb200 >"$tmp/nvml.json"
    nvml degraded >"$tmp/degraded.json"
    nvml registering >"$tmp/registering.json"
    nvml old >"$tmp/old.json"
    nvml noinit >"$tmp/noinit.json"
    python3 - "$tmp" <<'PY'
import json, sys
d = lambda name: json.load(open(f"{sys.argv[1]}/{name}.json"))
g = d("nvml")["gpu_fabric"]
assert g["format"] == "nvml" and g["driver"] == "580.173.02", g
assert [x["bus_id"] for x in g["gpus"]][1] == "00000009:01:00.0", g["gpus"]
assert g["nvlink_domain"] == {"cluster_uuid": "a1000000-0000-0000-0000-000000000007",
                              "clique_id": 7}, g["nvlink_domain"]
assert all(x["bandwidth"] == "Full" for x in g["gpus"]), g["gpus"]
g = d("degraded")["gpu_fabric"]
assert g["nvlink_domain"] is None and "GPU 3 (00000019:01:00.0)" in g["problem"] \
    and "bandwidth 'Degraded'" in g["problem"], g["problem"]
g = d("registering")["gpu_fabric"]
assert g["gpus"][1]["state"] == "In Progress" and g["gpus"][1]["cluster_uuid"] is None, g["gpus"][1]
assert g["nvlink_domain"] is None and "fabric state 'In Progress'" in g["problem"], g["problem"]
g = d("old")["gpu_fabric"]  # no health: the domain from the R535 call alone
assert g["nvlink_domain"]["clique_id"] == 7 and g["gpus"][0]["bandwidth"] is None, g
# nvmlInit fails: nvidia-smi is asked next (here the stand-in that fails), both named.
e = d("noinit")["gpu_fabric_error"]
assert "nvmlInit: Driver Not Loaded" in e and "exit status 9" in e, e
PY
    fabric_note="GPU fabric through a stand-in NVML (5 trays) and nvidia-smi's XML"
else
    fabric_note="GPU fabric: this host has NVML or nvidia-smi; the stand-in was not used"
fi

"$tool" draw "$data/hwloc/nvidiaDGX2.xml" -o "$tmp/dgx2.svg" >/dev/null
grep -q '<svg' "$tmp/dgx2.svg" || { echo "FAIL: no SVG"; exit 1; }
[ "$(grep -c '>GPU [0-9]*<' "$tmp/dgx2.svg")" -eq 16 ] ||
    { echo "FAIL: the DGX-2 drawing does not show 16 GPUs"; exit 1; }
grep -q '12 NVSwitches' "$tmp/dgx2.svg" || { echo "FAIL: no NVSwitch box"; exit 1; }
"$tool" draw --map "$data/fabric/X5.map" "$data/fabric/X5.topofile" -o "$tmp/x5.png" >/dev/null
[ "$(head -c 8 "$tmp/x5.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
    { echo "FAIL: x5.png is not a PNG"; exit 1; }
# A picture is an output file like any other (file_io.hpp's write_output_file): one that
# replaces a file keeps its mode, one through a symbolic link replaces the file the link
# names and the link stays, nothing is left beside it; and without dot on PATH the error
# names dot and leaves the old picture as it was.
cp "$tmp/dgx2.svg" "$tmp/old.svg" && chmod 0640 "$tmp/old.svg"
ln -s old.svg "$tmp/link.svg"
"$tool" draw "$data/hwloc/nvidiaDGX2.xml" -o "$tmp/link.svg" >/dev/null
[ -L "$tmp/link.svg" ] && [ "$(stat -c %a "$tmp/old.svg")" = 640 ] &&
    cmp -s "$tmp/dgx2.svg" "$tmp/old.svg" ||
    { echo "FAIL: drawing through a link: not the link kept, the mode kept and the picture"; exit 1; }
left=$(find "$tmp" -mindepth 1 -maxdepth 1 -name '*.tmp*' | wc -l)
[ "$left" -eq 0 ] || { echo "FAIL: $left temporary file(s) left beside the picture"; exit 1; }
printf 'keep' >"$tmp/kept.svg"
if PATH=/nonexistent "$tool" draw "$data/hwloc/nvidiaDGX2.xml" -o "$tmp/kept.svg" \
    >/dev/null 2>"$tmp/nodot.err"; then
    echo "FAIL: draw to SVG without dot on PATH succeeded"; exit 1
fi
grep -q "dot program on PATH" "$tmp/nodot.err" && [ "$(cat "$tmp/kept.svg")" = keep ] ||
    { echo "FAIL: without dot: $(cat "$tmp/nodot.err"); kept.svg: $(head -c 20 "$tmp/kept.svg")"; exit 1; }
# A dot that fails half-way (killed, out of memory: a stand-in that writes part of a
# picture where it was told to, then exits 1) leaves the old picture whole.
mkdir -p "$tmp/halfdot"
cat >"$tmp/halfdot/dot" <<'SH'
#!/bin/sh
out=/dev/stdout
while [ $# -gt 0 ]; do [ "$1" = -o ] && out=$2; shift; done
printf '<svg half' >"$out"
exit 1
SH
chmod +x "$tmp/halfdot/dot"
if PATH="$tmp/halfdot:$PATH" "$tool" draw "$data/hwloc/nvidiaDGX2.xml" -o "$tmp/kept.svg" \
    >/dev/null 2>"$tmp/halfdot.err"; then
    echo "FAIL: draw succeeded where dot failed"; exit 1
fi
grep -q "exit status 1" "$tmp/halfdot.err" && [ "$(cat "$tmp/kept.svg")" = keep ] ||
    { echo "FAIL: a failed dot: $(cat "$tmp/halfdot.err"); kept.svg: $(head -c 20 "$tmp/kept.svg")"; exit 1; }
# The HTML map: topograph's NVL72 racks with a DGX-2 node file, every host and GPU drawn,
# the four NVLink domains listed.
"$tool" draw "$data/fabric/topograph/nvl72.yaml" --node "$data/hwloc/nvidiaDGX2.xml" \
    -o "$tmp/nvl72.html" >/dev/null
hosts=$(grep -o 'class="host ' "$tmp/nvl72.html" | wc -l)
gpus=$(grep -o 'class="gpu free"' "$tmp/nvl72.html" | wc -l)
domains=$(grep -o '<li class="domain"' "$tmp/nvl72.html" | wc -l)
[ "$hosts $gpus $domains" = "72 1152 4" ] ||
    { echo "FAIL: the NVL72 map has $hosts hosts, $gpus GPUs, $domains domains"; exit 1; }
echo "PASS: discover describes this host; $fabric_note; draw wrote SVG (16 GPUs, through a link, mode kept), PNG and an HTML map (72 hosts); without dot or with a failing one an error and the old picture whole"
