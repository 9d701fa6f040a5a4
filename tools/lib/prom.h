/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A small writer of the Prometheus text exposition format (version 0.0.4)
 * for node_exporter's textfile collector: each write goes to a hidden temp
 * file next to the target (".NAME.XXXXXX", which the collector's *.prom
 * glob skips), then fflush + fsync + mode 0644 + rename + fsync of the
 * directory, so a scrape never sees half a file. Aggregation across nodes
 * is Prometheus' (or an OpenTelemetry collector's) job, not ours.
 *
 * Wiring a tool to --prom FILE (its struct cli_env's prom_path), as
 * tools/rxedrop/rxedrop.c does:
 *
 *  1. Export cumulative values. Counters and histogram buckets must never
 *     go down while the process lives: a tool that drains its BPF map every
 *     interval adds each interval into running totals and exports those.
 *  2. Write every interval and at exit; with no interval, every
 *     PROM_DEFAULT_PERIOD_S seconds (the tables on stdout stay at exit).
 *     Write once right after attach too, so the file exists from the start.
 *  3. Names: agentxdp_<tool>_<what>[_<base unit>]; counters end in _total;
 *     times are histograms in seconds (prom_hist_log2() turns log2 slots
 *     in ns or us into le buckets in seconds). Labels name bounded things
 *     (a reason, a function, a device); a set that grows with traffic
 *     (flows, QPs, peers, ports) goes through a struct prom_cap: at most N
 *     series on their own, the rest summed into one labelled PROM_OTHER
 *     (struct prom_totals does both for running totals of a drained map).
 *  4. One family at a time: prom_family() once, then all its samples.
 *     A family with no samples is fine (HELP/TYPE only).
 *  5. A file that cannot be written at start ends the tool (cli_setup(),
 *     prom_check()); a later failed write (a full disk) is reported once
 *     per run (cli_prom_err()) and the run goes on.
 *
 *	struct prom_file pf;
 *	struct prom_label l[] = { { "reason", "NO_SOCKET" } };
 *
 *	if (!prom_open(&pf, env.cli.prom_path)) {
 *		prom_family(&pf, "agentxdp_tool_drops_total", PROM_COUNTER, "...");
 *		prom_counter(&pf, "agentxdp_tool_drops_total", l, 1, n);
 *		prom_family(&pf, "agentxdp_tool_wait_seconds", PROM_HISTOGRAM, "...");
 *		prom_hist_log2(&pf, "agentxdp_tool_wait_seconds", l, 1,
 *			       slots, HIST_SLOTS, 1e-9, -1);	// ns slots
 *		err = prom_commit(&pf);		// 0 or -errno
 *	}
 */
#ifndef AGENTXDP_PROM_H
#define AGENTXDP_PROM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

/* seconds between writes of a tool run without an interval */
#define PROM_DEFAULT_PERIOD_S 10
/* the label value of the series that sums what a cap left out */
#define PROM_OTHER "other"
/* series of one family a struct prom_cap exports on their own by default */
#define PROM_CAP_DEFAULT 100

enum prom_type { PROM_COUNTER, PROM_GAUGE, PROM_HISTOGRAM };

struct prom_label {
	const char *name;	/* [a-zA-Z_][a-zA-Z0-9_]* */
	const char *value;	/* any UTF-8; escaped on output */
};

struct prom_file {
	FILE *f;
	char *path;		/* the target */
	char *tmp;		/* the temp file next to it */
};

/* opens a temp file in the target's directory; 0, or -errno (errno set) */
int prom_open(struct prom_file *pf, const char *path);
/* whether path can be written: a temp file opened next to it and removed,
 * the target untouched; 0 or -errno */
int prom_check(const char *path);
/* "# HELP" (escaped) and "# TYPE" of one metric family */
void prom_family(struct prom_file *pf, const char *name, enum prom_type type,
		 const char *help);
/* one sample, name{labels} value; counter names end in _total */
void prom_counter(struct prom_file *pf, const char *name,
		  const struct prom_label *labels, int nlabels, __u64 value);
void prom_gauge(struct prom_file *pf, const char *name,
		const struct prom_label *labels, int nlabels, double value);
/* a time in base units of unit_s seconds (1e-9: ns) as a gauge in
 * seconds, rounded to whole base units */
void prom_gauge_seconds(struct prom_file *pf, const char *name,
			const struct prom_label *labels, int nlabels,
			double value, double unit_s);
/*
 * One histogram series from log2 slots in a base unit of unit_s seconds
 * (1e-9 for ns, 1e-6 for us): slot 0 holds 0..1 and slot i [2^i, 2^(i+1))
 * as bpf/lib/hist.bpf.h fills them, so bucket i has le = 2^(i+1) * unit_s,
 * then le="+Inf". Every slot is written, empty or not, so the bucket set
 * never changes between writes. sum is the samples' sum in the base unit,
 * or negative for an estimate from the slot midpoints when the tool keeps
 * none. Writes name_bucket{labels,le}, name_sum{labels} (in seconds) and
 * name_count{labels}.
 */
void prom_hist_log2(struct prom_file *pf, const char *name,
		    const struct prom_label *labels, int nlabels,
		    const __u64 *slots, int nslots, double unit_s, double sum);
/*
 * What a tool can see, for a fleet to tell an idle agent from a blind one:
 * per source (a hook, a capture), whether it is up, and the one line that
 * says why not. Writes the families <prefix>_source_up{source} (1 or 0)
 * and <prefix>_source_info{source,reason,off_by_option} (always 1; reason
 * empty for a source that is up; off_by_option "true" when the user
 * turned it off, which the fleet's source-down alert leaves alone).
 */
struct prom_source {
	const char *name;	/* the label value: "latency", "egress", ... */
	bool up;
	bool off_by_option;	/* down because an option said so */
	const char *reason;	/* why it is down (one line), or NULL */
	bool absent;		/* down because what it watches is not on this
				 * host at all (no rdma_rxe): nothing broken */
};

void prom_sources(struct prom_file *pf, const char *prefix,
		  const struct prom_source *src, int n);

/* flush, fsync, mode 0644, rename over the target, fsync the directory,
 * close; 0, or -errno (errno set; the temp file removed, the target
 * untouched) */
int prom_commit(struct prom_file *pf);
/* drop the temp file and close, the target untouched */
void prom_abort(struct prom_file *pf);

/* s escaped for a label value (backslash, double quote, newline) or, with
 * label_value false, for HELP text (backslash, newline); truncated to fit,
 * always terminated; returns buf */
char *prom_escape(char *buf, size_t len, const char *s, bool label_value);

/*
 * Label cardinality cap: at most `limit` series of a family on their own,
 * the rest summed by the caller into one series labelled PROM_OTHER.
 * Membership is sticky: a series once exported keeps its own line for the
 * life of the process, and free places go to the largest newcomers first.
 * So neither a series nor "other" ever goes backwards (a series moving in
 * and out of "other" would look like counter resets), and what is exported
 * on its own is the top N as of when the cap filled.
 */
struct prom_cap {
	size_t limit;
	size_t n;
	char **keys;		/* the series exported on their own */
};

/* limit 0: PROM_CAP_DEFAULT */
void prom_cap_init(struct prom_cap *c, size_t limit);
void prom_cap_free(struct prom_cap *c);
/*
 * For n candidate series named by keys[i] (a string unique per series, e.g.
 * the label values joined by '\x1f') with weight[i] (their current value),
 * sets own[i]: true for those exported on their own, false for those the
 * caller sums into "other". Returns how many are false. A struct prom_cap
 * left zero (a static one) works too, with limit PROM_CAP_DEFAULT.
 */
size_t prom_cap_select(struct prom_cap *c, size_t n, const char *const *keys,
		       const double *weight, bool *own);

/*
 * The samples of one counter family after prom_cap_select(): series i
 * (labels[i * nlabels ...], values[i]) on its own when own[i], else summed
 * into the "other" series of its group (group[i] < ngroups, else left out;
 * group NULL: one group) labelled other[g * nlabels ...]. That series starts
 * from base[g] (what left earlier: destroyed QPs, say) and is written for
 * every group when base is given, else only when a series was summed into it.
 */
struct prom_fold {
	size_t n;
	int nlabels;
	const struct prom_label *labels;
	const __u64 *values;
	const bool *own;
	const int *group;
	size_t ngroups;
	const struct prom_label *other;
	const __u64 *base;
};

void prom_counters_fold(struct prom_file *pf, const char *name,
			const struct prom_fold *f);

/*
 * Running counter totals by label values through a struct prom_cap, the
 * "at most N series, the rest summed into other, membership sticky" rule
 * of a tool that drains its BPF map every report (tools/rxedrop/rxedrop.c,
 * tools/nfdrop/nfdrop.c): each report adds what it drained; a write exports the
 * totals, series not on their own summed into one whose every label is
 * PROM_OTHER (written only when there is such a series).
 */
struct prom_total {
	char *key;		/* the label values, each ended by '\x1f' */
	char *values;		/* the same, each ended by '\0' */
	__u64 count;		/* what the reports drained */
	__u64 once;		/* for the next write only (still in the map) */
};

struct prom_totals {
	const char *const *names;	/* nlabels label names */
	int nlabels;
	struct prom_cap cap;
	struct prom_total *t;
	size_t n, alloc;
};

/* names: nlabels label names, kept by reference; limit as prom_cap_init() */
void prom_totals_init(struct prom_totals *pt, const char *const *names,
		      int nlabels, size_t limit);
void prom_totals_free(struct prom_totals *pt);
/* n more for the series of these nlabels values (none may hold '\x1f');
 * with once, for the next prom_totals_write() only; 0 or -ENOMEM */
int prom_totals_add(struct prom_totals *pt, const char *const *values,
		    __u64 n, bool once);
/* the samples of counter family name (prom_family() is the caller's),
 * capped and folded as above; the once values are spent either way, also
 * with pf NULL (a write that could not be opened) */
void prom_totals_write(struct prom_file *pf, struct prom_totals *pt,
		       const char *name);

#endif
