// SPDX-License-Identifier: GPL-2.0
/*
 * The sim GPU (/dev/xsched_sim): opening it, device memory, queues,
 * submitting packets and waiting for them.
 */
#include "xsched_util.h"

int xs_sim_open(int *sfd, struct xsched_sim_info *info)
{
	struct xsched_sim_info i;
	int fd, ret;

	*sfd = -1;
	fd = open(XS_SIM_PATH, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	memset(&i, 0, sizeof(i));
	ret = xs_ioctl(fd, XSCHED_IOC_SIM_INFO, &i);
	if (ret < 0) {
		close(fd);
		return ret;
	}
	if (info)
		*info = i;
	*sfd = fd;
	return 0;
}

unsigned int xs_slots(const struct xsched_sim_info *s)
{
	return s->cus * s->waves_per_cu;
}

int xs_mem_alloc(int sfd, uint64_t size, uint64_t *gpu_addr)
{
	struct xsched_sim_mem m = { .size = size };
	int ret = xs_ioctl(sfd, XSCHED_IOC_SIM_MEM_ALLOC, &m);

	if (ret >= 0 && gpu_addr)
		*gpu_addr = m.gpu_addr;
	return ret < 0 ? ret : 0;
}

int xs_buf_alloc(int sfd, uint64_t size, struct xs_buf *b)
{
	void *p;
	int ret;

	memset(b, 0, sizeof(*b));
	ret = xs_mem_alloc(sfd, size, &b->gpu_addr);
	if (ret)
		return ret;
	b->size = size;
	b->map_size = (size + XS_PAGE - 1) & ~(XS_PAGE - 1);
	p = mmap(NULL, b->map_size, PROT_READ | PROT_WRITE, MAP_SHARED, sfd,
		 (off_t)b->gpu_addr);
	if (p == MAP_FAILED)
		return -errno;
	b->map = p;
	memset(b->map, 0xa5, b->map_size);
	return 0;
}

void xs_buf_free(struct xs_buf *b)
{
	if (b->map)
		munmap(b->map, b->map_size);
	b->map = NULL;
}

int xs_queue_create(int sfd, uint32_t ring_size, uint32_t *id,
		    uint64_t *save_area_size)
{
	struct xsched_sim_queue_create c = { .ring_size = ring_size };
	int ret = xs_ioctl(sfd, XSCHED_IOC_SIM_QUEUE_CREATE, &c);

	if (ret < 0)
		return ret;
	if (id)
		*id = c.queue_id;
	if (save_area_size)
		*save_area_size = c.save_area_size;
	return 0;
}

int xs_submit(int sfd, uint32_t id,
	      const struct xsched_sim_packet *pkts, uint32_t count,
	      uint64_t *seq)
{
	struct xsched_sim_submit s = {
		.queue_id = id,
		.count = count,
		.packets = (uintptr_t)pkts,
	};
	int ret = xs_ioctl(sfd, XSCHED_IOC_SIM_SUBMIT, &s);

	if (ret >= 0 && seq)
		*seq = s.seq;
	return ret < 0 ? ret : 0;
}

int xs_wait(int sfd, uint32_t id, uint64_t seq,
	    uint64_t timeout_ns, uint64_t *completed)
{
	struct xsched_sim_wait w = {
		.queue_id = id,
		.seq = seq,
		.timeout_ns = timeout_ns,
		.completed = ~0ULL,
	};
	int ret = xs_ioctl(sfd, XSCHED_IOC_SIM_WAIT, &w);

	if (completed)
		*completed = w.completed;
	return ret < 0 ? ret : 0;
}

int xs_submit_retry(int sfd, uint32_t id,
		    const struct xsched_sim_packet *pkts,
		    uint32_t count, uint64_t *seq,
		    uint64_t patience_ns)
{
	uint64_t end = xs_now_ns() + patience_ns;
	int ret;

	for (;;) {
		ret = xs_submit(sfd, id, pkts, count, seq);
		if (ret != -EAGAIN || xs_now_ns() > end)
			return ret;
		xs_sleep_ns(XS_MS);
	}
}
