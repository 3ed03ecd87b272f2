/* SPDX-License-Identifier: MIT */
/* The SM partition (cuda/split.c). */
#ifndef XSCHED_CUDA_SPLIT_H
#define XSCHED_CUDA_SPLIT_H

#include <cuda.h>
#include <stdbool.h>

/* XSCHED_CUDA_SM_SPLIT read (after xc_driver_init()): the urgent group's SMs asked for (0: no partition). */
unsigned int xc_split_init(void);
/* Around a fork (cuda/hooks.c's one registration): the partitions' lock. */
void xc_split_fork_prepare(void);
void xc_split_fork_parent(void);
void xc_split_fork_child(void);
/* A stream created on its partition: true with the driver's answer in
 * *@res; false: no partition, create it as asked. */
bool xc_split_stream_create(CUstream *ph, unsigned int flags, int prio, CUresult *res);

#endif
