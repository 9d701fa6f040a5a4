// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The Prometheus text-format writer of prom.h: each write to a hidden
 * temporary file renamed over the target; label sets capped, and running
 * totals for tools that drain their maps.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "prom.h"

static const char *const type_names[] = {
	[PROM_COUNTER] = "counter",
	[PROM_GAUGE] = "gauge",
	[PROM_HISTOGRAM] = "histogram",
};

char *prom_escape(char *buf, size_t len, const char *s, bool label_value)
{
	size_t o = 0;

	if (!len)
		return buf;
	for (; s && *s; s++) {
		char one[2] = { *s, 0 };
		const char *rep = one;
		size_t n;

		if (*s == '\\')
			rep = "\\\\";
		else if (*s == '\n')
			rep = "\\n";
		else if (*s == '"' && label_value)
			rep = "\\\"";
		n = strlen(rep);
		if (o + n >= len)
			break;
		memcpy(buf + o, rep, n);
		o += n;
	}
	buf[o] = 0;
	return buf;
}

/* the shorter of %.15g and %.17g that reads back as the same double */
static const char *fmt_double(char *buf, size_t len, double v)
{
	if (isnan(v))
		snprintf(buf, len, "NaN");
	else if (isinf(v))
		snprintf(buf, len, v > 0 ? "+Inf" : "-Inf");
	else if (snprintf(buf, len, "%.15g", v), strtod(buf, NULL) != v)
		snprintf(buf, len, "%.17g", v);
	return buf;
}

int prom_open(struct prom_file *pf, const char *path)
{
	char *d = strdup(path), *b = strdup(path);
	int fd, err;

	memset(pf, 0, sizeof(*pf));
	if (!d || !b || !(pf->path = strdup(path)) ||
	    asprintf(&pf->tmp, "%s/.%s.XXXXXX", dirname(d), basename(b)) < 0) {
		pf->tmp = NULL;
		err = ENOMEM;
		goto fail;
	}
	fd = mkstemp(pf->tmp);
	if (fd < 0) {
		err = errno;
		goto fail;
	}
	pf->f = fdopen(fd, "w");
	if (!pf->f) {
		err = errno;
		close(fd);
		unlink(pf->tmp);
		goto fail;
	}
	free(d);
	free(b);
	return 0;
fail:
	free(d);
	free(b);
	free(pf->path);
	free(pf->tmp);
	memset(pf, 0, sizeof(*pf));
	errno = err;
	return -err;
}

int prom_check(const char *path)
{
	struct prom_file pf;
	struct stat st;
	int err = prom_open(&pf, path);

	if (err)
		return err;
	prom_abort(&pf);
	/* a directory of that name would fail only at the rename */
	if (!stat(path, &st) && S_ISDIR(st.st_mode))
		return -EISDIR;
	return 0;
}

void prom_family(struct prom_file *pf, const char *name, enum prom_type type,
		 const char *help)
{
	char h[1024];

	fprintf(pf->f, "# HELP %s %s\n# TYPE %s %s\n", name,
		prom_escape(h, sizeof(h), help, false), name, type_names[type]);
}

/* name{labels[,extra]} value */
static void put_sample(struct prom_file *pf, const char *name, const char *suffix,
		       const struct prom_label *labels, int nlabels,
		       const char *extra, const char *value)
{
	char v[512];

	fputs(name, pf->f);
	fputs(suffix, pf->f);
	if (nlabels > 0 || extra) {
		fputc('{', pf->f);
		for (int i = 0; i < nlabels; i++)
			fprintf(pf->f, "%s%s=\"%s\"", i ? "," : "", labels[i].name,
				prom_escape(v, sizeof(v), labels[i].value, true));
		if (extra)
			fprintf(pf->f, "%s%s", nlabels > 0 ? "," : "", extra);
		fputc('}', pf->f);
	}
	fprintf(pf->f, " %s\n", value);
}

void prom_counter(struct prom_file *pf, const char *name,
		  const struct prom_label *labels, int nlabels, __u64 value)
{
	char v[24];

	snprintf(v, sizeof(v), "%llu", (unsigned long long)value);
	put_sample(pf, name, "", labels, nlabels, NULL, v);
}

void prom_gauge(struct prom_file *pf, const char *name,
		const struct prom_label *labels, int nlabels, double value)
{
	char v[32];

	put_sample(pf, name, "", labels, nlabels, NULL,
		   fmt_double(v, sizeof(v), value));
}

/* v base units in seconds; dividing by an exact 1e9 rounds once, where
 * multiplying by the inexact 1e-9 shows as 9.9999999999999991e-05 */
void prom_sources(struct prom_file *pf, const char *prefix,
		  const struct prom_source *src, int n)
{
	char up[96], info[96];

	snprintf(up, sizeof(up), "%s_source_up", prefix);
	snprintf(info, sizeof(info), "%s_source_info", prefix);
	prom_family(pf, up, PROM_GAUGE,
		    "Whether a source of this tool is up (1) or cannot see (0); "
		    "the reason is in _source_info");
	for (int i = 0; i < n; i++) {
		struct prom_label l = { "source", src[i].name };

		prom_gauge(pf, up, &l, 1, src[i].up);
	}
	prom_family(pf, info, PROM_GAUGE,
		    "Always 1: why a source cannot see (reason, empty when up), "
		    "whether an option turned it off, and whether what it watches "
		    "is absent from this host");
	for (int i = 0; i < n; i++) {
		struct prom_label l[] = {
			{ "source", src[i].name },
			{ "reason", src[i].up || !src[i].reason ? "" : src[i].reason },
			{ "off_by_option", src[i].off_by_option ? "true" : "false" },
			{ "absent", src[i].absent ? "true" : "false" },
		};

		prom_gauge(pf, info, l, 4, 1);
	}
}

static double to_seconds(double v, double unit_s)
{
	double per_s = (double)(long long)(1 / unit_s + 0.5), d;

	d = per_s * unit_s - 1;
	if (per_s >= 1 && d < 1e-12 && d > -1e-12)
		return v / per_s;
	return v * unit_s;
}

void prom_hist_log2(struct prom_file *pf, const char *name,
		    const struct prom_label *labels, int nlabels,
		    const __u64 *slots, int nslots, double unit_s, double sum)
{
	unsigned long long cum = 0;
	char le[48], v[32];
	double est = 0;

	for (int i = 0; i < nslots; i++) {
		cum += slots[i];
		/* the midpoint of [2^i, 2^(i+1)); slot 0 holds 0..1 */
		est += (double)slots[i] * (i ? 1.5 * ldexp(1, i) : 0.5);
		snprintf(le, sizeof(le), "le=\"%s\"",
			 fmt_double(v, sizeof(v), to_seconds(ldexp(1, i + 1), unit_s)));
		snprintf(v, sizeof(v), "%llu", cum);
		put_sample(pf, name, "_bucket", labels, nlabels, le, v);
	}
	snprintf(v, sizeof(v), "%llu", cum);
	put_sample(pf, name, "_bucket", labels, nlabels, "le=\"+Inf\"", v);
	put_sample(pf, name, "_sum", labels, nlabels, NULL,
		   fmt_double(v, sizeof(v), to_seconds(sum < 0 ? est : sum, unit_s)));
	snprintf(v, sizeof(v), "%llu", cum);
	put_sample(pf, name, "_count", labels, nlabels, NULL, v);
}

void prom_gauge_seconds(struct prom_file *pf, const char *name,
			const struct prom_label *labels, int nlabels,
			double value, double unit_s)
{
	char v[32];

	/* whole base units: a tool's resolution, not a double's last digits
	 * (0.0032440315000000003 of an interpolated quantile) */
	put_sample(pf, name, "", labels, nlabels, NULL,
		   fmt_double(v, sizeof(v), to_seconds(value >= 0 ? (double)(long long)(value + 0.5) :
							      value, unit_s)));
}

static void pf_free(struct prom_file *pf)
{
	free(pf->path);
	free(pf->tmp);
	memset(pf, 0, sizeof(*pf));
}

int prom_commit(struct prom_file *pf)
{
	int err = 0, fd;
	char *d;

	if (fflush(pf->f) || ferror(pf->f))
		err = errno ? errno : EIO;
	else if (fsync(fileno(pf->f)) || fchmod(fileno(pf->f), 0644))
		err = errno;
	if (fclose(pf->f) && !err)
		err = errno;
	if (!err && rename(pf->tmp, pf->path))
		err = errno;
	if (err) {
		unlink(pf->tmp);
	} else if ((d = strdup(pf->path))) {
		/* the rename itself survives a crash only with its directory */
		fd = open(dirname(d), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd >= 0) {
			fsync(fd);
			close(fd);
		}
		free(d);
	}
	pf_free(pf);
	errno = err;
	return -err;
}

void prom_abort(struct prom_file *pf)
{
	if (!pf->f)
		return;
	fclose(pf->f);
	unlink(pf->tmp);
	pf_free(pf);
}

void prom_cap_init(struct prom_cap *c, size_t limit)
{
	c->limit = limit ? limit : PROM_CAP_DEFAULT;
	c->n = 0;
	c->keys = NULL;
}

void prom_cap_free(struct prom_cap *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->keys[i]);
	free(c->keys);
	c->keys = NULL;
	c->n = 0;
}

static bool cap_has(const struct prom_cap *c, const char *key)
{
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->keys[i], key))
			return true;
	return false;
}

size_t prom_cap_select(struct prom_cap *c, size_t n, const char *const *keys,
		       const double *weight, bool *own)
{
	size_t others = 0;

	if (!c->limit)
		c->limit = PROM_CAP_DEFAULT;
	for (size_t i = 0; i < n; i++) {
		own[i] = cap_has(c, keys[i]);
		others += !own[i];
	}
	/* free places to the largest newcomers; ties to the smaller key */
	while (others && c->n < c->limit) {
		size_t best = n;

		if (!c->keys && !(c->keys = calloc(c->limit, sizeof(*c->keys))))
			break;
		for (size_t i = 0; i < n; i++) {
			if (own[i])
				continue;
			if (best == n || weight[i] > weight[best] ||
			    (weight[i] == weight[best] && strcmp(keys[i], keys[best]) < 0))
				best = i;
		}
		if (!(c->keys[c->n] = strdup(keys[best])))
			break;
		c->n++;
		/* the same key twice in one call is one series */
		for (size_t i = 0; i < n; i++)
			if (!own[i] && !strcmp(keys[i], keys[best])) {
				own[i] = true;
				others--;
			}
	}
	return others;
}

void prom_totals_init(struct prom_totals *pt, const char *const *names,
		      int nlabels, size_t limit)
{
	memset(pt, 0, sizeof(*pt));
	pt->names = names;
	pt->nlabels = nlabels;
	prom_cap_init(&pt->cap, limit);
}

void prom_totals_free(struct prom_totals *pt)
{
	for (size_t i = 0; i < pt->n; i++) {
		free(pt->t[i].key);
		free(pt->t[i].values);
	}
	free(pt->t);
	prom_cap_free(&pt->cap);
	pt->t = NULL;
	pt->n = pt->alloc = 0;
}

/* the series named key, created (count 0) when new; NULL: out of memory */
static struct prom_total *totals_find(struct prom_totals *pt, const char *key)
{
	struct prom_total *t;

	for (size_t i = 0; i < pt->n; i++)
		if (!strcmp(pt->t[i].key, key))
			return &pt->t[i];
	if (pt->n == pt->alloc) {
		size_t alloc = pt->alloc ? 2 * pt->alloc : 64;

		t = realloc(pt->t, alloc * sizeof(*t));
		if (!t)
			return NULL;
		pt->t = t;
		pt->alloc = alloc;
	}
	t = &pt->t[pt->n];
	memset(t, 0, sizeof(*t));
	t->key = strdup(key);
	t->values = strdup(key);
	if (!t->key || !t->values) {
		free(t->key);
		free(t->values);
		return NULL;
	}
	for (char *c = t->values; *c; c++)
		if (*c == '\x1f')
			*c = 0;
	pt->n++;
	return t;
}

int prom_totals_add(struct prom_totals *pt, const char *const *values,
		    __u64 n, bool once)
{
	struct prom_total *t;
	size_t len = 1;
	char *key, *o;

	for (int i = 0; i < pt->nlabels; i++)
		len += strlen(values[i]) + 1;
	key = o = malloc(len);
	if (!key)
		return -ENOMEM;
	for (int i = 0; i < pt->nlabels; i++)
		o += sprintf(o, "%s\x1f", values[i]);
	t = totals_find(pt, key);
	free(key);
	if (!t)
		return -ENOMEM;
	if (once)
		t->once += n;
	else
		t->count += n;
	return 0;
}

/* the labels of series t: its values, ended by '\0' one after the other */
static void totals_labels(const struct prom_totals *pt, const struct prom_total *t,
			  struct prom_label *l)
{
	const char *v = t->values;

	for (int i = 0; i < pt->nlabels; i++) {
		l[i] = (struct prom_label){ pt->names[i], v };
		v += strlen(v) + 1;
	}
}

void prom_counters_fold(struct prom_file *pf, const char *name,
			const struct prom_fold *f)
{
	size_t ng = f->group ? f->ngroups : 1;
	__u64 *sum = calloc(ng + 1, sizeof(*sum));
	bool *used = calloc(ng + 1, sizeof(*used));

	if (!sum || !used)
		goto out;
	for (size_t i = 0; i < f->n; i++) {
		size_t g = f->group ? (size_t)f->group[i] : 0;

		if (f->own[i]) {
			prom_counter(pf, name, f->labels + i * f->nlabels, f->nlabels,
				     f->values[i]);
		} else if (g < ng) {
			sum[g] += f->values[i];
			used[g] = true;
		}
	}
	for (size_t g = 0; g < ng; g++)
		if (f->base || used[g])
			prom_counter(pf, name, f->other + g * f->nlabels, f->nlabels,
				     sum[g] + (f->base ? f->base[g] : 0));
out:
	free(sum);
	free(used);
}

void prom_totals_write(struct prom_file *pf, struct prom_totals *pt,
		       const char *name)
{
	const char **keys = calloc(pt->n + 1, sizeof(*keys));
	double *weight = calloc(pt->n + 1, sizeof(*weight));
	bool *own = calloc(pt->n + 1, sizeof(*own));
	__u64 *values = calloc(pt->n + 1, sizeof(*values));
	struct prom_label *l = calloc((pt->n + 1) * pt->nlabels, sizeof(*l));
	struct prom_fold f = {
		.n = pt->n, .nlabels = pt->nlabels, .labels = l, .values = values,
		.own = own, .other = l + pt->n * pt->nlabels,
	};

	if (!pf || !keys || !weight || !own || !values || !l)
		goto out;
	for (size_t i = 0; i < pt->n; i++) {
		keys[i] = pt->t[i].key;
		values[i] = pt->t[i].count + pt->t[i].once;
		weight[i] = values[i];
		totals_labels(pt, &pt->t[i], l + i * pt->nlabels);
	}
	for (int j = 0; j < pt->nlabels; j++)
		l[pt->n * pt->nlabels + j] = (struct prom_label){ pt->names[j], PROM_OTHER };
	prom_cap_select(&pt->cap, pt->n, keys, weight, own);
	prom_counters_fold(pf, name, &f);
out:
	for (size_t i = 0; i < pt->n; i++)
		pt->t[i].once = 0;
	free(keys);
	free(weight);
	free(own);
	free(values);
	free(l);
}
