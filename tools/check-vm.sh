#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs inside the VM (busybox sh), from the folder tools/check.sh copied in.
# Each suite prints its own "<suite>: N passed, N failed" line, which is what
# counts (each runner also checks the kernel log and the module's live objects
# with vm-gate); this script exits 0 so that a non-zero VM status means the
# boot, the module load, the final unload (a leaked reference) or the final
# kernel-log scan failed.  KSFT, if set, names the kselftest programs to run.
for suite in kselftest libxsched tools hip; do
	[ -x "$suite/run.sh" ] || continue
	if [ "$suite" = kselftest ] && [ -n "${KSFT:-}" ]; then
		# shellcheck disable=SC2086
		(cd "$suite" && ./run.sh $KSFT)
	else
		(cd "$suite" && ./run.sh)
	fi
done
exit 0
