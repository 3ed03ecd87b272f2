#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs inside the VM (busybox sh), from the folder tools/check.sh copied in.
rc=0
if [ -d kselftest ]; then
	(cd kselftest && ./run.sh) || rc=1
fi
if [ -d libxsched ]; then
	(cd libxsched && ./run.sh) || rc=1
fi
(cd tools && ./run.sh) || rc=1
exit $rc
