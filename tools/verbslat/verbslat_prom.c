// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * verbslat's --prom file (lib/prom.h): per QP, opcode and status the
 * completions since the start, per QP and opcode their post-to-completion
 * latency as a histogram in seconds (the BPF side's log-linear buckets
 * summed into the suite's log2 ones, the sum exact), per QP the WRs
 * outstanding now and the oldest one's age, and the run's counters.
 * The reports drain the BPF side's map every interval, so the totals are
 * kept here and only grow. VL_PROM_QPS QPs (the busiest when the cap
 * filled) have series of their own; the completions of the others are
 * summed for good into qpn="other" of their device, as rxeqp and rdmaqp do.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "verbslat_prom.h"
#include "lib/hist.h"
#include "lib/prom.h"

#define P_WRS "agentxdp_verbslat_completions_total"
#define P_LAT "agentxdp_verbslat_wr_latency_seconds"
#define P_OUT "agentxdp_verbslat_outstanding_wrs"
#define P_OLD "agentxdp_verbslat_oldest_outstanding_seconds"
#define MAX_DEVS 32

struct series {
	char *key;		/* dev, qpn, opcode, status, each ended by '\x1f' */
	char dev[VL_DEVNAME], qpn[12], opcode[32], status[40];
	__u64 count, sum_ns;
	__u64 slots[HIST_SLOTS];	/* ns */
};

struct vl_prom {
	struct prom_cap cap;
	struct series *s;
	size_t n, alloc;
};

struct vl_prom *vl_prom_new(void)
{
	struct vl_prom *p = calloc(1, sizeof(*p));

	if (p)
		prom_cap_init(&p->cap, VL_PROM_QPS);
	return p;
}

void vl_prom_free(struct vl_prom *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++)
		free(p->s[i].key);
	free(p->s);
	prom_cap_free(&p->cap);
	free(p);
}

/* the index of the series of these labels, made when new; -1: no memory */
static long series_of(struct vl_prom *p, const char *dev, const char *qpn, const char *op,
		      const char *st)
{
	struct series *s;
	char *key;

	if (asprintf(&key, "%s\x1f%s\x1f%s\x1f%s\x1f", dev, qpn, op, st) < 0)
		return -1;
	for (size_t i = 0; i < p->n; i++)
		if (!strcmp(p->s[i].key, key)) {
			free(key);
			return i;
		}
	if (p->n == p->alloc) {
		size_t alloc = p->alloc ? 2 * p->alloc : 64;
		struct series *ns = realloc(p->s, alloc * sizeof(*ns));

		if (!ns) {
			free(key);
			return -1;
		}
		p->s = ns;
		p->alloc = alloc;
	}
	s = &p->s[p->n];
	memset(s, 0, sizeof(*s));
	s->key = key;
	snprintf(s->dev, sizeof(s->dev), "%s", dev);
	snprintf(s->qpn, sizeof(s->qpn), "%s", qpn);
	snprintf(s->opcode, sizeof(s->opcode), "%s", op);
	snprintf(s->status, sizeof(s->status), "%s", st);
	return p->n++;
}

int vl_prom_add(struct vl_prom *p, const char *dev, __u32 qpn, const char *opcode,
		const char *status, const struct vl_stat *st)
{
	char q[12];
	long i;

	snprintf(q, sizeof(q), "%u", qpn);
	i = series_of(p, dev, q, opcode, status);
	if (i < 0)
		return -ENOMEM;
	p->s[i].count += st->count;
	p->s[i].sum_ns += st->sum_ns;
	llhist_to_log2(st->lat.b, p->s[i].slots, HIST_SLOTS);
	return 0;
}

/* series i summed into its device's "other" for good, and dropped */
static void fold(struct vl_prom *p, size_t i)
{
	long o = series_of(p, p->s[i].dev, PROM_OTHER, p->s[i].opcode, p->s[i].status);

	if (o >= 0) {
		p->s[o].count += p->s[i].count;
		p->s[o].sum_ns += p->s[i].sum_ns;
		hist_add_into(p->s[o].slots, p->s[i].slots, HIST_SLOTS);
	}
	free(p->s[i].key);
	p->s[i] = p->s[--p->n];
}

/* which QPs have series of their own: those of the totals (the ones
 * left out folded now) and the traced QPs now (live_own[]); 0 or -ENOMEM */
static int select_qps(struct vl_prom *p, const struct vl_prom_in *in, bool *live_own)
{
	size_t n = p->n + in->nq, ns = p->n;
	char (*key)[VL_DEVNAME + 16] = calloc(n + 1, sizeof(*key));
	const char **kp = calloc(n + 1, sizeof(*kp));
	double *weight = calloc(n + 1, sizeof(*weight));
	bool *own = calloc(n + 1, sizeof(*own));
	int err = -ENOMEM;

	if (!key || !kp || !weight || !own)
		goto out;
	for (size_t i = 0; i < ns; i++) {
		snprintf(key[i], sizeof(key[i]), "%s\x1f%s", p->s[i].dev, p->s[i].qpn);
		weight[i] = p->s[i].count;
	}
	for (int j = 0; j < in->nq; j++)
		snprintf(key[ns + j], sizeof(key[0]), "%s\x1f%u", in->qps[j].q.dev,
			 in->qps[j].q.qpn);
	for (size_t i = 0; i < n; i++)
		kp[i] = key[i];
	prom_cap_select(&p->cap, n, kp, weight, own);
	for (int j = 0; j < in->nq; j++)
		live_own[j] = own[ns + j];
	/* backwards: fold() moves the last series into the place it empties */
	for (size_t i = ns; i-- > 0;)
		if (!own[i] && strcmp(p->s[i].qpn, PROM_OTHER))
			fold(p, i);
	err = 0;
out:
	free(key);
	free(kp);
	free(weight);
	free(own);
	return err;
}

static int series_cmp(const void *a, const void *b)
{
	return strcmp(((const struct series *)a)->key, ((const struct series *)b)->key);
}

/* completions by status, then the latency of each QP and opcode over all
 * statuses (its series are adjacent once sorted by key) */
static void write_wrs(struct prom_file *pf, struct vl_prom *p)
{
	__u64 slots[HIST_SLOTS] = {}, sum = 0;

	qsort(p->s, p->n, sizeof(*p->s), series_cmp);
	prom_family(pf, P_WRS, PROM_COUNTER,
		    "Work requests completed, per QP, opcode as posted and completion status "
		    "(enum ib_wc_status); an unsignaled WR when its send queue's next "
		    "completion retires it");
	for (size_t i = 0; i < p->n; i++) {
		const struct series *s = &p->s[i];
		struct prom_label l[] = { { "dev", s->dev }, { "qpn", s->qpn },
					  { "opcode", s->opcode }, { "status", s->status } };

		prom_counter(pf, P_WRS, l, 4, s->count);
	}
	prom_family(pf, P_LAT, PROM_HISTOGRAM,
		    "Time from a work request's post to its completion, per QP and opcode, "
		    "every status");
	for (size_t i = 0; i < p->n; i++) {
		const struct series *s = &p->s[i], *next = i + 1 < p->n ? &p->s[i + 1] : NULL;
		struct prom_label l[] = { { "dev", s->dev }, { "qpn", s->qpn },
					  { "opcode", s->opcode } };

		hist_add_into(slots, s->slots, HIST_SLOTS);
		sum += s->sum_ns;
		if (next && !strcmp(next->dev, s->dev) && !strcmp(next->qpn, s->qpn) &&
		    !strcmp(next->opcode, s->opcode))
			continue;
		prom_hist_log2(pf, P_LAT, l, 3, slots, HIST_SLOTS, 1e-9, sum);
		memset(slots, 0, sizeof(slots));
		sum = 0;
	}
}

/* the outstanding WRs of one queue of a QP (or of a device's other QPs) */
struct outst {
	const char *dev;
	char qpn[12];
	const char *owner;
	__u64 n[2], age_ns[2];	/* send, receive */
};

static void write_outst(struct prom_file *pf, const struct outst *o, int n)
{
	static const char *const queue[2] = { "send", "recv" };

	prom_family(pf, P_OUT, PROM_GAUGE,
		    "Work requests posted and not completed now, per QP and queue (recv: "
		    "receive buffers waiting for a message)");
	for (int i = 0; i < n; i++)
		for (int d = 0; d < 2; d++) {
			struct prom_label l[] = { { "dev", o[i].dev }, { "qpn", o[i].qpn },
						  { "owner", o[i].owner }, { "queue", queue[d] } };

			prom_gauge(pf, P_OUT, l, 4, o[i].n[d]);
		}
	prom_family(pf, P_OLD, PROM_GAUGE,
		    "Age of the oldest work request outstanding, per QP and queue (0: none); "
		    "one that grows is a QP that stopped completing");
	for (int i = 0; i < n; i++)
		for (int d = 0; d < 2; d++) {
			struct prom_label l[] = { { "dev", o[i].dev }, { "qpn", o[i].qpn },
						  { "owner", o[i].owner }, { "queue", queue[d] } };

			prom_gauge_seconds(pf, P_OLD, l, 4, o[i].age_ns[d], 1e-9);
		}
}

static void outst_add(struct outst *o, const struct vl_qp_row *r, __u64 now)
{
	__u64 age[2] = { r->send ? now - r->oldest_send : 0, r->recv ? now - r->oldest_recv : 0 };

	o->n[0] += r->send;
	o->n[1] += r->recv;
	for (int d = 0; d < 2; d++)
		if (age[d] > o->age_ns[d])
			o->age_ns[d] = age[d];
}

/* the traced QPs of their own, then per device the others summed */
static void outstanding(struct prom_file *pf, const struct vl_prom_in *in, const bool *own)
{
	struct outst *o = calloc(in->nq + MAX_DEVS + 1, sizeof(*o));
	int n = 0, first_other;

	if (!o)
		return;
	for (int j = 0; j < in->nq; j++) {
		const struct vl_qp_row *r = &in->qps[j];

		if (!r->q.tracked || !own[j])
			continue;
		o[n] = (struct outst){ .dev = r->q.dev, .owner = r->q.owner };
		snprintf(o[n].qpn, sizeof(o[n].qpn), "%u", r->q.qpn);
		outst_add(&o[n++], r, in->now_ns);
	}
	first_other = n;
	for (int j = 0; j < in->nq; j++) {
		const struct vl_qp_row *r = &in->qps[j];
		int k = first_other;

		if (!r->q.tracked || own[j])
			continue;
		while (k < n && strcmp(o[k].dev, r->q.dev))
			k++;
		if (k == n) {
			if (n - first_other >= MAX_DEVS)
				continue;
			o[n++] = (struct outst){ .dev = r->q.dev, .owner = "", .qpn = PROM_OTHER };
		}
		outst_add(&o[k], r, in->now_ns);
	}
	write_outst(pf, o, n);
	free(o);
}

int vl_prom_write(struct vl_prom *p, const char *path, const struct vl_prom_in *in)
{
	bool *own = calloc(in->nq + 1, sizeof(*own));
	struct prom_file pf;
	char name[96];
	int err = own ? select_qps(p, in, own) : -ENOMEM;

	if (!err)
		err = prom_open(&pf, path);
	if (err) {
		free(own);
		return err;
	}
	write_wrs(&pf, p);
	outstanding(&pf, in, own);
	for (int i = 0; i < VL_STAT_NR; i++) {
		snprintf(name, sizeof(name), "agentxdp_verbslat_%s_total", in->counter_names[i]);
		prom_family(&pf, name, PROM_COUNTER, "A verbslat counter, see verbslat(8)");
		prom_counter(&pf, name, NULL, 0, in->counters[i]);
	}
	prom_family(&pf, "agentxdp_verbslat_kernel_skipped_total", PROM_COUNTER,
		    "Calls of a hooked function the kernel ran none of verbslat's programs for "
		    "(recursion on one CPU): WRs or completions not seen");
	prom_counter(&pf, "agentxdp_verbslat_kernel_skipped_total", NULL, 0, in->kernel_skipped);
	free(own);
	return prom_commit(&pf);
}
