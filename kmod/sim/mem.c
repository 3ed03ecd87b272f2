// SPDX-License-Identifier: GPL-2.0
/*
 * Sim device memory: a sim fd's GPU address space (struct xsim_vm) and its
 * buffers.  Buffer i lives at device address (i + 1) << 32, which is also
 * its mmap offset; a buffer is published once and lives as long as the vm,
 * so the CUs resolve addresses (xsim_translate()) without a lock.  Memory is
 * bounded for all sim fds together (sim_mem_max_mb) and per user (user.c),
 * and charged to the caller's memory cgroup.
 */
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "sim.h"

/* /dev/xsched_sim is open to every user: bound what they can pin together. */
static unsigned int sim_mem_max_mb = 512;
module_param(sim_mem_max_mb, uint, 0644);
MODULE_PARM_DESC(sim_mem_max_mb, "Sim device memory of all sim fds together, MiB (default 512)");

/* Device addresses: buffer i lives at (i + 1) << 32, which is also its mmap offset. */
#define XSIM_ADDR_SHIFT	32

/* Resolve @len bytes at device address @addr of @vm, or NULL (a GPU fault). */
void *xsim_translate(struct xsim_vm *vm, u64 addr, u64 len)
{
	u64 idx = (addr >> XSIM_ADDR_SHIFT) - 1;
	u64 off = addr & ((1ULL << XSIM_ADDR_SHIFT) - 1);
	void *vaddr;

	if (idx >= XSCHED_SIM_MEM_BUFFERS)
		return NULL;
	/* Buffers are published once and live as long as the vm. */
	vaddr = smp_load_acquire(&vm->bufs[idx].vaddr);
	if (!vaddr || off + len > vm->bufs[idx].size)
		return NULL;
	return vaddr + off;
}

struct xsim_vm *xsim_vm_create(void)
{
	struct xsim_vm *vm = kzalloc(sizeof(*vm), GFP_KERNEL_ACCOUNT);
	struct xsim_user *u;

	if (!vm)
		return ERR_PTR(-ENOMEM);
	u = xsim_user_get(current_euid());
	if (IS_ERR(u)) {
		kfree(vm);
		return ERR_CAST(u);
	}
	vm->user = u;
	kref_init(&vm->ref);
	mutex_init(&vm->lock);
	xsched_obj_inc(XSCHED_OBJ_SIM_VM);
	return vm;
}

void xsim_vm_release(struct kref *ref)
{
	struct xsim_vm *vm = container_of(ref, struct xsim_vm, ref);
	int i;

	for (i = 0; i < XSCHED_SIM_MEM_BUFFERS; i++) {
		if (!vm->bufs[i].vaddr)
			continue;
		vfree(vm->bufs[i].vaddr);
		atomic64_sub(vm->bufs[i].size, &xsim.mem_bytes);
		xsim_user_charge(vm->user, 0, -(s64)vm->bufs[i].size);
		xsched_obj_dec(XSCHED_OBJ_SIM_BUFFER);
	}
	xsim_user_put(vm->user);
	mutex_destroy(&vm->lock);
	kfree(vm);
	xsched_obj_dec(XSCHED_OBJ_SIM_VM);
}

int xsim_mem_alloc(struct xsim_vm *vm, struct xsched_sim_mem *m)
{
	u64 size;
	void *p;
	int i, ret;

	if (m->flags || m->reserved0 || m->reserved[0] || m->reserved[1])
		return -EINVAL;
	if (!m->size || m->size > XSCHED_SIM_MEM_MAX)
		return -EINVAL;
	size = PAGE_ALIGN(m->size);

	mutex_lock(&vm->lock);
	for (i = 0; i < XSCHED_SIM_MEM_BUFFERS; i++)
		if (!vm->bufs[i].vaddr)
			break;
	if (i == XSCHED_SIM_MEM_BUFFERS) {
		mutex_unlock(&vm->lock);
		return -ENOSPC;
	}
	ret = xsim_user_charge(vm->user, 0, size);
	if (ret) {
		mutex_unlock(&vm->lock);
		return ret;
	}
	ret = -ENOMEM;
	if (atomic64_add_return(size, &xsim.mem_bytes) >
	    (s64)READ_ONCE(sim_mem_max_mb) << 20)
		goto err_pool;
	/* Charged to the caller's memory cgroup; xsim_mmap() maps it page by page. */
	p = __vmalloc(size, GFP_KERNEL_ACCOUNT | __GFP_ZERO);
	if (!p)
		goto err_pool;
	xsched_obj_inc(XSCHED_OBJ_SIM_BUFFER);
	vm->bufs[i].size = size;
	/* Pairs with xsim_translate(), which runs without vm->lock. */
	smp_store_release(&vm->bufs[i].vaddr, p);
	mutex_unlock(&vm->lock);
	m->gpu_addr = (u64)(i + 1) << XSIM_ADDR_SHIFT;
	return 0;

err_pool:
	atomic64_sub(size, &xsim.mem_bytes);
	xsim_user_charge(vm->user, 0, -(s64)size);
	mutex_unlock(&vm->lock);
	return ret;
}

int xsim_mmap(struct xsim_vm *vm, struct vm_area_struct *vma)
{
	u64 addr = (u64)vma->vm_pgoff << PAGE_SHIFT;
	u64 len = vma->vm_end - vma->vm_start;
	unsigned long uaddr;
	void *p;
	int ret;

	/* Device memory is shared: a private copy would silently diverge. */
	if (!(vma->vm_flags & VM_SHARED) ||
	    vma->vm_pgoff > (U64_MAX >> PAGE_SHIFT))
		return -EINVAL;
	p = xsim_translate(vm, addr, len);
	if (!p || !PAGE_ALIGNED(p))
		return -EINVAL;
	xsched_vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	/*
	 * Page by page: an accounted __vmalloc() area is not VM_USERMAP, which
	 * remap_vmalloc_range() wants, and vmalloc_user() cannot be accounted.
	 */
	for (uaddr = vma->vm_start; uaddr < vma->vm_end; uaddr += PAGE_SIZE) {
		ret = vm_insert_page(vma, uaddr, vmalloc_to_page(p));
		if (ret)
			return ret;
		p += PAGE_SIZE;
	}
	return 0;
}
