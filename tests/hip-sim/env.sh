# SPDX-License-Identifier: MIT
# Sourced in the VM: the busybox guest has no C++ runtime or glibc loader of
# its own; the ones the host built against are in lib/, with the stand-ins.
here=$(pwd)
if [ ! -e /lib64/ld-linux-x86-64.so.2 ]; then
	mkdir -p /lib64
	ln -sf "$here/lib/ld-linux-x86-64.so.2" /lib64/ld-linux-x86-64.so.2
fi
export LD_LIBRARY_PATH="$here/lib"
