/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel interfaces that differ between the kernels the module is built for
 * (Debian's 6.1, 6.12, 7.2, 7.3), chosen by the compile tests of
 * kmod/conftest.sh (their results come in with -include .conftest.h), never
 * by version numbers.
 */
#ifndef XSCHED_COMPAT_H
#define XSCHED_COMPAT_H

#include <linux/hrtimer.h>
#include <linux/mm.h>

/* hrtimer_init() and a ->function assignment before 6.13 (6.1, 6.12). */
static inline void xsched_hrtimer_setup(struct hrtimer *t,
					enum hrtimer_restart (*fn)(struct hrtimer *),
					clockid_t clock, enum hrtimer_mode mode)
{
#ifdef XSCHED_HAVE_HRTIMER_SETUP
	hrtimer_setup(t, fn, clock, mode);
#else
	hrtimer_init(t, clock, mode);
	t->function = fn;
#endif
}

/* vma->vm_flags was written directly before 6.3 (6.1). */
static inline void xsched_vm_flags_set(struct vm_area_struct *vma,
				       vm_flags_t flags)
{
#ifdef XSCHED_HAVE_VM_FLAGS_SET
	vm_flags_set(vma, flags);
#else
	vma->vm_flags |= flags;
#endif
}

#endif /* XSCHED_COMPAT_H */
