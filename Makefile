# SPDX-License-Identifier: GPL-2.0
#
# make module     build kmod/xsched_kfd.ko and the sim GPU for tests, kmod/sim/xsched_sim.ko
#                 (KDIR= headers, default: Debian 6.12 from the cache)
# make check      every test suite: host unit tests, kselftests in a QEMU VM; ends "N passed, N failed";
#                 the VM suites on Debian's 6.12 and again on sid's 7.2 (the kernels group)
# make check-kernels  the kernel matrix: the module built (and through sparse) against
#                 Debian's 6.1, 6.12, 7.2 and 7.3 with their in-tree amdkfd, and the VM
#                 suites on each (Documentation/kfd-backend.rst, "Kernels")
# make demo       urgent vs batch queue on the sim GPU in a VM, latency table per level,
#                 a latency CDF plot and a timeline of one urgent request (build/demo/),
#                 and one run through the HIP path (tests/hip-sim programs, libxsched preloaded)
# make bench      libxsched benchmark in a VM, then the fused-kernel case through the
#                 HIP path (tests/hip-sim: hipcc programs on the test-only stand-in runtime)
# make check-hip-real  the HIP interposer against all four of Debian's ROCm stacks
#                 (5.2.3, 5.7.1, 6.4.3, 7.2.4: host checks and a VM each; make check
#                 runs 6.4.3 only; about 3 minutes once fetched, the first run
#                 downloads 3.4 GB and unpacks 22 GB under .cache/rocm; Documentation/hip.rst)
# make check-debug  the sim suites on a KASAN/lockdep/kmemleak kernel built from the
#                 Debian source (cached; the first build takes about 30 min on 2 cores)
# make lint       checkpatch and sparse on the module, the documents parsed, the layout
#                 and the paths the documents name (Documentation/layout.rst)
# make mutate     each deliberate fault of tools/mutate/faults, alone, must fail its suites
#                 (FAULTS="name ..." for a subset; Documentation/testing.rst)
# make install    install the module into the running kernel's tree (KDIR= its headers)
# make install-tools  xschedctl and xschedctl(8) under PREFIX (libxsched: make -C libxsched install)
#
# Everything runs as root on Debian 12; missing packages are installed with apt.

TOP := $(CURDIR)
CACHE ?= $(TOP)/.cache/kernel
BUILD ?= $(TOP)/build

ifeq ($(KDIR),)
# Debian's newest 6.12: the kernel the VM boots, unpacked by tools/fetch-kernel.sh.
KREL = $(shell cat $(CACHE)/krel 2>/dev/null)
KROOT = $(CACHE)/$(KREL)
KDIR_USED = $(KROOT)/usr/src/linux-headers-$(KREL)
KSRC = $(KROOT)/usr/src/linux-source-6.12
KERNEL_DEP = kernel
# The kfd backend, against the KFD sources of the very kernel the VM boots.
KFD_SRC ?= $(KSRC)
else
KDIR_USED = $(KDIR)
KERNEL_DEP =
endif

QEMU_RUN = $(TOP)/tools/qemu-run.sh --cache $(CACHE) --krel $(KREL)
MODULE = kmod/xsched_kfd.ko
# The sim GPU, a test device loaded after it (and unloaded before it).
SIM_MODULE = kmod/sim/xsched_sim.ko
USER_CFLAGS = -std=c11 -Wall -Wextra -Werror -O2 -I$(TOP)/include/uapi

.PHONY: all deps kernel module tools hip-vm check check-kernels check-hip-real check-debug demo bench lint mutate install install-tools clean

all: module

deps:
	@$(TOP)/tools/install-deps.sh

kernel: deps
	@mkdir -p $(CACHE)
	@$(TOP)/tools/fetch-kernel.sh $(CACHE) > $(CACHE)/krel.tmp && \
		mv $(CACHE)/krel.tmp $(CACHE)/krel

module: $(KERNEL_DEP)
	$(MAKE) -C $(KDIR_USED) M=$(TOP) $(if $(KFD_SRC),KFD_SRC=$(KFD_SRC)) modules

# The tools, and the helpers of their VM tests (tests/tools/: a load, a JSON
# checker, a pseudo-terminal that reads the screen).
TOOLS = $(BUILD)/tools/xsched-demo $(BUILD)/tools/xsched-once $(BUILD)/tools/xschedctl \
	$(BUILD)/tools/xsched-load $(BUILD)/tools/jsonflat $(BUILD)/tools/ptyscreen \
	$(BUILD)/tools/xsched-stuck

XSCHEDCTL_SRC = $(wildcard tools/xschedctl/*.c)

# Static: they run in the VM's busybox userland too.
$(BUILD)/tools/xschedctl: $(XSCHEDCTL_SRC) tools/xschedctl/xschedctl.h include/uapi/linux/xsched_kfd.h \
		include/uapi/linux/xsched_sim.h
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -static -pthread $(XSCHEDCTL_SRC) -o $@

$(BUILD)/tools/%: tools/*/%.c include/uapi/linux/xsched_kfd.h include/uapi/linux/xsched_sim.h
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -static -pthread $< -o $@

$(BUILD)/tools/%: tests/tools/%.c include/uapi/linux/xsched_kfd.h include/uapi/linux/xsched_sim.h
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -static -pthread $< -o $@

tools: $(TOOLS)

check: module tools
	@KREL=$(KREL) CACHE=$(CACHE) BUILD=$(BUILD) KSRC=$(KSRC) KDIR=$(KDIR_USED) \
		KFD_SRC=$(KFD_SRC) DEBUG_KDIR=$(DEBUG_KDIR) $(TOP)/tools/check.sh

# The kernels group of check.sh over every Debian kernel the module supports.
check-kernels: module tools
	@KREL=$(KREL) CACHE=$(CACHE) BUILD=$(BUILD) KSRC=$(KSRC) KDIR=$(KDIR_USED) \
		KFD_SRC=$(KFD_SRC) CHECK_SUITES=kernels CHECK_KERNELS="6.1 6.12 7.2 7.3" \
		$(TOP)/tools/check.sh

# Every ROCm userspace stack Debian ships, through the hip-real group of check.sh.
check-hip-real: $(KERNEL_DEP)
	@KREL=$(KREL) CACHE=$(CACHE) BUILD=$(BUILD) KSRC=$(KSRC) KDIR=$(KDIR_USED) \
		CHECK_SUITES=hip-real HIP_REAL_SUITES="bookworm trixie sid experimental" \
		$(TOP)/tools/check.sh

# The debug kernel and the module built for it (sim backend only) run the sim
# suites; the same closing line as `make check`.
# The debug kernel's build folder (make check's debug group uses it too).
DEBUG_KDIR ?= $(CACHE)/debug
check-debug: kernel tools
	@$(TOP)/tools/debug-kernel.sh $(KSRC) $(DEBUG_KDIR) > /dev/null
	@ko=$$($(TOP)/tools/build-module.sh $(BUILD)/debug-module $(DEBUG_KDIR)) && \
	KREL=$(KREL) CACHE=$(CACHE) BUILD=$(BUILD)/debug KSRC=$(KSRC) KDIR=$(DEBUG_KDIR) KFD_SRC= \
		MODULE=$$ko QEMU_KERNEL=$(DEBUG_KDIR)/arch/x86/boot/bzImage TOOLS=$(BUILD)/tools \
		CHECK_SUITES="vm gate" VM_TIMEOUT=5400 $(TOP)/tools/check.sh

# Figures are taken VM_SETTLE seconds after boot: for about its first 40 s the
# TCG guest runs slow (measured: SAVE suspends of 5-8 ms and an urgent kernel
# several times slower than in the same VM a minute later).
VM_SETTLE ?= 45

# The tables, then a latency CDF plot and a timeline of one urgent request
# under $(BUILD)/demo (tools/demo/run-demo.sh names them at the end).
demo: module $(BUILD)/tools/xsched-demo $(BUILD)/tools/xsched-once $(BUILD)/tools/xschedctl hip-vm
	@CACHE=$(CACHE) KREL=$(KREL) $(TOP)/tools/demo/run-demo.sh $(BUILD)/demo $(BUILD)/tools \
		$(MODULE) '$(DEMO_ARGS)' $(VM_SETTLE) $(HIP_VM)

# The HIP programs and the stand-in runtime they run on in the VM (tests/hip-sim);
# libxsched.so for their preloaded runs.
HIP_VM = $(BUILD)/hip/vm
hip-vm:
	$(MAKE) -C libxsched all TOP=$(TOP)
	$(MAKE) -C tests/hip-sim vm TOP=$(TOP) BUILD=$(BUILD) OUT=$(HIP_VM) \
		XSCHED_SO=$(TOP)/build/libxsched/libxsched.so.0

bench: module hip-vm
	$(MAKE) -C libxsched bench TOP=$(TOP)
	$(QEMU_RUN) --append idle=poll --module $(MODULE) --module $(SIM_MODULE) --copy $(BUILD)/libxsched/bench \
		--copy $(HIP_VM) --rmmod \
		-- 'sleep $(VM_SETTLE); (cd bench && ./run-bench.sh) && cd vm && ./run-bench.sh'

# Every fault's copy runs `make check` against the same kernel cache.
mutate: $(KERNEL_DEP)
	@CACHE=$(CACHE) BUILD=$(BUILD) FAULTS="$(FAULTS)" $(TOP)/tools/mutate/mutate.sh

lint: $(KERNEL_DEP)
	@KREL=$(KREL) KSRC=$(KSRC) KDIR=$(KDIR_USED) KFD_SRC=$(KFD_SRC) $(TOP)/tools/lint.sh

install: module
	$(MAKE) -C $(KDIR_USED) M=$(TOP) modules_install
	depmod -a

# xschedctl and its man page (libxsched: make -C libxsched install).
PREFIX ?= /usr/local
install-tools: $(BUILD)/tools/xschedctl
	install -d $(DESTDIR)$(PREFIX)/sbin $(DESTDIR)$(PREFIX)/share/man/man8
	install -m 0755 $(BUILD)/tools/xschedctl $(DESTDIR)$(PREFIX)/sbin/
	install -m 0644 Documentation/man/xschedctl.8 $(DESTDIR)$(PREFIX)/share/man/man8/

clean:
	-$(MAKE) -C $(KDIR_USED) M=$(TOP) clean 2>/dev/null
	-$(MAKE) -C libxsched clean TOP=$(TOP) 2>/dev/null
	rm -rf $(BUILD)
