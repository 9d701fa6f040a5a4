// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * verbslat's output: per QP, opcode and status the completions of the
 * interval with their latency percentiles (read and deleted from the BPF
 * side's stats map, so each interval starts at zero); per QP the WRs
 * still outstanding and the age of the oldest (the pending maps walked:
 * a QP that stopped completing shows while it is stuck); the totals of
 * the whole run. Text, or with -j JSON lines.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "verbslat.h"
#include "verbslat.skel.h"
#include "verbslat_prom.h"
#include "verbslat_report.h"
#include "lib/btf_enum.h"
#include "lib/cli.h"
#include "lib/hist.h"
#include "lib/json.h"
#include "lib/maps.h"

#define MAX_ROWS 4096
#define MAX_QPS 4096

struct collect {
	struct vl_qp_row *qps;
	int nq;
};

static const char *opcode_str(const struct vl_run *r, __u8 op, char *buf, int len)
{
	const char *n = op == VL_OP_RECV ? "RECV" : op == VL_OP_UNKNOWN ? "-" :
			r->opcode ? btf_enum_name(r->opcode, op) : NULL;

	if (n)
		snprintf(buf, len, "%s", n);
	else
		snprintf(buf, len, "%u", op);
	return buf;
}

static const char *status_str(const struct vl_run *r, __u32 st, char *buf, int len)
{
	const char *n = r->status ? btf_enum_name(r->status, st) : NULL;

	if (n)
		snprintf(buf, len, "%s", n);
	else
		snprintf(buf, len, "%u", st);
	return buf;
}

/* rows read from the map, before they are deleted */
struct drained {
	struct vl_row *rows;
	int n;
};

static int row_cb(const void *key, const void *val, void *ctx)
{
	struct drained *d = ctx;

	if (d->n >= MAX_ROWS)
		return 1;
	memcpy(&d->rows[d->n].k, key, sizeof(struct vl_stat_key));
	memcpy(&d->rows[d->n].s, val, sizeof(struct vl_stat));
	d->n++;
	return 0;
}

static int qp_cb(const void *key, const void *val, void *ctx)
{
	struct collect *c = ctx;

	if (c->nq >= MAX_QPS)
		return 1;
	c->qps[c->nq].qp = *(const __u64 *)key;
	memcpy(&c->qps[c->nq].q, val, sizeof(struct vl_qp));
	c->nq++;
	return 0;
}

static struct vl_qp_row *qp_find(const struct collect *c, __u64 qp)
{
	for (int i = 0; i < c->nq; i++)
		if (c->qps[i].qp == qp)
			return &c->qps[i];
	return NULL;
}

static void outstanding_add(struct collect *c, __u64 qp, __u64 ts, bool recv)
{
	struct vl_qp_row *q = qp_find(c, qp);
	__u64 *n, *oldest;

	if (!q)
		return;
	n = recv ? &q->recv : &q->send;
	oldest = recv ? &q->oldest_recv : &q->oldest_send;
	if (!(*n)++ || ts < *oldest)
		*oldest = ts;
}

static int pending_cb(const void *key, const void *val, void *ctx)
{
	const struct vl_wr_key *k = key;

	outstanding_add(ctx, k->qp, ((const struct vl_wr *)val)->ts_ns, k->dir);
	return 0;
}

static int unsig_cb(const void *key, const void *val, void *ctx)
{
	outstanding_add(ctx, ((const struct vl_unsig_key *)key)->qp,
			((const struct vl_wr *)val)->ts_ns, false);
	return 0;
}

static int row_cmp(const void *a, const void *b)
{
	const struct vl_stat_key *x = &((const struct vl_row *)a)->k, *y = &((const struct vl_row *)b)->k;

	if (x->dev_index != y->dev_index)
		return x->dev_index < y->dev_index ? -1 : 1;
	if (x->qpn != y->qpn)
		return x->qpn < y->qpn ? -1 : 1;
	if (x->opcode != y->opcode)
		return x->opcode < y->opcode ? -1 : 1;
	return x->status < y->status ? -1 : x->status > y->status;
}

struct dev_find {
	__u32 dev_index;
	char name[VL_DEVNAME];
};

static int dev_cb(const void *key, const void *val, void *ctx)
{
	const struct vl_qp *q = val;
	struct dev_find *f = ctx;

	(void)key;
	if (q->dev_index != f->dev_index)
		return 0;
	snprintf(f->name, sizeof(f->name), "%s", q->dev);
	return 1;
}

/* the device name of a stat row: from a QP of the same device in c, or,
 * for a QP whose first post came after c was read (its entry is made at
 * that post, before any completion), from the QP map as it is now; "?"
 * when no QP of the device is left */
static const char *dev_of(const struct vl_run *r, const struct collect *c, __u32 dev_index,
			  char *buf, size_t len)
{
	struct dev_find f = { .dev_index = dev_index };

	for (int i = 0; i < c->nq; i++)
		if (c->qps[i].q.dev_index == dev_index)
			return c->qps[i].q.dev;
	if (maps_for_each(r->obj->maps.qps, dev_cb, &f) >= 0 && f.name[0]) {
		snprintf(buf, len, "%s", f.name);
		return buf;
	}
	return "?";
}

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void print_row(const struct vl_run *r, const struct collect *c, const struct vl_row *w)
{
	const struct vl_qp_row *q = qp_find(c, w->k.qp);
	char op[32], st[40];
	double p50 = llhist_quantile(w->s.lat.b, 0.5, 0, w->s.max_ns) / 1e3;
	double p99 = llhist_quantile(w->s.lat.b, 0.99, 0, w->s.max_ns) / 1e3;
	double avg = w->s.count ? w->s.sum_ns / 1e3 / w->s.count : 0;
	char dbuf[VL_DEVNAME];
	const char *dev = dev_of(r, c, w->k.dev_index, dbuf, sizeof(dbuf));
	struct json_w j;

	opcode_str(r, w->k.opcode, op, sizeof(op));
	status_str(r, w->k.status, st, sizeof(st));
	if (!r->cli->json) {
		printf("%-12s %#-8x %-16s %-24s %9llu %9llu %9.1f %9.1f %9.1f %9.1f\n",
		       dev, w->k.qpn, op, st,
		       (unsigned long long)w->s.count, (unsigned long long)w->s.unsignaled,
		       avg, p50, p99, w->s.max_ns / 1e3);
		return;
	}
	json_begin(&j, stdout);
	json_str(&j, "type", "wr");
	json_time(&j, cli_now_epoch());
	json_str(&j, "dev", dev);
	json_u64(&j, "qpn", w->k.qpn);
	/* the QP's owner, unless it was destroyed before this table */
	if (q)
		json_str(&j, "owner", q->q.owner);
	else
		json_null(&j, "owner");
	json_str(&j, "opcode", op);
	json_str(&j, "status", st);
	json_u64(&j, "count", w->s.count);
	json_u64(&j, "unsignaled", w->s.unsignaled);
	json_obj_open(&j, "lat_us");
	json_fixed(&j, "avg", avg, 1);
	json_fixed(&j, "p50", p50, 1);
	json_fixed(&j, "p99", p99, 1);
	json_fixed(&j, "max", w->s.max_ns / 1e3, 1);
	json_obj_close(&j);
	json_end(&j);
}

static void print_qp(const struct vl_run *r, const struct vl_qp_row *q, __u64 now)
{
	double age = q->send ? (now - q->oldest_send) / 1e6 : 0;
	double rage = q->recv ? (now - q->oldest_recv) / 1e6 : 0;
	struct json_w j;

	if (!r->cli->json) {
		printf("%-12s %#-8x %9llu %9llu %12.1f %9llu %12.1f %s\n", q->q.dev, q->q.qpn,
		       (unsigned long long)q->q.post_seq, (unsigned long long)q->send, age,
		       (unsigned long long)q->recv, rage, q->q.owner[0] ? q->q.owner : "-");
		return;
	}
	json_begin(&j, stdout);
	json_str(&j, "type", "qp");
	json_time(&j, cli_now_epoch());
	json_str(&j, "dev", q->q.dev);
	json_u64(&j, "qpn", q->q.qpn);
	json_str(&j, "owner", q->q.owner);
	json_u64(&j, "send_posted", q->q.post_seq);
	json_u64(&j, "send_outstanding", q->send);
	json_fixed(&j, "send_oldest_ms", age, 3);
	json_u64(&j, "recv_outstanding", q->recv);
	json_fixed(&j, "recv_oldest_ms", rage, 3);
	json_end(&j);
}

static const char *const counter_names[VL_STAT_NR] = {
	[VL_STAT_POSTED] = "posted", [VL_STAT_COMPLETED] = "completed",
	[VL_STAT_UNPAIRED] = "unpaired", [VL_STAT_CHAIN_LONG] = "chain_too_long",
	[VL_STAT_POLL_LONG] = "poll_too_long", [VL_STAT_UNSIG_LONG] = "unsignaled_too_many",
	[VL_STAT_MAP_FULL] = "map_full", [VL_STAT_COOKIE_AGAIN] = "cookie_again",
	[VL_STAT_EVENTS_LOST] = "events_lost",
};

/* calls of a hook the kernel skipped the tool's program for (recursion
 * on one CPU, its count since 5.12): on fentry the twins' (a twin is
 * skipped only when nested in itself: a third level, or a call its
 * first program handled anyway), on kprobes any (a kprobe program nested
 * in another is skipped, with no twin to take over) */
static __u64 recursion_misses(const struct vl_run *r)
{
	struct bpf_program *p;
	__u64 n = 0;

	bpf_object__for_each_program(p, r->obj->obj) {
		const char *sec = bpf_program__section_name(p);
		bool kprobe = !strncmp(sec, "kprobe/", 7) || !strncmp(sec, "kretprobe/", 10);
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);

		if (bpf_program__fd(p) < 0 || (!kprobe && !strstr(bpf_program__name(p), "_twin")))
			continue;
		if (!bpf_obj_get_info_by_fd(bpf_program__fd(p), &info, &len))
			n += info.recursion_misses;
	}
	return n;
}

/* the run's counters: one line (text) or one object */
static void print_totals(const struct vl_run *r)
{
	struct json_w j;
	__u64 missed = recursion_misses(r);

	if (r->cli->json) {
		json_begin(&j, stdout);
		json_str(&j, "type", "totals");
		json_time(&j, cli_now_epoch());
	}
	for (int i = 0; i < VL_STAT_NR; i++) {
		__u64 v = maps_stat(r->obj->maps.counters, i, r->ncpu);

		if (r->cli->json)
			json_u64(&j, counter_names[i], v);
		else
			printf("%s%s %llu", i ? ", " : "total: ", counter_names[i],
			       (unsigned long long)v);
	}
	if (r->cli->json) {
		json_u64(&j, "kernel_skipped", missed);
		json_end(&j);
	} else {
		printf(", kernel_skipped %llu\n", (unsigned long long)missed);
	}
}

/* a drained row into the held ones (the same key: summed) */
static void hold(struct vl_run *r, const struct vl_row *w)
{
	struct vl_stat *h = NULL;

	for (int i = 0; i < r->nheld && !h; i++)
		if (!memcmp(&r->held[i].k, &w->k, sizeof(w->k)))
			h = &r->held[i].s;
	if (!h) {
		if (r->nheld >= MAX_ROWS)
			return;
		r->held[r->nheld] = *w;
		r->nheld++;
		return;
	}
	h->count += w->s.count;
	h->unsignaled += w->s.unsignaled;
	h->sum_ns += w->s.sum_ns;
	if (w->s.max_ns > h->max_ns)
		h->max_ns = w->s.max_ns;
	llhist_add_into(h->lat.b, w->s.lat.b);
}

/* the rows read, then deleted (the next interval starts from zero; an
 * increment between the two is lost, lookup-and-delete of a hash map
 * needs 5.14), into the held ones and --prom's totals; 0 or -ENOMEM */
static int drain(struct vl_run *r, const struct collect *c)
{
	struct drained d = { .rows = calloc(MAX_ROWS, sizeof(struct vl_row)) };
	int fd = bpf_map__fd(r->obj->maps.stats);
	char op[32], st[40], dbuf[VL_DEVNAME];

	if (!r->held)
		r->held = calloc(MAX_ROWS, sizeof(struct vl_row));
	if (!d.rows || !r->held) {
		free(d.rows);
		return -ENOMEM;
	}
	maps_for_each(r->obj->maps.stats, row_cb, &d);
	for (int i = 0; i < d.n; i++) {
		const struct vl_row *w = &d.rows[i];

		bpf_map_delete_elem(fd, &w->k);
		hold(r, w);
		if (r->prom && vl_prom_add(r->prom, dev_of(r, c, w->k.dev_index, dbuf, sizeof(dbuf)),
					   w->k.qpn,
					   opcode_str(r, w->k.opcode, op, sizeof(op)),
					   status_str(r, w->k.status, st, sizeof(st)), &w->s))
			cli_err("out of memory: --prom's totals incomplete");
	}
	free(d.rows);
	return 0;
}

/* the QPs and their work outstanding; 0 or -ENOMEM */
static int collect(struct vl_run *r, struct collect *c)
{
	c->qps = calloc(MAX_QPS, sizeof(struct vl_qp_row));
	if (!c->qps)
		return -ENOMEM;
	maps_for_each(r->obj->maps.qps, qp_cb, c);
	maps_for_each(r->obj->maps.pending, pending_cb, c);
	maps_for_each(r->obj->maps.unsig, unsig_cb, c);
	return 0;
}

static void write_prom(struct vl_run *r, const struct collect *c, __u64 now)
{
	__u64 counters[VL_STAT_NR];
	struct vl_prom_in in = { .qps = c->qps, .nq = c->nq, .now_ns = now,
				 .counters = counters, .counter_names = counter_names,
				 .kernel_skipped = recursion_misses(r) };
	int err;

	for (int i = 0; i < VL_STAT_NR; i++)
		counters[i] = maps_stat(r->obj->maps.counters, i, r->ncpu);
	err = vl_prom_write(r->prom, r->cli->prom_path, &in);
	if (err)
		cli_prom_err(r->cli, err);
}

void vl_prom_only(struct vl_run *r)
{
	struct collect c = {};

	if (collect(r, &c) || drain(r, &c))
		cli_err("out of memory");
	else
		write_prom(r, &c, now_ns());
	free(c.qps);
}

void vl_report(struct vl_run *r)
{
	struct collect c = {};
	__u64 now;

	if (collect(r, &c) || drain(r, &c)) {
		cli_err("out of memory");
		goto out;
	}
	now = now_ns();
	qsort(r->held, r->nheld, sizeof(*r->held), row_cmp);
	if (!r->cli->json) {
		cli_print_timestamp_line(r->cli, stdout);
		printf("%-12s %-8s %-16s %-24s %9s %9s %9s %9s %9s %9s\n", "DEV", "QPN", "OPCODE",
		       "STATUS", "COUNT", "UNSIG", "AVG_us", "P50_us", "P99_us", "MAX_us");
	}
	for (int i = 0; i < r->nheld; i++)
		print_row(r, &c, &r->held[i]);
	r->nheld = 0;
	if (!r->cli->json)
		printf("\n%-12s %-8s %9s %9s %12s %9s %12s %s\n", "DEV", "QPN", "SENDS", "SQ_OUTST",
		       "SQ_OLDEST_ms", "RQ_POSTED", "RQ_OLDEST_ms", "OWNER");
	for (int i = 0; i < c.nq; i++)
		if (c.qps[i].q.tracked)
			print_qp(r, &c.qps[i], now);
	print_totals(r);
	if (!r->cli->json)
		printf("\n");
	fflush(stdout);
	if (r->prom)
		write_prom(r, &c, now);
out:
	free(c.qps);
}

void vl_print_event_header(const struct vl_run *r)
{
	if (r->cli->json)
		return;
	cli_print_time_header(r->cli, stdout);
	printf("%-12s %-8s %-16s %-24s %10s %12s %s\n", "DEV", "QPN", "OPCODE", "STATUS",
	       "VENDOR_ERR", "LAT_us", "WR_ID");
	fflush(stdout);
}

void vl_print_event(const struct vl_run *r, const struct vl_event *e)
{
	char op[32], st[40];
	struct json_w j;

	opcode_str(r, e->opcode, op, sizeof(op));
	status_str(r, e->status, st, sizeof(st));
	if (r->cli->json) {
		json_begin(&j, stdout);
		json_str(&j, "type", "error");
		json_time(&j, cli_ktime_to_epoch(e->ts_ns));
		json_str(&j, "dev", e->dev);
		json_u64(&j, "qpn", e->qpn);
		json_str(&j, "opcode", op);
		json_str(&j, "status", st);
		json_u64(&j, "status_code", e->status);
		json_u64(&j, "vendor_err", e->vendor_err);
		if (e->lat_ns)
			json_fixed(&j, "lat_us", e->lat_ns / 1e3, 1);
		else
			json_null(&j, "lat_us");
		json_u64(&j, "wr_id", e->wr_id);
		json_end(&j);
		return;
	}
	cli_print_ktime(r->cli, stdout, e->ts_ns);
	printf("%-12s %#-8x %-16s %-24s %10u ", e->dev, e->qpn, op, st, e->vendor_err);
	if (e->lat_ns)
		printf("%12.1f", e->lat_ns / 1e3);
	else
		printf("%12s", "-");
	printf(" %#llx\n", (unsigned long long)e->wr_id);
	fflush(stdout);
}
