// SPDX-License-Identifier: MIT
/*
 * The urgent streams' variables: see cuda/env.h.
 */
#include <stdlib.h>
#include <string.h>

#include "../../internal.h"
#include "../mode.h"
#include "code.h"
#include "driver.h"
#include "env.h"

/* The urgent context asked for (XSCHED_CUDA_LV3=1), and this libcuda
 * has what it needs. */
static bool lv3_wanted(bool split)
{
	const char *s = getenv("XSCHED_CUDA_LV3");

	/* Off unless asked for: the context's memory and the translation are
	 * costs a program without a long-kernel batch job should not pay
	 * (Documentation/cuda.rst, "When each mechanism is worth it"). */
	if (s && *s && strcmp(s, "0") && strcmp(s, "1"))
		xs_err("cuda: XSCHED_CUDA_LV3='%s' is not 0 or 1; using 0 (urgent context off)", s);
	if (!s || strcmp(s, "1"))
		return false;
	if (split) {
		xs_info("cuda: XSCHED_CUDA_SM_SPLIT is set: no urgent context (the two are alternatives)");
		return false;
	}
	if (!(xc_drv.ctx_create_v4 || xc_drv.ctx_create_v2) || !xc_drv.ctx_push || !xc_drv.ctx_pop ||
	    !xc_drv.ctx_get_device || !xc_drv.ctx_get_current || !xc_drv.ctx_sync || !xc_drv.prio_range ||
	    !xc_drv.stream_create || !xc_drv.stream_destroy || !xc_drv.stream_get_ctx ||
	    !xc_drv.stream_get_priority || !xc_drv.stream_wait_event || !xc_drv.stream_is_capturing ||
	    !xc_drv.event_create || !xc_drv.event_destroy || !xc_drv.event_record ||
	    !xu_code_init()) {
		xs_warn("cuda: this libcuda lacks what the urgent context needs (cuFuncGetName and cuKernelGetName: CUDA 12.4+); Lv3 off");
		return false;
	}
	return true;
}

void xu_env_read(struct xu_env *env, bool split)
{
	const char *s;
	int v;

	env->lv3 = lv3_wanted(split);
	env->forced_mode = -1;
	if (env->lv3) {
		s = getenv("XSCHED_CUDA_LV3_MODE");
		env->forced_mode = xm_parse(s);
		if (env->forced_mode == -2) {
			xs_err("cuda: XSCHED_CUDA_LV3_MODE='%s' is not auto, native, ctx, gather or lv1; using auto", s);
			env->forced_mode = -1;
		}
	}
	s = getenv("XSCHED_CUDA_LV3_PRICE");
	v = xm_parse_price(s);
	if (v < 0) {
		xs_err("cuda: XSCHED_CUDA_LV3_PRICE='%s' is not a number from 0 to 100; using 2", s);
		v = XM_PRICE_DEFAULT;
	}
	env->price = (uint32_t)v;
	s = getenv("XSCHED_CUDA_BURST_LOG");
	env->burst_log = s && !strcmp(s, "1");
	if (s && *s && strcmp(s, "0") && strcmp(s, "1"))
		xs_err("cuda: XSCHED_CUDA_BURST_LOG='%s' is not 0 or 1; bursts are not told", s);
}
