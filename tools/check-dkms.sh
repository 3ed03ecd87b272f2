#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The DKMS package, tested: Debian's dkms adds, builds and installs xsched_kfd
# from a copy of this tree (dkms.conf as shipped) against the kernel the VM
# boots, with the headers from the cache.  dkms works in trees of its own
# under $BUILD/dkms (--dkmstree, --sourcetree, --installtree), so nothing on
# the host changes; its depmod (which would read the host's /lib/modules) is
# replaced by `depmod -b` on the install tree.  The VM then gets that
# /lib/modules/KREL and, with no module loaded by qemu-run:
#   - xschedctl says the module is not loaded (exit 3);
#   - `modprobe xsched_sim` loads the DKMS-installed xsched_sim.ko and, by its
#     dependency, xsched_kfd.ko (whose srcversion must be the DKMS build's);
#   - the uapi kselftest programs run against them (a short suite);
#   - both unload.
# Prints "dkms: N passed, N failed" last.
#
# Environment (as tools/check.sh has it): KREL CACHE BUILD KDIR KSRC;
# TOOLS (default $BUILD/tools: xschedctl).
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
: "${KREL:?}" "${CACHE:?}" "${BUILD:?}" "${KDIR:?}" "${KSRC:?}"
tools=${TOOLS:-$BUILD/tools}
out=$BUILD/dkms
name=xsched_kfd
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$top/dkms.conf")
pass=0
fail=0
ok() { echo "ok $1"; pass=$((pass + 1)); }
bad() { echo "not ok $1"; shift; [ $# -gt 0 ] && echo "# $*"; fail=$((fail + 1)); }
finish() { echo "dkms: $pass passed, $fail failed"; exit $((fail > 0)); }

command -v dkms > /dev/null || { bad dkms_installed "no dkms (tools/install-deps.sh)"; finish; }
rm -rf "$out"
src=$out/src/$name-$ver
root=$out/root
mods=$root/lib/modules
mkdir -p "$src/kmod/sim" "$out/tree" "$mods/$KREL"
# The package's files, as a release tarball would ship them.
cp "$top/dkms.conf" "$top/Kbuild" "$src/"
cp -r "$top/include" "$src/"
cp "$top"/kmod/*.[ch] "$top"/kmod/Kbuild "$top"/kmod/*.sh "$src/kmod/"
cp "$top"/kmod/sim/*.[ch] "$top"/kmod/sim/Kbuild "$src/kmod/sim/"
rm -f "$src/kmod/$name.mod.c" "$src/kmod/sim/xsched_sim.mod.c"
dkms=(dkms --dkmstree "$out/tree" --sourcetree "$out/src" --installtree "$mods")

if "${dkms[@]}" add -m "$name" -v "$ver" > "$out/add.log" 2>&1 &&
	"${dkms[@]}" build -m "$name" -v "$ver" -k "$KREL" --kernelsourcedir "$KDIR" \
		> "$out/build.log" 2>&1; then
	ok dkms_builds_against_vm_kernel_headers
else
	cat "$out"/add.log "$out"/build.log "$out"/tree/$name/$ver/build/make.log 2>/dev/null | tail -30
	bad dkms_builds_against_vm_kernel_headers "see $out"
	finish
fi
# The kernel's own modules.* lists, so that depmod sees a whole tree.
cp "$CACHE/$KREL/lib/modules/$KREL"/modules.{builtin,builtin.modinfo,order} "$mods/$KREL/" 2>/dev/null
if "${dkms[@]}" install -m "$name" -v "$ver" -k "$KREL" --kernelsourcedir "$KDIR" \
	--no-depmod > "$out/install.log" 2>&1 &&
	depmod -b "$root" "$KREL" > "$out/depmod.log" 2>&1 &&
	ko=$mods/$KREL/updates/dkms/$name.ko && [ -f "$ko" ] &&
	grep -q "^updates/dkms/$name.ko:" "$mods/$KREL/modules.dep" &&
	grep -q "^updates/dkms/xsched_sim.ko: updates/dkms/$name.ko" "$mods/$KREL/modules.dep" &&
	"${dkms[@]}" status -m "$name" -v "$ver" -k "$KREL" | grep -q ': installed'; then
	ok dkms_installs_and_depmod_finds_it
else
	cat "$out"/install.log "$out"/depmod.log 2>/dev/null | tail -20
	"${dkms[@]}" status
	bad dkms_installs_and_depmod_finds_it "see $out"
	finish
fi
srcversion=$(modinfo -F srcversion "$ko")

# The short suite: the uapi kselftest programs (uapi and uapi_*, as tests.list
# names them), against the DKMS-built module.
ksft=$out/kselftest
if ! make -s -C "$top/tests/kselftest/xsched" TOP="$top" KREL="$KREL" \
	KSFT_DIR="$KSRC/tools/testing/selftests" OUT="$ksft" > "$out/kselftest-build.log" 2>&1; then
	tail -20 "$out/kselftest-build.log"
	bad dkms_vm "the kselftests did not build"
	finish
fi
uapi=$(grep -E '^uapi(_[a-z_]+)?$' "$ksft/tests.list" | tr '\n' ' ')
mkdir -p "$out/vm"
cp -r "$mods" "$out/vm/modules"
cp "$tools/xschedctl" "$out/vm/"
cp -r "$ksft" "$out/vm/kselftest"
cat > "$out/vm/run.sh" <<EOF
#!/bin/sh
# In the VM: nothing loaded yet.
./xschedctl list > list.out 2>&1
rc=\$?
if [ \$rc -eq 3 ] && grep -q 'module is not loaded' list.out; then
	echo "ok xschedctl_without_module_says_not_loaded"
else
	echo "not ok xschedctl_without_module_says_not_loaded"; echo "# exit \$rc:"; cat list.out
fi
mkdir -p /lib/modules
cp -r modules/$KREL /lib/modules/
# The sim (for the tests) depends on the core: modprobe loads both.
if modprobe xsched_sim && [ "\$(cat /sys/module/$name/srcversion)" = "$srcversion" ]; then
	echo "ok modprobe_loads_the_dkms_module"
else
	echo "not ok modprobe_loads_the_dkms_module"; lsmod
	exit 0
fi
(cd kselftest && SUITE=dkms-uapi ./run.sh $uapi)
if rmmod xsched_sim && rmmod $name; then
	echo "ok dkms_module_unloads"
else
	echo "not ok dkms_module_unloads"
fi
EOF
chmod +x "$out/vm/run.sh"
"$top/tools/qemu-run.sh" --cache "$CACHE" --krel "$KREL" --copy "$out/vm" --timeout 600 \
	-- 'cd vm && ./run.sh' > "$out/vm.log" 2>&1
rc=$?
cat "$out/vm.log"
for t in xschedctl_without_module_says_not_loaded modprobe_loads_the_dkms_module \
	dkms_module_unloads; do
	if grep -q "^ok $t$" "$out/vm.log"; then
		pass=$((pass + 1))
	else
		bad "$t" "(see $out/vm.log)"
	fi
done
if grep -qE '^dkms-uapi: [0-9]+ passed, 0 failed' "$out/vm.log"; then
	ok dkms_module_passes_uapi_kselftest
else
	bad dkms_module_passes_uapi_kselftest "(see $out/vm.log)"
fi
[ "$rc" = 0 ] || bad dkms_vm "the VM exited $rc: boot or kernel splat (see $out/vm.log)"
finish
