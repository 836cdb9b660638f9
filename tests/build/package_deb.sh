#!/usr/bin/env bash
# The Debian package and the install rules: cpack makes a .deb named for the Slurm it was
# built for, depending on exactly the installed version of the package holding Slurm's
# plugins (Debian's slurm-wlm-basic-plugins or SchedMD's slurm-smd, which the packages of
# slurmctld, slurmd and srun pin too); it holds both plugins in Slurm's
# PluginDir with all their entry points (and the as-cons-tres build in a directory of its
# own, as select/cons_tres with id 109), the tools, their man pages and the example
# configuration; apt would install it here, and refuses it once the Depends names another
# Slurm. `DESTDIR=... cmake --install` stages the same layout, and
# -DSLURM_AI_PLUGIN_INSTALL_DIR moves the plugins (a relative value is refused).
#
#   package_deb.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1 build=$2
tmp=$(mktemp -d /tmp/slurm-ai-package.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cache() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"; }

plugin_dir=$(cache SLURM_AI_PLUGIN_INSTALL_DIR)
alias_dir=$(cache SLURM_AI_AS_CONS_TRES_INSTALL_DIR)
[ -f "$plugin_dir/select_cons_tres.so" ] ||
    fail "SLURM_AI_PLUGIN_INSTALL_DIR=$plugin_dir is not Slurm's PluginDir (no select_cons_tres.so)"
slurm_pkg=$(cache SLURM_AI_SLURM_DEB_PACKAGE)
[ -n "$slurm_pkg" ] || fail "no SLURM_AI_SLURM_DEB_PACKAGE in $build/CMakeCache.txt"
slurm_deb=$(dpkg-query -W -f='${Version}' "$slurm_pkg")
upstream=${slurm_deb%%-*}

(cd "$build" && cpack -G DEB -B "$tmp/cpack" >"$tmp/cpack.log" 2>&1) ||
    { cat "$tmp/cpack.log"; fail "cpack failed"; }
debs=("$tmp"/cpack/slurm-ai_*.deb)
deb=${debs[0]}
[ -f "$deb" ] || fail "cpack made no slurm-ai_*.deb"
case $(basename "$deb") in
    slurm-ai_*-1+slurm${upstream}_amd64.deb) ;;
    *) fail "package name $(basename "$deb") does not name Slurm $upstream" ;;
esac
depends=$(dpkg-deb -f "$deb" Depends)
case ", $depends," in
    *", $slurm_pkg (= $slurm_deb),"*) ;;
    *) fail "Depends does not pin $slurm_pkg (= $slurm_deb): $depends" ;;
esac
# The packages of the installed daemons and clients, whoever made them.
for bin in slurmctld slurmd srun; do
    p=$(dpkg -S "$(readlink -f "$(command -v "$bin")")" | cut -d: -f1)
    dpkg-query -W -f='${Depends}' "$p" | grep -q "$slurm_pkg (= $slurm_deb)" ||
        fail "$p (holding $bin) does not pin $slurm_pkg (= $slurm_deb), so pinning it would not pin $p"
done

dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|' >"$tmp/contents"
want=("$plugin_dir/select_ai_cons_tres.so" "$plugin_dir/spank_ai.so" "$alias_dir/select_cons_tres.so")
for t in ai-topo ai-place ai-explain ai-fit ai-sim ai-bench-placement ai-resize ai-elasticd ai-recover \
    ai-metrics ai-minicluster; do
    want+=("/usr/bin/$t" "/usr/share/man/man1/$t.1")
done
for f in ai-suite.conf ai_select.conf gres.conf topology.conf plugstack.conf.d/ai.conf; do
    want+=("/usr/share/slurm-ai/slurm.conf.d/$f")
done
want+=(/usr/share/doc/slurm-ai/admin-guide.md /usr/share/doc/slurm-ai/user-guide.md)
want+=(/usr/lib/systemd/system/ai-elasticd.service /usr/lib/systemd/system/ai-recover.service)
want+=(/usr/lib/systemd/system/ai-metrics.service /usr/share/slurm-ai/grafana/slurm-ai.json)
for f in "${want[@]}"; do
    grep -qx "$f" "$tmp/contents" || fail "the package lacks $f"
done

# The packaged (stripped) plugins still export every entry point Slurm looks up.
dpkg-deb -x "$deb" "$tmp/x"
"$(dirname "$0")/check_select_plugins.sh" "$upstream" "$tmp/x$plugin_dir/select_ai_cons_tres.so" \
    "$tmp/x$alias_dir/select_cons_tres.so" >"$tmp/identity.log" ||
    fail "packaged select plugins: $(cat "$tmp/identity.log")"
nm -D --defined-only "$tmp/x$plugin_dir/spank_ai.so" | grep -q ' slurm_spank_init$' ||
    fail "packaged spank_ai.so does not export slurm_spank_init"

# apt resolves the Depends against this host (simulation only), and refuses the same
# package once it names another Slurm release.
apt-get install -s "$deb" >"$tmp/apt.log" 2>&1 || { cat "$tmp/apt.log"; fail "apt would not install $deb"; }
dpkg-deb -R "$deb" "$tmp/other"
sed -i "s/$slurm_pkg (= [^)]*)/$slurm_pkg (= ${upstream}-0other)/" \
    "$tmp/other/DEBIAN/control"
dpkg-deb -b "$tmp/other" "$tmp/other.deb" >/dev/null
if apt-get install -s "$tmp/other.deb" >"$tmp/apt-other.log" 2>&1; then
    fail "apt would install a slurm-ai built for Slurm ${upstream}-0other on $slurm_deb"
fi
grep -q "$slurm_pkg (= ${upstream}-0other)" "$tmp/apt-other.log" ||
    { cat "$tmp/apt-other.log"; fail "apt refused the mismatched package for another reason"; }

# cmake --install with DESTDIR: plugins at the PluginDir, tools under the prefix.
prefix=$(cache CMAKE_INSTALL_PREFIX)
DESTDIR=$tmp/stage cmake --install "$build" >"$tmp/install.log" 2>&1 ||
    { cat "$tmp/install.log"; fail "cmake --install failed"; }
for f in "$plugin_dir/select_ai_cons_tres.so" "$prefix/bin/ai-topo" "$prefix/share/man/man1/ai-topo.1"; do
    [ -f "$tmp/stage$f" ] || fail "DESTDIR install lacks $f"
done

# The PluginDir is overridable, and must be absolute.
cmake -S "$src" -B "$tmp/b1" -DSLURM_AI_BUILD_TESTS=OFF \
    -DSLURM_AI_PLUGIN_INSTALL_DIR=/opt/slurm/plugins >"$tmp/b1.log" 2>&1 ||
    { tail -n 20 "$tmp/b1.log"; fail "configure with -DSLURM_AI_PLUGIN_INSTALL_DIR failed"; }
grep -q '"/opt/slurm/plugins" TYPE MODULE' "$tmp/b1/src/select_ai/cmake_install.cmake" ||
    fail "-DSLURM_AI_PLUGIN_INSTALL_DIR=/opt/slurm/plugins is not where the select plugin installs"
grep -q '"/opt/slurm/slurm-ai/as-cons-tres" TYPE MODULE' "$tmp/b1/src/select_ai/cmake_install.cmake" ||
    fail "with -DSLURM_AI_PLUGIN_INSTALL_DIR=/opt/slurm/plugins the as-cons-tres build does not install into /opt/slurm/slurm-ai/as-cons-tres"
if cmake -S "$src" -B "$tmp/b2" -DSLURM_AI_BUILD_TESTS=OFF \
        -DSLURM_AI_PLUGIN_INSTALL_DIR=lib/slurm >"$tmp/b2.log" 2>&1; then
    fail "a relative SLURM_AI_PLUGIN_INSTALL_DIR was accepted"
fi
grep -q "SLURM_AI_PLUGIN_INSTALL_DIR='lib/slurm': expected an absolute path" "$tmp/b2.log" ||
    { tail -n 20 "$tmp/b2.log"; fail "no clear message for a relative SLURM_AI_PLUGIN_INSTALL_DIR"; }

echo "PASS: $(basename "$deb"): Depends $slurm_pkg (= $slurm_deb); plugins in $plugin_dir and $alias_dir; $(wc -l <"$tmp/contents") paths"
