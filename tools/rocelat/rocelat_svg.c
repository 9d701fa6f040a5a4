// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * rocelat --svg: the latency story of a run in one picture. The BPF side
 * sends every sample (its time, latency and flow) through the samples
 * ring buffer; they are kept here and drawn at the end: a heatmap of all
 * flows' samples over time (when did everything get slow?), then one
 * panel per flow, worst first (the report's order: round trips before
 * local turnarounds, highest median first), with every sample as a dot
 * and the flow's p50 and p99 per time bucket as lines (when did this flow
 * get slow?). Percentiles here are exact (nearest rank over the kept
 * samples), not the report's log-linear histogram's.
 *
 * The SVG has no scripts, fonts or links, and says what it drew in
 * attributes (data-*) that tests and scripts can read: per flow its
 * identity, samples and exact p50/p99 in ns.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "rocelat.h"
#include "rocelat_backend.h"
#include "rocelat_svg.h"
#include "lib/cli.h"
#include "lib/hash.h"
#include "lib/roce_names.h"

/* samples kept: 24 bytes each; later ones are counted, not drawn */
#define SVG_MAX_SAMPLES		4000000
/* flows drawn in panels, worst first; all are in the heatmap */
#define SVG_MAX_PANELS		32
/* a panel with more samples than this draws one dot per pixel they hit
 * (the count of both is in the panel's label): a browser chokes on
 * millions of circles */
#define SVG_MAX_DOTS		20000
#define SVG_BUCKETS		48	/* time buckets of the p50/p99 lines */
#define HEAT_COLS		96
#define HEAT_ROWS		32

/* the page, in px */
#define PAGE_W		960
#define PLOT_X		78
#define PLOT_W		(PAGE_W - PLOT_X - 24)
#define HEAT_H		224
#define PANEL_H		120
#define PANEL_GAP	44

struct svg_sample {
	__u64 ts;
	__u64 lat;
	__u32 flow;
	__u32 pad;
};

struct svg_flow {
	struct roce_flow_id id;
	__u16 sport;
	bool turn;		/* a local turnaround's samples (any) */
	__u64 start, n;		/* its samples after sorting */
	__u64 p50, p99;		/* exact, ns */
};

struct rocelat_svg {
	struct rocelat_svg_cfg cfg;
	struct rocelat_backend *be;
	struct ring_buffer *rb;	/* the kernel's samples; NULL: each arrives as made */
	FILE *out;		/* tmp, renamed to cfg.path when written */
	char *tmp;
	struct svg_sample *s;
	__u64 n, cap, not_kept;
	struct svg_flow *f;
	int nf, fcap;
	int *hash;		/* flow index + 1, open addressing */
	int hcap;
	bool oom;
};

/* the scales of the drawing */
struct svg_axes {
	__u64 t0, t1;		/* first and last sample, ns */
	double lo, hi;		/* latency axis, log10(ns), whole decades */
};

/* ---- collecting ------------------------------------------------------ */


static __u32 svg_id_hash(const struct roce_flow_id *id, bool turn)
{
	return hash_bytes(id, sizeof(*id), turn ? 0x10000u : 0);
}

static bool svg_rehash(struct rocelat_svg *s, int hcap)
{
	int *h = calloc(hcap, sizeof(*h));

	if (!h)
		return false;
	for (int i = 0; i < s->nf; i++) {
		__u32 at = svg_id_hash(&s->f[i].id, s->f[i].turn) & (hcap - 1);

		while (h[at])
			at = (at + 1) & (hcap - 1);
		h[at] = i + 1;
	}
	free(s->hash);
	s->hash = h;
	s->hcap = hcap;
	return true;
}

/*
 * The flow of a sample: the report's (requester, responder, responder
 * QPN, mirror session), round trips apart from local turnarounds; its
 * port is the latest seen. -1 when out of memory.
 */
static int svg_flow_of(struct rocelat_svg *s, const struct rocelat_sample_event *e)
{
	__u32 at;
	bool turn = e->turn;

	if (2 * (s->nf + 1) > s->hcap && !svg_rehash(s, s->hcap ? 2 * s->hcap : 64))
		return -1;
	at = svg_id_hash(&e->id, turn) & (s->hcap - 1);
	for (; s->hash[at]; at = (at + 1) & (s->hcap - 1)) {
		struct svg_flow *f = &s->f[s->hash[at] - 1];

		if (f->turn == turn && !memcmp(&f->id, &e->id, sizeof(e->id))) {
			f->sport = e->sport;
			return s->hash[at] - 1;
		}
	}
	if (s->nf == s->fcap) {
		int cap = s->fcap ? 2 * s->fcap : 64;
		struct svg_flow *f = realloc(s->f, cap * sizeof(*f));

		if (!f)
			return -1;
		s->f = f;
		s->fcap = cap;
	}
	memset(&s->f[s->nf], 0, sizeof(s->f[0]));
	s->f[s->nf].id = e->id;
	s->f[s->nf].sport = e->sport;
	s->f[s->nf].turn = turn;
	s->hash[at] = s->nf + 1;
	return s->nf++;
}

static int svg_event(void *ctx, void *data, size_t len)
{
	const struct rocelat_sample_event *e = data;
	struct rocelat_svg *s = ctx;
	int fl;

	if (len < sizeof(*e))
		return 0;
	if (s->n == SVG_MAX_SAMPLES || s->oom) {
		s->not_kept++;
		return 0;
	}
	if (s->n == s->cap) {
		__u64 cap = s->cap ? 2 * s->cap : 4096;
		struct svg_sample *n = realloc(s->s, cap * sizeof(*n));

		if (!n) {
			s->oom = true;
			s->not_kept++;
			return 0;
		}
		s->s = n;
		s->cap = cap;
	}
	fl = svg_flow_of(s, e);
	if (fl < 0) {
		s->oom = true;
		s->not_kept++;
		return 0;
	}
	s->s[s->n++] = (struct svg_sample){ e->ts_ns, e->lat_ns, fl, 0 };
	return 0;
}

struct rocelat_svg *rocelat_svg_new(struct rocelat_backend *be,
				    const struct rocelat_svg_cfg *cfg)
{
	struct rocelat_svg *s = calloc(1, sizeof(*s));
	int err;

	if (!s) {
		cli_err("--svg: out of memory");
		return NULL;
	}
	s->cfg = *cfg;
	s->be = be;
	/* opened now: a file that cannot be written is said before the run */
	if (asprintf(&s->tmp, "%s.tmp", cfg->path) < 0) {
		cli_err("--svg: out of memory");
		free(s);
		return NULL;
	}
	s->out = fopen(s->tmp, "w");
	if (!s->out) {
		cli_err("--svg %s: %s", cfg->path, strerror(errno));
		goto fail;
	}
	err = be->samples_to(be, svg_event, s, &s->rb);
	if (err) {
		cli_err("--svg: ring buffer: %s", strerror(-err));
		fclose(s->out);
		unlink(s->tmp);
		goto fail;
	}
	return s;
fail:
	free(s->tmp);
	free(s);
	return NULL;
}

struct ring_buffer *rocelat_svg_rb(struct rocelat_svg *s)
{
	return s->rb;
}

void rocelat_svg_poll(struct rocelat_svg *s)
{
	if (s->rb)
		ring_buffer__consume(s->rb);
}

/* ---- percentiles and order ------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

/* the nearest-rank q-quantile of v[0..n-1] (sorted in place), n > 0 */
static __u64 svg_quantile(__u64 *v, __u64 n, double q)
{
	__u64 k = (__u64)ceil(q * n - 1e-9);

	qsort(v, n, sizeof(*v), cmp_u64);
	return v[(k ? k : 1) - 1];
}

static int cmp_sample(const void *a, const void *b)
{
	const struct svg_sample *x = a, *y = b;

	if (x->flow != y->flow)
		return x->flow < y->flow ? -1 : 1;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* worst first, as the report ranks: round trips, then the highest median */
static int cmp_flow(const void *a, const void *b)
{
	const struct svg_flow *x = a, *y = b;

	if (x->turn != y->turn)
		return x->turn ? 1 : -1;
	if (x->p50 != y->p50)
		return x->p50 < y->p50 ? 1 : -1;
	if (x->n != y->n)
		return x->n < y->n ? 1 : -1;
	return memcmp(&x->id, &y->id, sizeof(x->id));
}

/* samples grouped by flow in time order, each flow's p50/p99; then the
 * flows in the order drawn, each knowing where its samples are */
static bool svg_order(struct rocelat_svg *s)
{
	__u64 *tmp = malloc((s->n ? s->n : 1) * sizeof(*tmp));

	if (!tmp)
		return false;
	qsort(s->s, s->n, sizeof(*s->s), cmp_sample);
	for (__u64 i = 0; i < s->n; i++) {
		struct svg_flow *f = &s->f[s->s[i].flow];

		if (!f->n)
			f->start = i;
		f->n++;
	}
	for (int i = 0; i < s->nf; i++) {
		struct svg_flow *f = &s->f[i];

		for (__u64 k = 0; k < f->n; k++)
			tmp[k] = s->s[f->start + k].lat;
		f->p50 = svg_quantile(tmp, f->n, 0.50);
		f->p99 = svg_quantile(tmp, f->n, 0.99);
	}
	free(tmp);
	qsort(s->f, s->nf, sizeof(*s->f), cmp_flow);
	return true;
}

/* ---- drawing ---------------------------------------------------------- */

static void svg_esc(FILE *o, const char *t)
{
	for (; *t; t++) {
		switch (*t) {
		case '<': fputs("&lt;", o); break;
		case '>': fputs("&gt;", o); break;
		case '&': fputs("&amp;", o); break;
		case '"': fputs("&quot;", o); break;
		default:
			fputc((unsigned char)*t < 0x20 ? '?' : *t, o);
		}
	}
}

static const char *svg_unit_name(__u64 unit_ns)
{
	return unit_ns == 1 ? "ns" : unit_ns == 1000 ? "us" : "ms";
}

static double svg_x(const struct svg_axes *a, __u64 ts)
{
	return PLOT_X + (double)(ts - a->t0) * PLOT_W / (double)(a->t1 - a->t0);
}

/* y of latency ns in a band [top, top + h], slow at the top */
static double svg_y(const struct svg_axes *a, double ns, double top, double h)
{
	double l = log10(ns < 1 ? 1 : ns);

	return top + h - (l - a->lo) * h / (a->hi - a->lo);
}

/* a latency for a label, in the run's unit */
static void svg_fmt_lat(__u64 unit_ns, double ns, char *buf, size_t len)
{
	double v = ns / unit_ns;

	snprintf(buf, len, "%.*f %s", v < 10 && unit_ns > 1 ? 2 : v < 100 ? 1 : 0,
		 v, svg_unit_name(unit_ns));
}

static void svg_axes_of(const struct rocelat_svg *s, struct svg_axes *a)
{
	__u64 lo = ~0ULL, hi = 0;

	a->t0 = ~0ULL;
	a->t1 = 0;
	for (__u64 i = 0; i < s->n; i++) {
		const struct svg_sample *p = &s->s[i];

		a->t0 = p->ts < a->t0 ? p->ts : a->t0;
		a->t1 = p->ts > a->t1 ? p->ts : a->t1;
		lo = p->lat < lo ? p->lat : lo;
		hi = p->lat > hi ? p->lat : hi;
	}
	if (!s->n)
		a->t0 = lo = hi = 0;
	if (a->t1 <= a->t0)
		a->t1 = a->t0 + 1000000000ULL;	/* one instant: a second wide */
	a->lo = floor(log10(lo < 1 ? 1 : (double)lo));
	a->hi = ceil(log10(hi < 1 ? 1 : (double)hi) + 1e-9);
	if (a->hi <= a->lo)
		a->hi = a->lo + 1;
}

/* decade lines and labels of a band, and the time ticks under it */
static void svg_grid(FILE *o, const struct rocelat_svg *s,
		     const struct svg_axes *a, double top, double h)
{
	double span = (a->t1 - a->t0) / 1e9, step = pow(10, floor(log10(span)));
	char b[32];

	if (span / step < 3)
		step /= span / step < 1.5 ? 5 : 2;
	fprintf(o, "<g class=\"grid\">\n");
	for (double d = a->lo; d <= a->hi + 1e-9; d++) {
		double y = svg_y(a, pow(10, d), top, h);

		svg_fmt_lat(s->cfg.unit_ns, pow(10, d), b, sizeof(b));
		fprintf(o, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>"
			"<text x=\"%d\" y=\"%.1f\" class=\"yl\">%s</text>\n",
			PLOT_X, y, PLOT_X + PLOT_W, y, PLOT_X - 6, y + 4, b);
	}
	for (double t = 0; t <= span * (1 + 1e-9); t += step) {
		double x = PLOT_X + t * PLOT_W / span;

		fprintf(o, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
			"<text x=\"%.1f\" y=\"%.1f\" class=\"xl\">%g s</text>\n",
			x, top, x, top + h, x, top + h + 14, t);
	}
	fprintf(o, "</g>\n");
}

/* a heat colour for a fraction in (0, 1]: pale yellow to dark red */
static void svg_heat_colour(double f, char *buf, size_t len)
{
	unsigned char r, g, b;

	f = f < 0 ? 0 : f > 1 ? 1 : f;
	r = 255 - (unsigned char)(f > 0.5 ? (f - 0.5) * 2 * 128 : 0);
	g = 237 - (unsigned char)(f * 237);
	b = 160 - (unsigned char)(f * 160);
	snprintf(buf, len, "#%02x%02x%02x", r, g, b);
}

/* all flows' samples: time columns by log-latency rows, counts as colour */
static bool svg_heatmap(FILE *o, const struct rocelat_svg *s,
			const struct svg_axes *a, double top)
{
	__u64 *cell = calloc(HEAT_COLS * HEAT_ROWS, sizeof(*cell)), max = 0;
	double cw = (double)PLOT_W / HEAT_COLS, rh = (double)HEAT_H / HEAT_ROWS;
	char col[16];

	if (!cell)
		return false;
	for (__u64 i = 0; i < s->n; i++) {
		double fx = (double)(s->s[i].ts - a->t0) / (a->t1 - a->t0);
		double fy = (log10(s->s[i].lat < 1 ? 1 : (double)s->s[i].lat) - a->lo) /
			    (a->hi - a->lo);
		int c = fx >= 1 ? HEAT_COLS - 1 : (int)(fx * HEAT_COLS);
		int r = fy >= 1 ? HEAT_ROWS - 1 : (int)(fy * HEAT_ROWS);
		__u64 *v = &cell[c * HEAT_ROWS + r];

		max = ++*v > max ? *v : max;
	}
	fprintf(o, "<text x=\"%d\" y=\"%.0f\" class=\"h2\">All flows: samples per "
		"time and latency (darker: more)</text>\n", PLOT_X, top - 10);
	fprintf(o, "<g class=\"heatmap\" data-samples=\"%llu\">\n",
		(unsigned long long)s->n);
	fprintf(o, "<rect x=\"%d\" y=\"%.0f\" width=\"%d\" height=\"%d\" class=\"frame\"/>\n",
		PLOT_X, top, PLOT_W, HEAT_H);
	for (int c = 0; c < HEAT_COLS; c++)
		for (int r = 0; r < HEAT_ROWS; r++) {
			__u64 v = cell[c * HEAT_ROWS + r];

			if (!v)
				continue;
			svg_heat_colour(log((double)v + 1) / log((double)max + 1), col, sizeof(col));
			fprintf(o, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
				"fill=\"%s\" data-n=\"%llu\"/>\n", PLOT_X + c * cw,
				top + HEAT_H - (r + 1) * rh, cw + 0.3, rh + 0.3, col,
				(unsigned long long)v);
		}
	fprintf(o, "</g>\n");
	svg_grid(o, s, a, top, HEAT_H);
	free(cell);
	return true;
}

/* one percentile line of flow f over the time buckets that have samples */
static void svg_bucket_line(FILE *o, const struct rocelat_svg *s,
			    const struct svg_flow *f, const struct svg_axes *a,
			    double top, double q, const char *cls, __u64 *tmp)
{
	const struct svg_sample *p = &s->s[f->start];
	__u64 i = 0;

	fprintf(o, "<polyline class=\"%s\" points=\"", cls);
	for (int b = 0; b < SVG_BUCKETS && i < f->n; b++) {
		__u64 end = a->t0 + (__u64)((double)(a->t1 - a->t0) * (b + 1) / SVG_BUCKETS);
		__u64 m = 0;
		__u64 mid = a->t0 + (__u64)((double)(a->t1 - a->t0) * (b + 0.5) / SVG_BUCKETS);

		while (i < f->n && (p[i].ts <= end || b == SVG_BUCKETS - 1))
			tmp[m++] = p[i++].lat;
		if (m)
			fprintf(o, "%.1f,%.1f ", svg_x(a, mid),
				svg_y(a, (double)svg_quantile(tmp, m, q), top, PANEL_H));
	}
	fprintf(o, "\"/>\n");
}

/* the dots of flow f: every sample, or one per pixel past SVG_MAX_DOTS;
 * returns how many were drawn */
static __u64 svg_dots(FILE *o, const struct rocelat_svg *s, const struct svg_flow *f,
		      const struct svg_axes *a, double top, unsigned char *seen)
{
	__u64 drawn = 0;
	bool merge = f->n > SVG_MAX_DOTS;

	if (merge)
		memset(seen, 0, PLOT_W * (PANEL_H + 1));
	for (__u64 k = 0; k < f->n; k++) {
		const struct svg_sample *p = &s->s[f->start + k];
		double x = svg_x(a, p->ts), y = svg_y(a, (double)p->lat, top, PANEL_H);

		if (merge) {
			int px = (int)(x - PLOT_X), py = (int)(y - top);

			px = px < 0 ? 0 : px >= PLOT_W ? PLOT_W - 1 : px;
			py = py < 0 ? 0 : py > PANEL_H ? PANEL_H : py;
			if (seen[py * PLOT_W + px]++)
				continue;
		}
		fprintf(o, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"1.6\"/>\n", x, y);
		drawn++;
	}
	return drawn;
}

static void svg_flow_label(FILE *o, const struct rocelat_svg *s,
			   const struct svg_flow *f, double top)
{
	char a[ADDR_STRLEN], b[ADDR_STRLEN], p50[32], p99[32];

	svg_fmt_lat(s->cfg.unit_ns, (double)f->p50, p50, sizeof(p50));
	svg_fmt_lat(s->cfg.unit_ns, (double)f->p99, p99, sizeof(p99));
	fprintf(o, "<text x=\"%d\" y=\"%.0f\" class=\"h2\">%s -&gt; %s qpn 0x%x "
		"sport %u%s: %llu samples, p50 %s, p99 %s</text>\n",
		PLOT_X, top - 10,
		pkt_addr_str(f->id.family, f->id.req, a, sizeof(a)),
		pkt_addr_str(f->id.family, f->id.resp, b, sizeof(b)),
		f->id.qpn, f->sport, f->turn ? " (local turnaround)" : "",
		(unsigned long long)f->n, p50, p99);
}

/* panel i: flow f's dots, p50 and p99 per time bucket */
static bool svg_panel(FILE *o, const struct rocelat_svg *s, const struct svg_flow *f,
		      const struct svg_axes *a, double top, int i)
{
	char ra[ADDR_STRLEN], rb[ADDR_STRLEN];
	__u64 *tmp = malloc((f->n ? f->n : 1) * sizeof(*tmp));
	unsigned char *seen = malloc(PLOT_W * (PANEL_H + 1));
	__u64 drawn;

	if (!tmp || !seen) {
		free(tmp);
		free(seen);
		return false;
	}
	svg_flow_label(o, s, f, top);
	fprintf(o, "<g class=\"flow\" id=\"flow-%d\" data-rank=\"%d\" data-requester=\"%s\" "
		"data-responder=\"%s\" data-qpn=\"%u\" data-sport=\"%u\" data-kind=\"%s\" "
		"data-samples=\"%llu\" data-p50-ns=\"%llu\" data-p99-ns=\"%llu\">\n",
		i + 1, i + 1, pkt_addr_str(f->id.family, f->id.req, ra, sizeof(ra)),
		pkt_addr_str(f->id.family, f->id.resp, rb, sizeof(rb)), f->id.qpn,
		f->sport, f->turn ? "turnaround" : "rtt", (unsigned long long)f->n,
		(unsigned long long)f->p50, (unsigned long long)f->p99);
	fprintf(o, "<rect x=\"%d\" y=\"%.0f\" width=\"%d\" height=\"%d\" class=\"frame\"/>\n",
		PLOT_X, top, PLOT_W, PANEL_H);
	svg_grid(o, s, a, top, PANEL_H);
	fprintf(o, "<g class=\"samples\">\n");
	drawn = svg_dots(o, s, f, a, top, seen);
	fprintf(o, "</g>\n");
	svg_bucket_line(o, s, f, a, top, 0.50, "p50", tmp);
	svg_bucket_line(o, s, f, a, top, 0.99, "p99", tmp);
	if (drawn != f->n)
		fprintf(o, "<text x=\"%d\" y=\"%.0f\" class=\"note\" data-dots=\"%llu\">"
			"%llu samples drawn as %llu dots, one per pixel</text>\n",
			PLOT_X + PLOT_W, top - 10, (unsigned long long)drawn,
			(unsigned long long)f->n, (unsigned long long)drawn);
	fprintf(o, "</g>\n");
	free(tmp);
	free(seen);
	return true;
}

/* title, what was read, the time origin, what was left out */
static void svg_header(FILE *o, const struct rocelat_svg *s, const struct svg_axes *a)
{
	struct timespec rt, mono;
	char when[64] = "";
	__u64 lost = s->be->samples_lost(s->be);
	time_t sec;
	struct tm tm;
	__u64 t0 = a->t0;

	/* live times are CLOCK_MONOTONIC (bpf_ktime_get_ns): to wall time */
	if (!s->cfg.offline && !clock_gettime(CLOCK_REALTIME, &rt) &&
	    !clock_gettime(CLOCK_MONOTONIC, &mono))
		t0 += (rt.tv_sec - mono.tv_sec) * 1000000000LL + (rt.tv_nsec - mono.tv_nsec);
	sec = t0 / 1000000000ULL;
	if (s->n && gmtime_r(&sec, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
	fprintf(o, "<text x=\"%d\" y=\"26\" class=\"h1\">rocelat: RoCE v2 request -&gt; "
		"answer latency, ", PLOT_X);
	svg_esc(o, s->cfg.source);
	fprintf(o, "</text>\n<text x=\"%d\" y=\"46\" class=\"sub\">%llu samples, %d flows; "
		"time 0 = %s (%s); latency on a log scale; lines: p50 (blue) and p99 "
		"(red) per 1/%d of the time</text>\n", PLOT_X, (unsigned long long)s->n,
		s->nf, when[0] ? when : "no sample",
		s->cfg.offline ? "the capture's clock" : "first sample", SVG_BUCKETS);
	if (s->not_kept || lost)
		fprintf(o, "<text x=\"%d\" y=\"64\" class=\"note\" data-not-kept=\"%llu\" "
			"data-lost=\"%llu\">not drawn: %llu samples past %d kept, %llu the "
			"ring buffer had no room for</text>\n", PLOT_X,
			(unsigned long long)s->not_kept, (unsigned long long)lost,
			(unsigned long long)s->not_kept, SVG_MAX_SAMPLES,
			(unsigned long long)lost);
}

static const char svg_style[] =
"<style>\n"
"text{font-family:sans-serif;font-size:11px;fill:#222}\n"
".h1{font-size:16px;font-weight:bold}.h2{font-size:12px;font-weight:bold}\n"
".sub,.note{fill:#555}.note{text-anchor:end}\n"
".yl{text-anchor:end}.xl{text-anchor:middle;fill:#555}\n"
".grid line{stroke:#ddd;stroke-width:1}\n"
".frame{fill:none;stroke:#999}\n"
".samples circle{fill:#3a6ea5;fill-opacity:.6}\n"
".p50{fill:none;stroke:#1f3f99;stroke-width:2}\n"
".p99{fill:none;stroke:#c0392b;stroke-width:2}\n"
"</style>\n";

static bool svg_draw(FILE *o, const struct rocelat_svg *s)
{
	int panels = s->nf < SVG_MAX_PANELS ? s->nf : SVG_MAX_PANELS;
	double top = 100 + HEAT_H + PANEL_GAP;
	struct svg_axes a;
	int h;

	svg_axes_of(s, &a);
	h = (int)top + panels * (PANEL_H + PANEL_GAP) + 30;
	fprintf(o, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\" data-unit=\"%s\">\n%s"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n",
		PAGE_W, h, PAGE_W, h, svg_unit_name(s->cfg.unit_ns), svg_style);
	svg_header(o, s, &a);
	if (!svg_heatmap(o, s, &a, 100))
		return false;
	for (int i = 0; i < panels; i++, top += PANEL_H + PANEL_GAP)
		if (!svg_panel(o, s, &s->f[i], &a, top, i))
			return false;
	if (s->nf > panels)
		fprintf(o, "<text x=\"%d\" y=\"%.0f\" class=\"sub\">%d more flows, "
			"in the heatmap only</text>\n", PLOT_X, top - 20, s->nf - panels);
	fprintf(o, "</svg>\n");
	return true;
}

/* written next to the target and renamed: a reader never sees half */
static int svg_write(struct rocelat_svg *s)
{
	bool ok = svg_order(s);

	ok = ok && svg_draw(s->out, s);
	ok = !ferror(s->out) && ok;
	ok = !fclose(s->out) && ok;
	if (!ok || rename(s->tmp, s->cfg.path)) {
		cli_err("--svg %s: %s", s->cfg.path, ok ? strerror(errno) :
			"write failed (out of memory or space)");
		unlink(s->tmp);
		return 1;
	}
	return 0;
}

int rocelat_svg_finish(struct rocelat_svg *s)
{
	int ret;

	if (!s)
		return 0;
	if (s->rb)
		ring_buffer__consume(s->rb);
	if (s->oom)
		cli_err("--svg: out of memory after %llu samples; later ones not drawn",
			(unsigned long long)s->n);
	else if (s->not_kept)
		cli_err("--svg: %llu samples past the first %d not drawn",
			(unsigned long long)s->not_kept, SVG_MAX_SAMPLES);
	ret = svg_write(s);
	ring_buffer__free(s->rb);
	free(s->s);
	free(s->f);
	free(s->hash);
	free(s->tmp);
	free(s);
	return ret;
}
