/* SPDX-License-Identifier: MIT */
/*
 * A fake HSA runtime for hip/hsaq.c's tests (never installed):
 * libhsa-runtime64.so.1 with ROCr's version node, whose hsa_queue_create hands
 * out queues with rings from a small pool (a destroyed queue's ring is the next
 * one handed out, as a runtime reusing freed memory would) and whose write
 * index moves only by fake_hsa_dispatch(), the stand-in for a runtime writing
 * packets.
 */
#ifndef XSCHED_FAKE_HSA_H
#define XSCHED_FAKE_HSA_H

#include <stdint.h>
#include <hsa/hsa.h>

/* Write @n packets into @q (its write index moves by @n). */
void fake_hsa_dispatch(hsa_queue_t *q, uint64_t n);
/* Queues created and not destroyed. */
unsigned int fake_hsa_live(void);

#endif
