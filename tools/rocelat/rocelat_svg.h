/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * rocelat --svg FILE: every latency sample as an event (the BPF side's
 * samples ring buffer), drawn at the end of the run as one self-contained
 * SVG: a heatmap of all flows over time, then each flow's samples with its
 * p50 and p99 per time bucket, worst flow first.
 */
#ifndef AGENTXDP_ROCELAT_SVG_H
#define AGENTXDP_ROCELAT_SVG_H

#include <stdbool.h>
#include <linux/types.h>

struct rocelat_backend;
struct ring_buffer;
struct rocelat_svg;

struct rocelat_svg_cfg {
	const char *path;	/* the SVG to write */
	const char *source;	/* what was read: the capture or an interface */
	bool offline;		/* -r: sample times are the capture's (epoch) */
	__u64 unit_ns;		/* the latency axis' unit: -m, --nanoseconds, us */
};

/* the samples ring buffer's size with --svg (rocelat_load_opts): 72
 * bytes a sample and 8 of header, 52000 samples between two reads */
#define ROCELAT_SVG_RING_BYTES	(1 << 22)
/* after load (be: the program, whichever build runs it): the collector,
 * NULL after a one-line error */
struct rocelat_svg *rocelat_svg_new(struct rocelat_backend *be,
				    const struct rocelat_svg_cfg *cfg);
/* the ring buffer, for the live loop to consume */
struct ring_buffer *rocelat_svg_rb(struct rocelat_svg *s);
/* take what the ring buffer holds (offline: after each packet) */
void rocelat_svg_poll(struct rocelat_svg *s);
/* the last samples taken, the file written (atomically), s freed;
 * 0, or 1 after a one-line error. NULL: nothing to do. */
int rocelat_svg_finish(struct rocelat_svg *s);

#endif
