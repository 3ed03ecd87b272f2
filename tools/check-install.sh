#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The installed copy, used as a user would (host): `make -C libxsched install`
# and `make install-tools` into a staging root, then a small program built
# only from what `pkg-config --cflags --libs libxsched` says (shared, and
# static with --static) and run against the installed library, and the man
# pages (libxsched(3), xschedctl(8)) rendered with groff's warnings as errors.
# Prints "install: N passed, N failed" last.
#
# Environment: BUILD (default build/).
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
root=$build/install-root
pass=0
fail=0
ok() { echo "ok $1"; pass=$((pass + 1)); }
bad() { echo "not ok $1"; shift; [ $# -gt 0 ] && echo "# $*"; fail=$((fail + 1)); }

rm -rf "$root"
mkdir -p "$root"
if make -s -C "$top/libxsched" install TOP="$top" PREFIX=/usr DESTDIR="$root" \
	> "$build/install.log" 2>&1 &&
	make -s -C "$top" install-tools PREFIX=/usr DESTDIR="$root" >> "$build/install.log" 2>&1; then
	ok make_install_stages_library_tools_and_man_pages
else
	tail -20 "$build/install.log"
	bad make_install_stages_library_tools_and_man_pages
fi

# pkg-config sees the staging root as the system would see /usr.
export PKG_CONFIG_SYSROOT_DIR=$root PKG_CONFIG_LIBDIR=$root/usr/lib/pkgconfig
cat > "$build/install-user.c" <<'EOF'
#include <stdio.h>
#include <string.h>
#include <xsched-sim.h>
#include <xsched-kfd.h>
#include <linux/xsched_kfd.h>
#include <linux/xsched_sim.h>

int main(void)
{
	/* A library call that needs no module: names of scheduler actions. */
	const char *s = xsched_action_name(XSCHED_ACT_SUSPEND);
	/* The platforms' functions link from the same library. */
	int (*so)(struct xsched_sim **, const char *) = xsched_sim_open;
	int (*ko)(struct xsched_kfd **, int, const char *) = xsched_kfd_open;

	printf("%s %d %d\n", s, XSCHED_API_VERSION, so != NULL && ko != NULL);
	return strcmp(s, "suspend") != 0;
}
EOF
if flags=$(pkg-config --cflags --libs libxsched) &&
	cc -std=c11 -Wall -Wextra -Werror "$build/install-user.c" -o "$build/install-user" $flags &&
	out=$(LD_LIBRARY_PATH=$root/usr/lib "$build/install-user") && [ "$out" = "suspend 1 1" ] &&
	libs=$(LD_LIBRARY_PATH=$root/usr/lib ldd "$build/install-user") &&
	grep -q "=> $root/usr/lib/libxsched.so.0 " <<< "$libs"; then
	ok program_builds_with_pkg_config_and_runs
else
	echo "# flags: ${flags:-none}; output: ${out:-none}"
	bad program_builds_with_pkg_config_and_runs
fi
if flags=$(pkg-config --static --cflags --libs libxsched) &&
	cc -std=c11 -static "$build/install-user.c" -o "$build/install-user-static" $flags &&
	[ "$("$build/install-user-static")" = "suspend 1 1" ]; then
	ok program_links_statically_with_pkg_config
else
	echo "# flags: ${flags:-none}"
	bad program_links_statically_with_pkg_config
fi
# The core header alone declares no platform's functions (libdrm's split).
printf '#include <xsched.h>\nint main(void) { return xsched_sim_open(0, 0); }\n' > "$build/install-core.c"
printf '#include <xsched.h>\nint main(void) { return xsched_kfd_open(0, -1, 0); }\n' > "$build/install-core-kfd.c"
if flags=$(pkg-config --cflags libxsched) &&
	cc -std=c11 -Werror -fsyntax-only "$build/install-user.c" $flags &&
	! cc -std=c11 -Werror -fsyntax-only "$build/install-core.c" $flags 2>/dev/null &&
	! cc -std=c11 -Werror -fsyntax-only "$build/install-core-kfd.c" $flags 2>/dev/null; then
	ok core_header_has_no_platform_functions
else
	bad core_header_has_no_platform_functions
fi
for page in man3/libxsched.3 man8/xschedctl.8; do
	f=$root/usr/share/man/$page
	if [ -f "$f" ] && warn=$(groff -man -ww -z "$f" 2>&1) && [ -z "$warn" ]; then
		ok "man_page_${page#*/}_renders"
	else
		bad "man_page_${page#*/}_renders" "${warn:-missing: $f}"
	fi
done
[ -x "$root/usr/sbin/xschedctl" ] && ok xschedctl_installed || bad xschedctl_installed
echo "install: $pass passed, $fail failed"
[ "$fail" = 0 ]
