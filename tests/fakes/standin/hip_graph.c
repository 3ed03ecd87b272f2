// SPDX-License-Identifier: MIT
/*
 * The stand-in HIP runtime's graphs: captured from one stream (kernels,
 * copies, memsets), instantiated and replayed as the same packets.
 */
#include "hip_standin.h"

/* ---- graphs: captured from one stream, replayed in order ---- */

static hipError_t begin_capture(hipStream_t stream, hipStreamCaptureMode mode, bool spt)
{
	(void)mode;
	STREAM_OR_FAIL(s, stream, spt);
	if (s->null)
		return ret(hipErrorStreamCaptureUnsupported);	/* as CLR */
	if (s->capture)
		return ret(hipErrorIllegalState);
	s->capture = calloc(1, sizeof(*s->capture));
	if (!s->capture)
		return ret(hipErrorOutOfMemory);
	s->capture->tail = &s->capture->head;
	return hipSuccess;
}

EXPORT hipError_t hipStreamBeginCapture(hipStream_t stream, hipStreamCaptureMode mode)
{
	return begin_capture(stream, mode, false);
}

EXPORT hipError_t hipStreamEndCapture(hipStream_t stream, hipGraph_t *graph)
{
	STREAM_OR_FAIL(s, stream, false);
	if (!s->capture)
		return ret(hipErrorIllegalState);
	if (!graph)
		return ret(hipErrorInvalidValue);
	*graph = s->capture;
	s->capture = NULL;
	return hipSuccess;
}

EXPORT hipError_t hipStreamIsCapturing(hipStream_t stream, hipStreamCaptureStatus *status)
{
	STREAM_OR_FAIL(s, stream, false);
	if (!status)
		return ret(hipErrorInvalidValue);
	*status = s->capture ? hipStreamCaptureStatusActive : hipStreamCaptureStatusNone;
	return hipSuccess;
}

static void free_nodes(struct node *n)
{
	while (n) {
		struct node *next = n->next;

		free(n);
		n = next;
	}
}

EXPORT hipError_t hipGraphInstantiate(hipGraphExec_t *exec, hipGraph_t graph,
				      hipGraphNode_t *errorNode, char *logBuffer,
				      size_t bufferSize)
{
	struct hipGraphExec *x;
	struct node **tail;

	(void)errorNode;
	if (logBuffer && bufferSize)
		logBuffer[0] = 0;
	if (!exec || !graph)
		return ret(hipErrorInvalidValue);
	x = calloc(1, sizeof(*x));
	if (!x)
		return ret(hipErrorOutOfMemory);
	tail = &x->g.head;
	for (struct node *n = graph->head; n; n = n->next) {
		struct node *c = malloc(sizeof(*c));

		if (!c) {
			free_nodes(x->g.head);
			free(x);
			return ret(hipErrorOutOfMemory);
		}
		*c = *n;
		c->next = NULL;
		*tail = c;
		tail = &c->next;
	}
	*exec = x;
	return hipSuccess;
}

EXPORT hipError_t hipGraphLaunch(hipGraphExec_t exec, hipStream_t stream)
{
	if (!exec)
		return ret(hipErrorInvalidValue);
	STREAM_OR_FAIL(s, stream, false);
	for (struct node *n = exec->g.head; n; n = n->next) {
		switch (n->type) {
		case NODE_KERNEL:
			put_kernel(s, n->sim_kernel, n->grid, n->block, &n->ka);
			break;
		case NODE_COPY:
			put_agent(s, STANDIN_AGENT_COPY, n->a0, n->a1, n->a2);
			break;
		case NODE_MEMSET:
			put_agent(s, STANDIN_AGENT_MEMSET, n->a0, n->a1, n->a2);
			break;
		}
	}
	return hipSuccess;
}

EXPORT hipError_t hipGraphExecDestroy(hipGraphExec_t exec)
{
	if (!exec)
		return ret(hipErrorInvalidValue);
	free_nodes(exec->g.head);
	free(exec);
	return hipSuccess;
}

EXPORT hipError_t hipGraphDestroy(hipGraph_t graph)
{
	if (!graph)
		return ret(hipErrorInvalidValue);
	free_nodes(graph->head);
	free(graph);
	return hipSuccess;
}
