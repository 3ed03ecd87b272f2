// SPDX-License-Identifier: MIT
/*
 * What an XQueue is created with, as a pure function (no locks, no platform
 * calls, no logging): from the caller's attributes, the environment
 * (struct xs_config) and what its platforms can do, its priority, level,
 * arbiter mode and Lv1 threshold and batch.  xqueue.c applies the result
 * (binds the platform queue, fits the Lv1 settings to its ring) and prints
 * the warnings it names.
 *
 * An attribute that asks for what the platforms cannot do is an error
 * (-EINVAL out of range, -EOPNOTSUPP not here); the same wish in the
 * environment is a warning and the nearest thing the platforms can do.
 */
#include "internal.h"

int xs_lv1_check(unsigned int threshold, unsigned int batch, uint32_t ring)
{
	if (threshold < 1 || threshold > XSCHED_THRESHOLD_MAX || threshold > ring)
		return -EINVAL;
	if (batch < 1 || batch > threshold)
		return -EINVAL;
	return 0;
}

int xs_xq_decide(const struct xs_config *cfg, const struct xsched_attr *attr,
		 const struct xs_platform_ops *plat, const struct xs_platform_ops *pre,
		 struct xs_xq_settings *s)
{
	static const uint32_t known = XSCHED_ATTR_PRIORITY | XSCHED_ATTR_LEVEL |
				      XSCHED_ATTR_THRESHOLD | XSCHED_ATTR_BATCH |
				      XSCHED_ATTR_ARBITER | XSCHED_ATTR_GROUP;
	unsigned int lmax, lmin;

	memset(s, 0, sizeof(*s));
	if (attr && ((attr->flags & ~known) || attr->reserved[0]))
		return -EINVAL;
	/* Lv1 needs a launching submitter, Lv2/Lv3 a preemptor that can
	 * suspend. */
	lmax = pre ? pre->max_level : XSCHED_LV1;
	lmin = plat->min_level;
	s->lmax = lmax;
	s->lmin = lmin;

	s->arb_mode = cfg->arbiter;
	if (attr && (attr->flags & XSCHED_ATTR_ARBITER)) {
		if (attr->arbiter > 1)
			return -EINVAL;
		if (attr->arbiter && !(pre && pre->set_arbiter))
			return -EOPNOTSUPP;
		s->arb_mode = attr->arbiter;
	} else if (s->arb_mode && !(pre && pre->set_arbiter)) {
		s->warn |= XS_XQ_WARN_NO_ARBITER;
		s->arb_mode = false;
	}

	s->prio = cfg->has_priority ? cfg->priority : 0;
	if (attr && (attr->flags & XSCHED_ATTR_PRIORITY)) {
		if (attr->priority < XSCHED_PRIO_MIN ||
		    attr->priority > XSCHED_PRIO_MAX)
			return -EINVAL;
		s->prio = attr->priority;
	}

	s->level = lmax;
	if (attr && (attr->flags & XSCHED_ATTR_LEVEL) &&
	    attr->level != XSCHED_LV_DEFAULT) {
		if (attr->level > XSCHED_LV3)
			return -EINVAL;
		if (attr->level > lmax || attr->level < lmin)
			return -EOPNOTSUPP;
		s->level = attr->level;
	} else if (cfg->has_level) {
		if (lmin > 1 && cfg->level != lmax)
			s->warn |= XS_XQ_WARN_LEVEL_RANGE;
		else if (cfg->level > lmax)
			s->warn |= XS_XQ_WARN_LEVEL_MAX;
		else
			s->level = cfg->level;
	}

	s->threshold = cfg->threshold;
	s->batch = cfg->batch;
	if (attr && (attr->flags & XSCHED_ATTR_THRESHOLD))
		s->threshold = attr->threshold;
	if (attr && (attr->flags & XSCHED_ATTR_BATCH))
		s->batch = attr->batch;
	s->lv1_asked = attr &&
		       (attr->flags & (XSCHED_ATTR_THRESHOLD | XSCHED_ATTR_BATCH));
	s->group = attr && (attr->flags & XSCHED_ATTR_GROUP) ? attr->group : 0;
	return 0;
}

int xs_xq_fit_ring(struct xs_xq_settings *s, uint32_t ring)
{
	if (!s->lv1_asked) {
		/* From the environment or the defaults: fit them to the ring. */
		if (s->threshold > ring) {
			if (s->level == XSCHED_LV1)
				s->warn |= XS_XQ_WARN_RING;
			s->asked_threshold = s->threshold;
			s->threshold = ring;
		}
		if (s->batch > s->threshold)
			s->batch = s->threshold;
	}
	return xs_lv1_check(s->threshold, s->batch, ring);
}
