#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs inside the VM (busybox sh), from the folder tools/check.sh copied in.
# Each suite prints its own "<suite>: N passed, N failed" line, which is what
# counts; this script exits 0 so that a non-zero VM status means the boot, the
# module load or the final module unload (a leaked reference) failed.
for suite in kselftest libxsched tools; do
	if [ -x "$suite/run.sh" ]; then
		(cd "$suite" && ./run.sh)
	fi
done
exit 0
