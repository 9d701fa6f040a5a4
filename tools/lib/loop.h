/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The one main loop of every tool after attach, in the spirit of
 * xdp-tools' sample_run(): interval reports, --prom timing, ring buffers and
 * other file descriptors, and the end on SIGINT/SIGTERM/SIGHUP. The options
 * mean the same in every tool:
 *
 *   [interval] [count]  the table every interval seconds, count times, then
 *                       exit; no interval: the table once, at exit. A signal
 *                       ends the run with one last table (unless count
 *                       tables were printed already).
 *   -e/--events         one line per event instead of the table; interval
 *                       and count do not apply (cli_check_events()).
 *   --prom FILE         written right away (the file exists from the
 *                       start), with every table, every
 *                       PROM_DEFAULT_PERIOD_S seconds when there is no
 *                       interval (with -e too), and at exit.
 *
 * Signals are blocked while callbacks run and let in only while the loop
 * waits (ppoll), so a Ctrl-C is never lost between a check and the wait.
 */
#ifndef AGENTXDP_LOOP_H
#define AGENTXDP_LOOP_H

#include <stdbool.h>
#include <linux/types.h>
#include <bpf/libbpf.h>

struct cli_env;

#define LOOP_MAX_SOURCES 4
/* the longest wait with a source or tick: the BPF side of a ring buffer
 * may skip the wakeup (BPF_RB_NO_WAKEUP), so it is consumed this often */
#define LOOP_TICK_MS 100

/*
 * Something polled with the rest: a file descriptor (or -1 for none), and
 * run(), called at every wake-up (readable or not: a ring buffer must be
 * consumed even when its producer skipped the wakeup) and once more at the
 * end of the run; it must not block. A negative return ends the run with
 * that error. With rb set and run NULL the loop consumes rb itself.
 */
struct loop_source {
	int fd;
	struct ring_buffer *rb;
	int (*run)(void *ctx, bool readable);
	bool own_rb;		/* made by loop_add_events(), freed by loop_run() */
};

enum loop_when { LOOP_START, LOOP_PERIOD, LOOP_END };

struct loop {
	void *ctx;		/* passed to every callback */
	/*
	 * The table of one interval (or of the whole run, at exit); it
	 * writes the --prom file too, from the same reading of the maps.
	 * NULL with -e.
	 */
	void (*report)(void *ctx);
	/* the --prom file alone (no table), when is why; NULL: no --prom */
	void (*prom)(void *ctx, enum loop_when when);
	/* housekeeping at every wake-up, at most every tick_ms; may be NULL */
	void (*tick)(void *ctx);
	int tick_ms;		/* 0: LOOP_TICK_MS */
	/* -e: events the BPF side could not queue, warned about at the end
	 * (cli_warn_events_lost()); may be NULL */
	__u64 (*events_lost)(void *ctx);
	struct loop_source src[LOOP_MAX_SOURCES];
	int nsrc;
};

/* a source: a ring buffer (its epoll fd; run NULL: consumed by the loop)
 * or a descriptor (rb NULL); dies past LOOP_MAX_SOURCES */
void loop_add(struct loop *l, struct ring_buffer *rb, int fd,
	      int (*run)(void *ctx, bool readable));
/* -e: a ring buffer on map events with handler fn, added as a source
 * (run as for loop_add()), freed when loop_run() returns; NULL after a
 * one-line error */
struct ring_buffer *loop_add_events(struct loop *l, const struct bpf_map *events,
				    ring_buffer_sample_fn fn, void *fn_ctx,
				    int (*run)(void *ctx, bool readable));
/*
 * Runs until a signal, or count reports: the --prom file at once, then
 * the schedule above, then the sources drained and the last table (or with
 * -e the last --prom file and the events lost). The schedule is the tool's
 * common options (cli: [interval] [count], --prom, and -j for the events
 * lost), as xdp-tools' sample_run() takes its interval. 0, or the negative
 * error of a source or of the wait (reported on stderr in one line).
 */
int loop_run(struct loop *l, const struct cli_env *cli);

#endif
