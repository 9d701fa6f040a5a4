// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The one main loop of loop.h: ppoll over the sources with signals let
 * in only while it waits, interval reports, --prom writes, and the last
 * table at the end.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include "cli.h"
#include "loop.h"
#include "prom.h"

void loop_add(struct loop *l, struct ring_buffer *rb, int fd,
	      int (*run)(void *ctx, bool readable))
{
	if (l->nsrc == LOOP_MAX_SOURCES)
		cli_die("internal error: more than %d loop sources", LOOP_MAX_SOURCES);
	l->src[l->nsrc].rb = rb;
	l->src[l->nsrc].fd = rb ? ring_buffer__epoll_fd(rb) : fd;
	l->src[l->nsrc].run = run;
	l->nsrc++;
}

struct ring_buffer *loop_add_events(struct loop *l, const struct bpf_map *events,
				    ring_buffer_sample_fn fn, void *fn_ctx,
				    int (*run)(void *ctx, bool readable))
{
	struct ring_buffer *rb = ring_buffer__new(bpf_map__fd(events), fn, fn_ctx, NULL);

	if (!rb) {
		cli_bpf_err("create ring buffer", -errno);
		return NULL;
	}
	loop_add(l, rb, -1, run);
	l->src[l->nsrc - 1].own_rb = true;
	return rb;
}

static double loop_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* every source once; readable from the last wait (NULL: none) */
static int loop_run_sources(struct loop *l, const struct pollfd *pfd)
{
	for (int i = 0; i < l->nsrc; i++) {
		struct loop_source *s = &l->src[i];
		bool readable = pfd && (pfd[i].revents & POLLIN);
		int err;

		if (s->run) {
			err = s->run(l->ctx, readable);
		} else {
			err = ring_buffer__consume(s->rb);
			if (err == -EINTR)
				err = 0;
			if (err < 0)
				cli_bpf_err("read ring buffer", err);
		}
		if (err < 0)
			return err;
	}
	return 0;
}

/* the wait until deadline (seconds on loop_now(); <= 0: none), signals let
 * in only here; 0 or -errno */
static int loop_wait(struct loop *l, struct pollfd *pfd, double deadline,
		     const sigset_t *unblocked)
{
	struct timespec ts, *tsp = NULL;
	double wait = -1, now = loop_now();
	int tick = l->tick_ms ? l->tick_ms : LOOP_TICK_MS;

	if (l->nsrc || l->tick)
		wait = tick / 1e3;
	if (deadline > 0 && (wait < 0 || deadline - now < wait))
		wait = deadline > now ? deadline - now : 0;
	if (wait >= 0) {
		ts.tv_sec = (time_t)wait;
		ts.tv_nsec = (long)((wait - ts.tv_sec) * 1e9);
		tsp = &ts;
	}
	for (int i = 0; i < l->nsrc; i++) {
		pfd[i].fd = l->src[i].fd;
		pfd[i].events = POLLIN;
		pfd[i].revents = 0;
	}
	if (ppoll(pfd, l->nsrc, tsp, unblocked) < 0 && errno != EINTR) {
		cli_err("poll: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

/* counts mode: one table every interval; true once count tables are out */
static bool loop_due_report(struct loop *l, const struct cli_env *cli, double now,
			    double *next, long *reports)
{
	if (!l->report || !cli->interval || now < *next)
		return false;
	l->report(l->ctx);
	*next += cli->interval;
	if (*next <= now)
		*next = now + cli->interval;
	return cli->count && ++*reports >= cli->count;
}

/* --prom without an interval (or with -e): the file alone, periodically */
static void loop_due_prom(struct loop *l, double now, double *next)
{
	if (*next <= 0 || now < *next)
		return;
	l->prom(l->ctx, LOOP_PERIOD);
	*next += PROM_DEFAULT_PERIOD_S;
	if (*next <= now)
		*next = now + PROM_DEFAULT_PERIOD_S;
}

int loop_run(struct loop *l, const struct cli_env *cli)
{
	struct pollfd pfd[LOOP_MAX_SOURCES];
	double start = loop_now(), next_report, next_prom = 0;
	bool done = false;
	sigset_t block, unblocked;
	long reports = 0;
	int err = 0;

	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigprocmask(SIG_BLOCK, &block, &unblocked);
	next_report = start + cli->interval;
	if (cli->prom_path && l->prom) {
		l->prom(l->ctx, LOOP_START);
		if (!l->report || !cli->interval)
			next_prom = start + PROM_DEFAULT_PERIOD_S;
	}
	while (!cli_exiting() && !done) {
		double now, deadline = cli->interval && l->report ? next_report : 0;

		if (next_prom > 0 && (deadline <= 0 || next_prom < deadline))
			deadline = next_prom;
		err = loop_wait(l, pfd, deadline, &unblocked);
		if (!err)
			err = loop_run_sources(l, pfd);
		if (err)
			goto out;
		if (l->tick)
			l->tick(l->ctx);
		if (cli_exiting())
			break;
		now = loop_now();
		done = loop_due_report(l, cli, now, &next_report, &reports);
		loop_due_prom(l, now, &next_prom);
	}
	cli_end_interrupted_line();
	err = loop_run_sources(l, NULL);
	if (err)
		goto out;
	if (l->report && !done)
		l->report(l->ctx);
	else if (!l->report && cli->prom_path && l->prom)
		l->prom(l->ctx, LOOP_END);
	if (!l->report && l->events_lost)
		cli_warn_events_lost(cli, l->events_lost(l->ctx));
out:
	sigprocmask(SIG_SETMASK, &unblocked, NULL);
	for (int i = 0; i < l->nsrc; i++)
		if (l->src[i].own_rb)
			ring_buffer__free(l->src[i].rb);
	return err;
}
